"""`python -m app.sandbox.worker`: see main.py."""

import os
import sys

from app.sandbox.worker.main import main

if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stderr.flush()
    # Skip the interpreter's teardown (half a second with pandas & co. loaded): there is
    # nothing left to flush, and a closed session should free its slot at once.
    os._exit(status)
