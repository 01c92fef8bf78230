"""The real-bug benchmark: entries in ``bugs/`` (``manifest``), their upstream code fetched from
the package registry at run time (``source``), and the probe and peers scored on them
(``board``). ``python -m harness bugs`` is the command line around it."""
