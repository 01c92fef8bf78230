"""One way to patch another module's attributes and undo it: an undo stack.

``Patcher`` works like pytest's ``MonkeyPatch`` (a dependency the workers need not import):
``setattr`` and ``setitem`` remember what was there, ``undo()`` puts it all back, last patch
first, and ``with Patcher() as p:`` undoes on leaving. Every place the harness patches Triton,
torch or its own interpreter analyses goes through one, so that after a run each attribute is
exactly what it was: the object that was in the class's or module's own ``__dict__``, or
nothing where there was nothing (an inherited attribute stays inherited).

``for_good()`` is the one Patcher that is never undone: the interpreter fixes a worker asks for
by name (``triton_compat.interpreter_fixes``) hold for the rest of its process.
"""

from __future__ import annotations

from typing import Callable

_MISSING = object()


class Patcher:
    """An undo stack of patches (module docstring)."""

    def __init__(self):
        self._undo: list[Callable[[], None]] = []

    def setattr(self, obj, name: str, value) -> None:
        """``obj.name = value``, undone by putting back what ``obj``'s own ``__dict__`` held."""
        old = vars(obj).get(name, _MISSING) if hasattr(obj, "__dict__") else getattr(obj, name, _MISSING)
        setattr(obj, name, value)
        self._undo.append(lambda: _put_back(obj, name, old))

    def setitem(self, mapping, key, value) -> None:
        """``mapping[key] = value``, undone by putting back the old value (or removing the key)."""
        old = mapping.get(key, _MISSING)
        mapping[key] = value
        self._undo.append(lambda: mapping.pop(key, None) if old is _MISSING else mapping.__setitem__(key, old))

    def callback(self, undo: Callable[[], None]) -> None:
        """Run ``undo`` when the stack is undone (for a patch made through an API: a hook chain)."""
        self._undo.append(undo)

    def undo(self) -> None:
        """Every patch undone, last first; the stack is then empty and can be used again."""
        while self._undo:
            self._undo.pop()()

    def __enter__(self) -> "Patcher":
        return self

    def __exit__(self, *exc) -> bool:
        self.undo()
        return False


def _put_back(obj, name: str, old) -> None:
    if old is not _MISSING:
        setattr(obj, name, old)
    elif isinstance(getattr(obj, "__dict__", None), dict):
        obj.__dict__.pop(name, None)  # an instance or a module: what it inherits shows again
    elif name in vars(obj):
        delattr(obj, name)  # a class (its __dict__ is read-only)


_FOR_GOOD = Patcher()


def for_good() -> Patcher:
    """The process's Patcher whose patches are never undone."""
    return _FOR_GOOD
