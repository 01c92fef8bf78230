"""The probe worker's one kind of ``meta`` event, typed on both sides (``blackboard.Meta``): the
declaration once the file is loaded, the blackboard after each detector."""

import json
from types import SimpleNamespace

import pytest

from harness.probe.blackboard import Blackboard, Declared, Meta


def test_each_meta_event_crosses_as_json_and_back_unchanged():
    load = Meta(Declared({"n": 1000}, None, (1e-5, 1e-6), {"n": [1, 4096]}))
    after = Meta(blocks=[64, 128], seen=Blackboard(failing={"n": 7}, atomics=True, outcomes={("n", 7): "wrong"}))
    assert load.to_json() == {"sizes": {"n": 1000}, "deterministic": None, "tolerance": (1e-5, 1e-6),
                              "ranges": {"n": [1, 4096]}}  # "not declared" (None) is said, not left out
    assert after.to_json() == {"blocks": [64, 128], "seen": {"failing": {"n": 7}, "atomics": True}}  # LOCAL stays
    for meta in (load, after):
        wire = json.loads(json.dumps({"event": "meta", **meta.to_json(), "t": 1.5}))
        assert Meta.from_json(wire).to_json() == json.loads(json.dumps(meta.to_json()))  # envelope left out


def test_a_meta_event_with_an_unknown_or_partial_field_is_an_error():
    with pytest.raises(TypeError, match="unknown fields: launched"):
        Meta.from_json({"event": "meta", "blocks": [], "launched": ["k"]})
    with pytest.raises(TypeError):
        Meta.from_json({"sizes": {"n": 1}})  # a declaration is whole or absent
    with pytest.raises(TypeError):
        Meta.from_json({"seen": {"not_a_field": 1}})


def test_the_parent_reads_the_load_and_detector_meta_events_typed():
    from harness.probe import runner

    lines = [{"event": "meta", "sizes": {"n": 8}, "deterministic": True, "tolerance": None, "ranges": {"n": [1, 9]},
              "t": 1.0},
             {"event": "start", "detector": "reference", "t": 2.0},
             {"event": "meta", "blocks": [8], "seen": {"atomics": False}, "t": 3.0},
             {"event": "end", "detector": "reference", "t": 4.0}]
    ev = runner._events(SimpleNamespace(events=lines))
    assert ev.meta == {"sizes": {"n": 8}, "deterministic": True, "tolerance": None, "ranges": {"n": [1, 9]},
                       "blocks": [8], "seen": {"atomics": False}}
    with pytest.raises(TypeError):
        runner._events(SimpleNamespace(events=[{"event": "meta", "sizes": {"n": 8}, "t": 1.0}]))
