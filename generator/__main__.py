"""Entry point for `python -m generator`."""

import sys

from generator.cli import main

if __name__ == "__main__":  # importing this module (as tools may) must not run the CLI
    sys.exit(main())
