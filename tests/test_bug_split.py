"""The benchmark's blind split (harness/bugs/split.py): drawn by its seed, the test half frozen."""

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
