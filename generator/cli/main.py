"""Command line: assemble the parser from the command modules, run one command, map the result to an exit status.

Only the standard library is imported at module level, so that `python -m generator measure ...`
runs on a GPU machine that has nothing but Python, PyTorch and NumPy. Each command group adds its own
subcommands: `audit` (validate, check, cost, render), `seal` (register), `bundle` (keygen, build, verify),
`measure`, `campaign`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from generator import __version__
from generator.cli.options import Handler, limits_of
from generator.core.limits import applied


def build_parser() -> argparse.ArgumentParser:
    """The `gpu-audit` parser with every command; the commands' own modules are imported here."""
    from generator.cli import audit, bundle, campaign, invoice, measure, seal
    from generator.cli.jsonerror import Parser

    parser: argparse.ArgumentParser = Parser(  # its subcommands' parsers are Parsers too (argparse's default)
        prog="gpu-audit",
        description="Audit a GPU benchmarking campaign: validate its evidence, recompute acceptance "
        "and rental cost, and render a signed decision note inside a checksummed bundle.",
    )
    parser.add_argument("--version", action="version", version=f"gpu-audit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    audit.add_parsers(sub)
    seal.add_parser(sub)
    bundle.add_parsers(sub)
    measure.add_parser(sub)
    campaign.add_parser(sub)
    invoice.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and give its exit status (see generator.cli.exitstatus: never a traceback)."""
    from generator.cli.exitstatus import run_command, sigint_handled

    argv = sys.argv[1:] if argv is None else list(argv)
    parsed: list[argparse.Namespace] = []

    def command() -> int:
        import logging

        # WeasyPrint logs each URL the note's fetcher refuses; refusing them is intended, so only errors show.
        logging.getLogger("weasyprint").setLevel(logging.ERROR)
        logging.getLogger("fontTools").setLevel(logging.ERROR)
        parsed.append(build_parser().parse_args(argv))  # the subcommands' modules are imported here
        args = parsed[0]
        handler: Handler = args.handler
        with applied(limits_of(args)):
            return handler(args)

    with sigint_handled():
        return run_command(argv, command, lambda: parsed[0] if parsed else None)
