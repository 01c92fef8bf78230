"""The analyses of the instrumented interpreter (``harness.run.interp_instrument``), one module
each, in the style of triton-viz's ``core/`` + ``clients/``: ``base`` holds what they share (the
options, the ``Recorder`` they write to, the ``Analysis`` interface: a hook per point of a launch);
``memcheck`` (bounds), ``races`` (stores other programs touch, spin locks), ``lanes`` (the lanes of
one program over each other: colliding stores, reads of other lanes' stores with no barrier), ``poison`` (masked
lanes of a load without ``other=``), ``tf32`` (fp32 dots rounded as tensor cores do),
``intwrap`` (signed integer arithmetic checked in 64 bits) and ``tuning`` (every autotuned
launch tuned afresh) each implement the hooks they need and keep what they saw in the
``Recorder``; none patches Triton itself. The interpreter's patched methods call every analysis whose
option is on, in that order."""
