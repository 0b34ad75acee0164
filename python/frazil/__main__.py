"""``python -m frazil``: see :mod:`frazil.cli`."""

import sys

from frazil.cli import main

if __name__ == "__main__":
    sys.exit(main())
