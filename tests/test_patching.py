"""harness.run.patching: the one undo stack every patch of Triton (and torch) goes through."""

import types

import pytest

from harness.run.patching import Patcher


class Base:
    inherited = "base"


class Child(Base):
    own = "child"


def test_undo_puts_back_own_attributes_and_removes_added_ones_last_first():
    module = types.ModuleType("m")
    module.value = 1
    with Patcher() as p:
        p.setattr(Child, "own", "patched")
        p.setattr(Child, "inherited", "shadowed")
        p.setattr(module, "value", 2)
        p.setattr(module, "value", 3)  # patched twice: the first value comes back, not the second
        p.setattr(module, "added", 4)
        assert (Child.own, Child.inherited, module.value, module.added) == ("patched", "shadowed", 3, 4)
    assert Child.__dict__["own"] == "child" and "inherited" not in Child.__dict__ and Child.inherited == "base"
    assert module.value == 1 and not hasattr(module, "added")


def test_an_instance_attribute_set_by_a_patch_leaves_the_class_attribute_showing():
    obj = Child()
    p = Patcher()
    p.setattr(obj, "own", "mine")
    assert obj.own == "mine"
    p.undo()
    assert "own" not in vars(obj) and obj.own == "child"


def test_setitem_and_callbacks_are_undone_and_the_stack_is_reusable():
    d = {"a": 1}
    calls = []
    p = Patcher()
    p.setitem(d, "a", 2)
    p.setitem(d, "b", 3)
    p.callback(lambda: calls.append("hook removed"))
    p.undo()
    assert d == {"a": 1} and calls == ["hook removed"]
    p.setitem(d, "a", 5)
    p.undo()
    assert d == {"a": 1}


def test_an_exception_inside_the_block_still_undoes():
    module = types.ModuleType("m")
    module.value = 1
    with pytest.raises(ZeroDivisionError):
        with Patcher() as p:
            p.setattr(module, "value", 2)
            1 / 0
    assert module.value == 1
