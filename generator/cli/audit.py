"""The audit commands: `validate`, `check`, `cost` and `render`, each a thin wrapper over one library function."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import Any

from generator.cli.options import (
    CAMPAIGN_LIMITS,
    KEEP_FREED_MS,
    add_language_option,
    add_limits,
    add_trust_tsa_option,
    reading_campaigns,
    require_max_findings,
    trust_tsa_of,
)
from generator.core.errors import OutputExistsError, QuoteError, UsageError


def _cmd_validate(args: argparse.Namespace) -> int:
    from generator.audit.report import findings_to_json, format_findings
    from generator.audit.validate.validate import validate_campaign

    reading_campaigns(KEEP_FREED_MS)
    require_max_findings(args)
    result = validate_campaign(Path(args.campaign_dir))
    if args.json:
        print(findings_to_json(result.findings, args.max_findings))
    else:
        print(format_findings(result.findings, subject=args.campaign_dir, max_findings=args.max_findings))
    return 1 if result.errors else 0


def _exists(shown: str) -> OutputExistsError:
    return OutputExistsError(f"{shown} already exists; choose a new file name (nothing is overwritten)")


def _write_new(path: Path, text: str) -> None:
    """Write a new file in full or not at all; an existing path is refused, never overwritten."""
    from generator.core.system.safefiles import write_new_file

    if path.exists() or path.is_symlink():
        raise _exists(str(path))
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"folder {parent} does not exist; create it first")
    try:
        write_new_file(path, text.encode("utf-8"), what="decision file")
    except OutputExistsError:  # the name appeared meanwhile: the same message as when it was there before
        raise _exists(str(path)) from None


def _cmd_check(args: argparse.Namespace) -> int:
    import json

    from generator.audit.check import check_campaign
    from generator.audit.report import format_decision, format_findings, json_safe

    reading_campaigns(KEEP_FREED_MS)
    require_max_findings(args)
    if args.out is not None and (Path(args.out).exists() or Path(args.out).is_symlink()):
        raise _exists(args.out)  # before the work, as given on the command line
    result = check_campaign(Path(args.campaign_dir), trust_tsa=trust_tsa_of(args))
    text = json.dumps(result.decision, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if args.out is not None:
        _write_new(Path(args.out), text)
    if args.json:
        print(json_safe(text), end="")  # the same JSON, without input characters a terminal would apply
    else:
        print(format_decision(result.document))
        print(format_findings(result.findings, subject=args.campaign_dir, max_findings=args.max_findings))
    return 1 if result.errors else 0


def _cmd_cost(args: argparse.Namespace) -> int:
    from generator.audit.recompute.money import cost
    from generator.audit.report import format_quote, format_window
    from generator.core.system.resources import published_tariffs

    window_args = (args.window_start, args.window_end, args.timezone)
    if any(window_args) and not all(window_args):
        raise UsageError("--window-start, --window-end and --timezone go together")
    if args.gpu is None and not all(window_args):
        raise UsageError("give --gpu, --days and --lots for a package, or --window-start, --window-end and --timezone")
    if args.gpu is not None:
        if args.days is None or args.lots is None:
            raise UsageError("--gpu needs --days (3, 7 or 30) and --lots")
        tariffs = (_load_tariffs(args.tariffs) if args.tariffs
                   else _load_tariffs(None, published_tariffs().read_text("utf-8")))
        tariff = tariffs.get((args.gpu, args.days))
        if tariff is None:
            known = ", ".join(f"{g} {d} days" for g, d in sorted(tariffs))
            raise UsageError(f"no tariff for {args.gpu} over {args.days} days (known: {known}); "
                             "give --tariffs FILE with the provider's published price")
        try:
            quote = cost.quote(tariff, args.lots, args.accepted_results)
        except QuoteError as exc:  # the library names the quantity; the command line names its option
            option = "--lots" if args.lots < 1 else "--accepted-results"
            raise UsageError(f"{option}: {exc}") from None
        print(format_quote(quote))
    if all(window_args):
        hours = cost.window_hours(args.window_start, args.window_end, args.timezone, strict=True)
        if hours <= 0:
            raise UsageError("--window-end must be after --window-start")
        print(format_window(cost.coverage(hours)))
    return 0


def _load_tariffs(path: str | None, text: str | None = None) -> dict[tuple[str, int], Any]:
    from generator.audit.load.inputs.rows import TariffRow
    from generator.audit.load.readers.csvtable import parse_table, read_table
    from generator.audit.recompute.money.cost import tariffs_from_rows
    from generator.audit.report import format_findings
    from generator.audit.validate.tariffrules import table_findings

    table = (read_table(Path(path), path, "tariffs-row") if path
             else parse_table(text or "", "published tariffs", "tariffs-row"))
    rows = [TariffRow.of(r) for r in table.rows]
    errors = [f for f in table.findings + table_findings(rows, table.lines, table.file) if f.is_error]
    if errors:
        raise UsageError("the tariffs file is invalid:\n"
                         + format_findings(errors, subject=table.file, max_findings=20))
    return tariffs_from_rows(rows)


def _cmd_render(args: argparse.Namespace) -> int:
    from generator.render.page.note import EvidenceOf, render_decision_file

    evidence_of: EvidenceOf | None = None
    if args.campaign:
        from generator.cli.evidence import campaign_evidence

        reading_campaigns()  # the campaign is loaded and checked as `build` loads it
        evidence_of = partial(campaign_evidence, Path(args.campaign))
    written = render_decision_file(Path(args.decision), Path(args.outdir), evidence_of, language=args.lang)
    for path in written:
        print(path)
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `gpu-audit validate`, `check`, `cost` and `render`."""
    p = sub.add_parser(
        "validate",
        help="check every file of a campaign folder against its schema",
        description="Parse every file of CAMPAIGN_DIR, validate it against its JSON Schema and report "
        "every problem with file, line, field, value, rule and fix. Exit 0 valid, 1 findings, 2 usage error.",
    )
    p.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder (see docs/campaign-folder.md)")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.add_argument("--max-findings", type=int, default=200, metavar="N",
                   help="list at most N findings, then count the rest (default 200)")
    add_limits(p, CAMPAIGN_LIMITS)
    p.set_defaults(handler=_cmd_validate)

    _add_check(sub)

    p = sub.add_parser(
        "cost",
        help="price a package, or list the packages covering a window",
        description="The Lab's calcul_forfaits.py: package total = price per lot x lots in integer cents (a lot's "
        "GPUs are already in its price), and optionally the cost per distinct accepted result; or the 3-, 7- and "
        "30-day packages covering a campaign window in its time zone.",
    )
    p.add_argument("--gpu", help="GPU slug of the tariffs, for example rtx-4090 or b200")
    p.add_argument("--days", type=int, choices=(3, 7, 30), help="package duration in days")
    p.add_argument("--lots", type=int, help="number of lots")
    p.add_argument("--accepted-results", type=int, metavar="K",
                   help="distinct accepted results (positive); without it no cost per result is computed")
    p.add_argument("--tariffs", metavar="FILE", help="tariffs CSV (default: the two prices the seeds publish)")
    p.add_argument("--window-start", metavar="LOCAL",
                   help="window start, YYYY-MM-DDTHH:MM local time (or with its offset: +02:00)")
    p.add_argument("--window-end", metavar="LOCAL",
                   help="window end, YYYY-MM-DDTHH:MM local time (or with its offset: +02:00)")
    p.add_argument("--timezone", metavar="IANA", help="time zone of the window, for example Europe/Paris")
    p.set_defaults(handler=_cmd_cost)

    p = sub.add_parser(
        "render",
        help="render decision.json as decision-note.html and decision-note.pdf",
        description="Render a decision.json (from `gpu-audit check --out`) into a self-contained HTML note and a "
        "PDF/A-3a note in OUTDIR, with decision.json embedded in the PDF (and the raw results and protocol when "
        "--campaign is given). Existing files are refused. The same decision renders byte-identical files.",
    )
    p.add_argument("decision", metavar="DECISION_JSON", help="decision.json written by `gpu-audit check --out`")
    p.add_argument("-o", "--outdir", required=True, metavar="OUTDIR", help="folder to write the note into")
    p.add_argument("--campaign", metavar="CAMPAIGN_DIR", help="also embed this campaign's raw results and protocol")
    add_language_option(p)
    p.set_defaults(handler=_cmd_render)


def _add_check(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`gpu-audit check`: the campaign, where decision.json goes, the authorities the reader trusts, the limits."""
    p = sub.add_parser(
        "check",
        help="validate, then recompute acceptance, timings, memory and cost",
        description="Validate CAMPAIGN_DIR, then recompute every claim from the evidence (ID sets, format, quality "
        "rule, comparability, timings, memory, package cost) and answer the protocol's question. Writes nothing "
        "unless --out is given. Exit 0 no error finding, 1 error findings, 2 usage error.",
    )
    p.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder (see docs/campaign-folder.md)")
    p.add_argument("--json", action="store_true", help="print decision.json instead of the summary")
    p.add_argument("--out", metavar="DECISION_JSON", help="write decision.json to this new file")
    p.add_argument("--max-findings", type=int, default=200, metavar="N",
                   help="list at most N findings, then count the rest (default 200)")
    add_trust_tsa_option(p)
    add_limits(p, CAMPAIGN_LIMITS)
    p.set_defaults(handler=_cmd_check)
