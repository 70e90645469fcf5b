"""Entry point for `python -m generator`."""

import sys

from generator.cli import main

if __name__ == "__main__":  # a spawned worker process imports this module too, and must not run the CLI
    sys.exit(main())
