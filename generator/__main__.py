"""Entry point for `python -m generator`."""

import sys

if __name__ == "__main__":  # importing this module (as tools may) must not run the CLI
    from generator.exitstatus import interrupted, sigint_handled

    with sigint_handled():  # from the first import on, so that an early Ctrl-C is never lost
        try:
            from generator.cli import main
        except KeyboardInterrupt:
            code = interrupted()
        else:
            code = main()
    sys.exit(code)
