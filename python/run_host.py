"""Start labdeck's Python instrument host (the runtime runs `python run_host.py`; see docs/python.md)."""
import os
import sys

if sys.version_info < (3, 9):
    sys.stderr.write("labdeck needs Python 3.9 or newer for Python instruments; this is %s (%s).\n"
                     % (sys.version.split()[0], sys.executable))
    sys.exit(3)

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _here)
from labdeck_host.host import main  # noqa: E402

# the lab's code must not find labdeck's own folder first on its path
if sys.path and os.path.abspath(sys.path[0]) == _here:
    del sys.path[0]

if __name__ == "__main__":
    main()
