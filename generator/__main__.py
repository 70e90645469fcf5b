"""Entry point of the `gpu-audit` command and of `python -m generator`."""

from typing import NoReturn


def _command() -> int:
    from generator.cli.main import main

    return main()


def entry() -> NoReturn:
    """Run the command line as a process: Ctrl-C is ours from before the CLI's first import to the exit."""
    from generator.cli.exitstatus import run_process

    run_process(_command)


if __name__ == "__main__":  # importing this module (as tools may) must not run the CLI
    entry()
