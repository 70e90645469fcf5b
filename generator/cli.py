"""Command line: parse arguments, call one library function, print, map the result to an exit status.

Only the standard library is imported at module level, so that `python -m generator measure ...`
runs on a GPU machine that has nothing but Python, PyTorch and NumPy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from generator import __version__
from generator.errors import AuditError, UsageError

Handler = Callable[[argparse.Namespace], int]


def _cmd_validate(args: argparse.Namespace) -> int:
    from generator.report import format_findings, findings_to_json
    from generator.validate import validate_campaign

    if args.max_findings < 1:
        raise UsageError("--max-findings must be at least 1")
    result = validate_campaign(Path(args.campaign_dir))
    if args.json:
        print(findings_to_json(result.findings, args.max_findings))
    else:
        print(format_findings(result.findings, subject=args.campaign_dir, max_findings=args.max_findings))
    return 1 if result.errors else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-audit",
        description="Audit a GPU benchmarking campaign: validate its evidence, recompute acceptance "
        "and rental cost, and render a signed decision note inside a checksummed bundle.",
    )
    parser.add_argument("--version", action="version", version=f"gpu-audit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "validate",
        help="check every file of a campaign folder against its schema",
        description="Parse every file of CAMPAIGN_DIR, validate it against its JSON Schema and report "
        "every problem with file, line, field, value, rule and fix. Exit 0 valid, 1 findings, 2 usage error.",
    )
    p.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder (see README)")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--max-findings", type=int, default=200, metavar="N",
                   help="list at most N findings, then count the rest (default 200)")
    p.set_defaults(handler=_cmd_validate)

    from generator import measure_cli

    measure_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except AuditError as exc:
        print(f"gpu-audit: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("gpu-audit: interrupted", file=sys.stderr)
        return 130
