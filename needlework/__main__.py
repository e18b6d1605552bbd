"""``python -m needlework``: the command-line interface."""

import sys

from needlework.cli import main

if __name__ == "__main__":
    sys.exit(main())
