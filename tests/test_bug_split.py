"""The benchmark's blind split (harness/bugs/split.py): drawn by its seed, the test half frozen."""

import importlib.util
import re

from harness.bugs import manifest, split


def _entries():
    return [manifest.read(f) for f in manifest.discover(manifest.root())]


def test_the_split_is_what_its_seed_draws():
    s = split.read()
    assert s is not None, "bugs/split.toml is missing"
    drawn_on = [e for e in _entries() if e.slug in s.test or e.slug in s.dev]
    halves = split.assign([split.Item(e.slug, e.project, e.defect) for e in drawn_on], s.seed)
    assert sorted(k for k, v in halves.items() if v == "test") == sorted(s.test)
    assert sorted(k for k, v in halves.items() if v == "dev") == sorted(s.dev)


def test_the_halves_are_balanced_by_project_and_defect_class():
    s = split.read()
    entries = [e for e in _entries() if s.of(e.slug) != "first-run"]
    assert abs(len(s.test) - len(s.dev)) <= 1
    for key in ("project", "defect"):
        values = {getattr(e, key) for e in entries}
        for v in values:
            n = {h: sum(1 for e in entries if getattr(e, key) == v and s.of(e.slug) == h) for h in ("dev", "test")}
            assert abs(n["dev"] - n["test"]) <= 2, (key, v, n)


def test_the_test_half_is_frozen():
    s = split.read()
    root = manifest.root()
    for slug in s.test:
        now = split.digest(root / slug)
        assert now in s.allowed(slug), (
            f"bugs/{slug} is in the frozen test split and its files changed; a documented error "
            "in the entry goes in bugs/split.toml's [[erratum]] with the new hashes, in a commit of its own")


def test_every_later_entry_was_picked_before_it_ran():
    s = split.read()
    picked = {p["entry"] for p in s.first_run}
    for e in _entries():
        if s.of(e.slug) == "first-run":
            assert e.slug in picked, f"bugs/{e.slug} is neither in the split nor in its [[first_run]] list"
    for p in s.first_run:
        assert p.get("why"), f"first-run entry {p['entry']} says not why it was picked"


def test_the_draw_depends_on_the_seed():
    items = [split.Item(f"e{i}", f"p{i % 5}", f"d{i % 7}") for i in range(40)]
    a, b = split.assign(items, 1), split.assign(items, 2)
    assert a == split.assign(items, 1)
    assert a != b
    assert sum(v == "test" for v in a.values()) == 20


def test_every_erratum_says_what_was_wrong_why_and_what_changed():
    s = split.read()
    for e in s.errata:
        assert e.get("entry") in s.test, f"an erratum for {e.get('entry')!r}, not an entry of the frozen test half"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(e.get("date", ""))), e.get("entry")
        for key in ("wrong", "why", "changed"):
            assert str(e.get(key, "")).strip(), f"erratum for {e['entry']} says nothing under {key!r}"
        assert sorted(e.get("sha256", {})) == sorted(split.FROZEN_FILES), e["entry"]


def test_the_vllm_decode_erratum_no_empty_sequence_at_any_fuzzed_length():
    # the erratum of 2026-11-29: seq_len < page_size drew lengths of 0 and below, which both versions
    # (correctly) turn into 0/0 = NaN; every length drawn over FUZZ's seq_len range is now >= 1
    import torch
    path = manifest.root() / "vllm-decode-attention-page-offset-int32" / "probe.py"
    spec = importlib.util.spec_from_file_location("vllm_decode_glue", path)
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    lo, hi = glue.FUZZ["seq_len"]
    for seq_len in range(lo, hi + 1):
        for seed in range(3):
            lens = glue.make_inputs(device="cpu", gen=torch.Generator().manual_seed(seed), batch=6,
                                    heads=1, head_dim=4, seq_len=seq_len, num_pages=6 * 200)["seq_lens"]
            assert 1 <= int(lens.min()) and int(lens.max()) <= seq_len, (seq_len, seed, lens.tolist())
