"""The live half of the pytest plugin (``harness.sanitize.pytest_plugin``), registered only when
``--casebook-sanitize`` is given: the session around the whole run, each test's findings on its
report, the summary at the end."""

from __future__ import annotations

import pytest

from harness.sanitize import RESULTS_ENV
from harness.sanitize import findings as F
from harness.sanitize.session import Config, Session, Sink

SECTION = "casebook sanitize"


class State:
    def __init__(self, config):
        import os

        self.mode = config.getoption("casebook_sanitize")
        cfg = Config(tf32=config.getoption("casebook_sanitize_tf32"),
                     orders=config.getoption("casebook_sanitize_orders"),
                     checks=not config.getoption("casebook_sanitize_no_checks"))
        self.results = os.environ.get(RESULTS_ENV) or None  # ``python -m harness sanitize`` prints the summary
        self.session = Session(cfg, sink=Sink(self.results) if self.results else None)
        try:
            self.session.__enter__()
        except RuntimeError as e:  # this Triton's interpreter lacks what the instrumentation needs
            self.session = None
            raise pytest.UsageError(f"--casebook-sanitize: {e}") from None
        self.session_checks = cfg.checks
        self.all_hits: list[dict] = []
        self.launches = 0
        config.add_cleanup(self.close)

    def close(self):
        if self.session is not None:
            self.launches = self.session.launches
            self.session.close_sink()
            self.session.__exit__(None, None, None)
            self.session = None

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self._take()  # launches between tests (collection, module scope) are nobody's
        self.session.context, self.session.root = item.nodeid, str(item.path)
        try:
            yield
        finally:
            self.session.context, self.session.root = "", None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        hits = self._take()
        if not hits:
            return
        found = F.collect(hits)
        if F.errors(found) and self.mode == "fail" and not rep.failed:
            rep.outcome = "failed"
            rep.longrepr = F.headline(found) + "\n" + F.summary(found)
        else:
            rep.sections.append((f"{SECTION} ({rep.when})", F.summary(found)))

    def _take(self) -> list:
        hits = self.session.taken()
        self.all_hits.extend(hits)
        return hits

    def pytest_sessionfinish(self, session, exitstatus):
        self._take()
        found = F.collect(self.all_hits, cases=False)
        stray = [f for f in F.errors(found) if not f.tests]
        if stray and self.mode == "fail" and session.exitstatus == 0:
            session.exitstatus = 1

    def pytest_terminal_summary(self, terminalreporter):
        self.launches = self.session.launches if self.session else self.launches
        if self.results:  # the sanitize command prints its own summary after pytest's
            return
        found = F.collect(self.all_hits)
        terminalreporter.section(SECTION)
        terminalreporter.write_line(F.summary(found, self.launches, checks=self.session_checks))
