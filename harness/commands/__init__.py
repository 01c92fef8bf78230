"""The commands, one module each; each module has ``register(subparsers)`` and ``run(args)``.

``harness.cli`` imports every module named here; nothing else imports a command.
Importing a command module must not import torch or triton (``--help`` and ``list``
stay fast): heavy imports go inside the functions that run kernels.
"""

COMMANDS = ["list", "case", "record", "bench", "new", "check", "detect", "report", "probe", "bugs", "sanitize", "lint"]
