import sys

from harness.cli import main

sys.exit(main(restore_signals=False))  # the process ends with the command: a late signal changes nothing
