"""Writes its process id to the file named by its argument, then waits to be interrupted."""

import os
import sys
import time

with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
time.sleep(600)
