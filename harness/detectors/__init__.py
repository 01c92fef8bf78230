"""The detectors: the checks that could have caught each case's bug.

``base`` is the interface (``Detector``, ``Evidence``, ``DetectorResult``, the statuses); each
other module but ``registry``, ``session`` and ``viz_worker`` holds one detector (the
compute-sanitizer one, two); ``registry`` finds them and scores them; ``session`` makes
the runs they read and keeps the records.
"""
