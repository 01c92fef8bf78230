"""fresh_tuning: every launch of an autotuned kernel tunes afresh (its tuning cache emptied
before the launch), on every backend; ``Recorder.retuned`` counts those launches. A config
tuned for one launch is then never reused for another that shares its autotune key."""

from __future__ import annotations

from harness.run.analyses.base import Analysis, Options


class FreshTuning(Analysis):
    name = __name__.rpartition(".")[2]  # the module's name

    def on(self, options: Options) -> bool:
        return options.fresh_tuning

    def autotune(self, rec, tuner) -> None:
        tuner.cache.clear()
        rec.retuned += 1
