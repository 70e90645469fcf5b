"""Command line: parse arguments, call one library function, print, map the result to an exit status.

Only the standard library is imported at module level, so that `python -m generator measure ...`
runs on a GPU machine that has nothing but Python, PyTorch and NumPy.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from generator import __version__
from generator.core.errors import UsageError
from generator.core.limits import DEFAULT as DEFAULT_LIMITS
from generator.core.limits import GiB, KiB, Limits, MiB, applied

Handler = Callable[[argparse.Namespace], int]

# The documented limits each command takes (README, "Limits and hostile input"); --max-findings is separate.
CAMPAIGN_LIMITS = ("max_file_bytes", "max_json_depth")
BUNDLE_LIMITS = ("max_file_bytes", "max_json_depth", "max_bundle_bytes", "max_zip_entries", "max_zip_ratio",
                 "max_pdf_bytes", "max_pdf_seconds")
_UNITS = {"": 1, "k": KiB, "kib": KiB, "m": MiB, "mib": MiB, "g": GiB, "gib": GiB}


def _positive_amount(text: str) -> int:
    """A positive whole number, optionally with a binary unit: 4096, 64KiB, 512M, 2GiB."""
    import re

    m = re.fullmatch(r"\s*([0-9]{1,19})\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number (units K, M, G accepted)")
    return int(m.group(1)) * _UNITS[unit]


def _add_limits(p: argparse.ArgumentParser, names: Sequence[str]) -> None:
    helps = {
        "max_file_bytes": "largest input file read whole, in bytes (K, M, G units; default 2G)",
        "max_json_depth": "deepest JSON nesting accepted (default 64)",
        "max_bundle_bytes": "largest total uncompressed size of a bundle zip (default 8G)",
        "max_zip_entries": "most entries in a bundle zip (default 200000)",
        "max_zip_ratio": "highest compression ratio of a zip entry over 1 MiB (default 200)",
        "max_pdf_bytes": "largest decision note parsed, in bytes (default 64M)",
        "max_pdf_seconds": "most processor seconds the decision note's parse may take (default 20)",
    }
    for name in names:
        flag = "--" + name.replace("_", "-")
        p.add_argument(flag, type=_positive_amount, default=getattr(DEFAULT_LIMITS, name), metavar="N",
                       help=helps[name])


def _limits(args: argparse.Namespace) -> Limits:
    """The limits the command line asks for: each --max-... option given, else its default."""
    values = {name: getattr(args, name) for name in DEFAULT_LIMITS.__dataclass_fields__ if hasattr(args, name)}
    try:
        return Limits(**values)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _reading_campaigns() -> None:
    """Leave Ctrl-C to Python while pyarrow reads the campaign, so that it always stops the command.

    pyarrow otherwise catches the signal during its long calls and, now and then (some 2 in 100 builds
    interrupted early, here), loses it: the build went on and exited 0. Without pyarrow's handler the
    interrupt is raised when the call returns, a fraction of a second later.
    """
    import pyarrow

    pyarrow.enable_signal_handlers(False)


def _cmd_validate(args: argparse.Namespace) -> int:
    from generator.audit.report import findings_to_json, format_findings
    from generator.audit.validate import validate_campaign

    _reading_campaigns()

    if args.max_findings < 1:
        raise UsageError("--max-findings must be at least 1")
    result = validate_campaign(Path(args.campaign_dir))
    if args.json:
        print(findings_to_json(result.findings, args.max_findings))
    else:
        print(format_findings(result.findings, subject=args.campaign_dir, max_findings=args.max_findings))
    return 1 if result.errors else 0


def _write_new(path: Path, text: str) -> None:
    """Write a new file atomically; an existing path is refused, never overwritten."""
    import os
    import tempfile

    from generator.core.errors import OutputExistsError

    if path.exists() or path.is_symlink():
        raise OutputExistsError(f"{path} already exists; choose a new file name (nothing is overwritten)")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"folder {parent} does not exist; create it first")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.link(tmp, path)  # fails if the name appeared meanwhile: never overwrite
    except FileExistsError:
        raise OutputExistsError(f"{path} already exists; choose a new file name (nothing is overwritten)") from None
    finally:
        os.unlink(tmp)


def _cmd_check(args: argparse.Namespace) -> int:
    import json

    from generator.audit.check import check_campaign
    from generator.audit.report import format_decision, format_findings, json_safe

    _reading_campaigns()
    if args.max_findings < 1:
        raise UsageError("--max-findings must be at least 1")
    if args.out is not None and (Path(args.out).exists() or Path(args.out).is_symlink()):
        from generator.core.errors import OutputExistsError

        raise OutputExistsError(f"{args.out} already exists; choose a new file name (nothing is overwritten)")
    result = check_campaign(Path(args.campaign_dir))
    text = json.dumps(result.decision, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if args.out is not None:
        _write_new(Path(args.out), text)
    if args.json:
        print(json_safe(text), end="")  # the same JSON, without input characters a terminal would apply
    else:
        print(format_decision(result.decision))
        print(format_findings(result.findings, subject=args.campaign_dir, max_findings=args.max_findings))
    return 1 if result.errors else 0


def _cmd_cost(args: argparse.Namespace) -> int:
    from generator.audit.recompute import cost
    from generator.audit.report import format_quote, format_window
    from generator.core.resources import published_tariffs

    window_args = (args.window_start, args.window_end, args.timezone)
    if any(window_args) and not all(window_args):
        raise UsageError("--window-start, --window-end and --timezone go together")
    if args.gpu is None and not all(window_args):
        raise UsageError("give --gpu, --days and --lots for a package, or --window-start, --window-end and --timezone")
    if args.gpu is not None:
        if args.days is None or args.lots is None:
            raise UsageError("--gpu needs --days (3, 7 or 30) and --lots")
        tariffs = _load_tariffs(args.tariffs) if args.tariffs else _load_tariffs(None, published_tariffs().read_text("utf-8"))
        tariff = tariffs.get((args.gpu, args.days))
        if tariff is None:
            known = ", ".join(f"{g} {d} days" for g, d in sorted(tariffs))
            raise UsageError(f"no tariff for {args.gpu} over {args.days} days (known: {known}); "
                             "give --tariffs FILE with the provider's published price")
        print(format_quote(cost.quote(tariff, args.lots, args.accepted_results)))
    if all(window_args):
        hours = cost.window_hours(args.window_start, args.window_end, args.timezone, strict=True)
        if hours <= 0:
            raise UsageError("--window-end must be after --window-start")
        print(format_window(cost.covering_packages(hours)))
    return 0


def _load_tariffs(path: str | None, text: str | None = None) -> dict[tuple[str, int], Any]:
    from generator.audit.readers.csvtable import parse_table, read_table
    from generator.audit.recompute.cost import tariffs_from_rows
    from generator.audit.report import format_findings

    table = read_table(Path(path), path, "tariffs-row") if path else parse_table(text or "", "published tariffs", "tariffs-row")
    errors = [f for f in table.findings if f.is_error]
    if errors:
        raise UsageError("the tariffs file is invalid:\n" + format_findings(errors, subject=table.file, max_findings=20))
    return tariffs_from_rows(table.rows)


def _cmd_render(args: argparse.Namespace) -> int:
    from generator.render.note import render_decision_file

    if args.campaign:
        _reading_campaigns()  # the campaign is loaded and checked as `build` loads it
    written = render_decision_file(Path(args.decision), Path(args.outdir),
                                   Path(args.campaign) if args.campaign else None)
    for path in written:
        print(path)
    return 0


PKCS12_PASSPHRASE_ENV = "GPU_AUDIT_PKCS12_PASSPHRASE"
KEY_PASSPHRASE_ENV = "GPU_AUDIT_KEY_PASSPHRASE"


def _passphrase(env: str, prompt: str) -> bytes | None:
    import getpass
    import os

    value = os.environ.get(env)
    if value is not None:
        return value.encode("utf-8")
    if sys.stdin.isatty():
        return getpass.getpass(prompt).encode("utf-8")
    return None


def _identity(args: argparse.Namespace) -> Any:
    from generator.bundle import signing

    chosen = [bool(args.key or args.cert), bool(args.pkcs12), bool(args.unsigned)]
    if sum(chosen) > 1:
        raise UsageError("give either --key and --cert, or --pkcs12, or --unsigned")
    if args.unsigned:
        return None
    readable = bool(getattr(args, "allow_readable_key", False))
    if args.pkcs12:
        return _key_loaded(lambda: signing.load_pkcs12_identity(
            Path(args.pkcs12), _passphrase(PKCS12_PASSPHRASE_ENV, "PKCS#12 passphrase: "), allow_readable_key=readable))
    if not (args.key and args.cert):
        raise UsageError("a bundle is signed: give --key KEY.pem --cert CERT.pem (make them once with "
                         "`gpu-audit keygen DIR`), or --pkcs12 FILE, or --unsigned to build an unsigned bundle")
    import os

    passphrase = os.environ.get(KEY_PASSPHRASE_ENV)
    return _key_loaded(lambda: signing.load_pem_identity(Path(args.key), Path(args.cert),
                                                         passphrase.encode() if passphrase else None,
                                                         allow_readable_key=readable))


def _key_loaded(load: Callable[[], Any]) -> Any:
    """The identity `load` gives; a key others can read is refused with the option that accepts it anyway."""
    from generator.core.errors import ReadableKeyError

    try:
        return load()
    except ReadableKeyError as exc:
        raise ReadableKeyError(f"{exc}, or give --allow-readable-key to use it as it is", exc.path, exc.mode
                               ) from None


def _cmd_keygen(args: argparse.Namespace) -> int:
    from generator.bundle.signing import keygen

    key, cert = keygen(Path(args.directory), args.name)
    print(f"private key: {key} (mode 0600; keep it secret, never put it in a bundle)")
    print(f"certificate: {cert}")
    return 0


def _progress_bar() -> Callable[[str, int, int], None]:
    """A one-line progress bar per stage on stderr (only used when stderr is a terminal)."""
    state = {"stage": ""}

    def show(stage: str, done: int, total: int) -> None:
        if stage != state["stage"] and state["stage"]:
            sys.stderr.write("\n")
        state["stage"] = stage
        if total:
            filled = int(30 * done / total)
            sys.stderr.write(f"\r{stage:<32} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}")
        else:
            sys.stderr.write(f"\r{stage}...")
        sys.stderr.flush()

    return show


def _leftovers(parent: Path, *, clean: bool) -> None:
    """Name (or, with --clean-leftovers, remove) what interrupted builds left beside the new bundle."""
    from generator.bundle.leftovers import find_leftovers, remove_leftovers
    from generator.core.termtext import escape_terminal

    if clean:
        for entry in remove_leftovers(parent):
            print(f"removed the leftover of an interrupted build: {escape_terminal(str(entry))}", file=sys.stderr)
        return
    found = find_leftovers(parent)
    if found:
        names = ", ".join(escape_terminal(str(p)) for p in found)
        print(f"warning: {len(found)} leftover(s) of interrupted builds: {names}; no running build holds them: "
              "remove them with `gpu-audit build --clean-leftovers ...`", file=sys.stderr)


def _cmd_build(args: argparse.Namespace) -> int:
    from generator.audit.report import format_decision, format_findings
    from generator.bundle.build import build_bundle
    from generator.core.termtext import escape_terminal

    _reading_campaigns()
    identity = _identity(args)
    _leftovers(Path(args.out).parent, clean=args.clean_leftovers)
    show = (not args.quiet) and sys.stderr.isatty()
    progress = _progress_bar() if show else None
    result = build_bundle(Path(args.campaign_dir), Path(args.out), identity, make_zip=args.zip,
                          strict=args.strict, organization=args.organization, progress=progress,
                          limits=_limits(args), tsa_url=args.tsa)
    if show:
        sys.stderr.write("\n")
    errors = result.check.errors
    if not result.built:
        print(format_findings(errors, subject=args.campaign_dir, max_findings=args.max_findings))
        print(f"not built: {len(errors)} error findings and --strict was given")
        return 1
    if not args.quiet:
        print(format_decision(result.check.decision))
        print(format_findings(result.check.findings, subject=args.campaign_dir, max_findings=args.max_findings))
    print(f"bundle {result.bundle_id}: {escape_terminal(str(result.path))}")
    if result.pdf is not None:
        print(f"decision note: {escape_terminal(str(result.pdf))}")
    if identity is None:
        print("warning: the bundle is UNSIGNED", file=sys.stderr)
    return 1 if errors else 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from generator.bundle.verdict import report_lines
    from generator.bundle.verify import load_trust, verify_bundle
    from generator.core.termtext import escape_terminal

    if args.max_findings < 1:
        raise UsageError("--max-findings must be at least 1")
    trust = load_trust(Path(args.trust) if args.trust else None, args.trust_fingerprint)
    report = verify_bundle(Path(args.bundle), trust=trust, allow_unsigned=args.allow_unsigned, limits=_limits(args))
    # Names in a bundle are the maker's: a CR or an escape sequence in one must not overwrite these lines.
    for problem in report.problems[: args.max_findings]:
        print(escape_terminal(str(problem)))
    if len(report.problems) > args.max_findings:
        print(f"... and {len(report.problems) - args.max_findings} more problems")
    for line in report_lines(report):
        print(line)
    return 0 if report.ok else 1


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
    _add_limits(p, CAMPAIGN_LIMITS)
    p.set_defaults(handler=_cmd_validate)

    p = sub.add_parser(
        "check",
        help="validate, then recompute acceptance, timings, memory and cost",
        description="Validate CAMPAIGN_DIR, then recompute every claim from the evidence (ID sets, format, quality "
        "rule, comparability, timings, memory, package cost) and answer the protocol's question. Writes nothing "
        "unless --out is given. Exit 0 no error finding, 1 error findings, 2 usage error.",
    )
    p.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder (see README)")
    p.add_argument("--json", action="store_true", help="print decision.json instead of the summary")
    p.add_argument("--out", metavar="DECISION_JSON", help="write decision.json to this new file")
    p.add_argument("--max-findings", type=int, default=200, metavar="N",
                   help="list at most N findings, then count the rest (default 200)")
    _add_limits(p, CAMPAIGN_LIMITS)
    p.set_defaults(handler=_cmd_check)

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
    p.add_argument("--window-start", metavar="LOCAL", help="window start, YYYY-MM-DDTHH:MM local time")
    p.add_argument("--window-end", metavar="LOCAL", help="window end, YYYY-MM-DDTHH:MM local time")
    p.add_argument("--timezone", metavar="IANA", help="time zone of the window, for example Europe/Paris")
    p.set_defaults(handler=_cmd_cost)

    p = sub.add_parser(
        "render",
        help="render decision.json as decision-note.html and decision-note.pdf",
        description="Render a decision.json (from `gpu-audit check --out`) into a self-contained HTML note and a "
        "PDF/A-3b note in OUTDIR, with decision.json embedded in the PDF (and the raw results and protocol when "
        "--campaign is given). Existing files are refused. The same decision renders byte-identical files.",
    )
    p.add_argument("decision", metavar="DECISION_JSON", help="decision.json written by `gpu-audit check --out`")
    p.add_argument("-o", "--outdir", required=True, metavar="OUTDIR", help="folder to write the note into")
    p.add_argument("--campaign", metavar="CAMPAIGN_DIR", help="also embed this campaign's raw results and protocol")
    p.set_defaults(handler=_cmd_render)

    p = sub.add_parser(
        "keygen",
        help="make a new RSA 3072-bit signing key and self-signed certificate",
        description="Write DIR/signer-key.pem (RSA 3072-bit, PKCS#8, mode 0600) and DIR/signer.pem, a self-signed "
        "certificate. RSA because the note stays PDF 1.7 (PDF/A-3), where ECDSA is not defined, and pdfsig and "
        "Adobe Reader verify it. Existing files are refused.",
    )
    p.add_argument("directory", metavar="DIR", help="folder for the key and certificate")
    p.add_argument("--name", default="gpu-audit signer", help="organisation name in the certificate")
    p.set_defaults(handler=_cmd_keygen)

    p = sub.add_parser(
        "build",
        help="validate, recompute, render, sign and write the audit bundle",
        description="Build the audit bundle of CAMPAIGN_DIR: a BagIt 1.0 bag with the signed PDF note, the HTML "
        "note, decision.json, findings.json and a byte-for-byte copy of every validated input, plus MANIFEST.json, "
        "its detached signature and the signer certificate. Written atomically; an existing path is refused. "
        f"A PKCS#12 passphrase comes from ${PKCS12_PASSPHRASE_ENV} or a prompt; an encrypted PEM key's from "
        f"${KEY_PASSPHRASE_ENV}. Exit 0 clean, 1 error findings (still built unless --strict), 2 not built.",
    )
    p.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder (see README)")
    p.add_argument("-o", "--out", required=True, metavar="BUNDLE_DIR", help="new bundle folder (or .zip with --zip)")
    p.add_argument("--key", metavar="KEY.pem", help="RSA private key of 2048 bits or more (PEM)")
    p.add_argument("--cert", metavar="CERT.pem", help="its certificate (PEM)")
    p.add_argument("--pkcs12", metavar="FILE", help="key and certificate in one PKCS#12 file")
    p.add_argument("--unsigned", action="store_true", help="build without signatures (the note says so)")
    p.add_argument("--allow-readable-key", action="store_true",
                   help="use a private key (or PKCS#12 file) that group or others can read; refused otherwise")
    p.add_argument("--zip", action="store_true", help="write one .zip file instead of a folder")
    p.add_argument("--strict", action="store_true", help="refuse to build when there are error findings")
    p.add_argument("--organization", metavar="NAME", help="bag-info Source-Organization (default: the signer)")
    p.add_argument("--tsa", metavar="URL", help="RFC 3161 time-stamping authority that timestamps the PDF signature "
                   "(PAdES B-T): the one network request gpu-audit makes, and only when given")
    p.add_argument("--clean-leftovers", action="store_true",
                   help="first remove what interrupted builds left beside BUNDLE_DIR (hidden .NAME.tmp-* folders, "
                   ".NAME.partial and .NAME.gpu-audit-lock files that no running build holds)")
    p.add_argument("--quiet", action="store_true", help="print only where the bundle is; no progress")
    p.add_argument("--max-findings", type=int, default=200, metavar="N", help="list at most N findings")
    _add_limits(p, CAMPAIGN_LIMITS)
    p.set_defaults(handler=_cmd_build)

    p = sub.add_parser(
        "verify",
        help="check a bundle or a decision note: files, checksums, signatures, signer",
        description="Check a bundle folder or zip, or a decision-note.pdf on its own: every file listed in the signed "
        "MANIFEST.json and nothing else, every checksum, both signatures, the cross-checks (the PDF's embedded "
        "decision.json, the bundle ID, the input fingerprints), and the signer's certificate fingerprint against "
        "--trust or --trust-fingerprint. Exit 0 only when all hold and the signer is trusted (or the bundle is "
        "unsigned and --allow-unsigned is given); 1 for a problem, or when no trust anchor is given (signer not "
        "checked); 2 for usage errors.",
    )
    p.add_argument("bundle", metavar="BUNDLE", help="bundle folder or .zip")
    p.add_argument("--trust", metavar="CERT.pem", help="the certificate the signer must be (or be issued by)")
    p.add_argument("--trust-fingerprint", metavar="SHA256:HEX",
                   help="the SHA-256 fingerprint of the signer's certificate, obtained from the signer by another channel")
    p.add_argument("--allow-unsigned", action="store_true",
                   help="accept a bundle built with --unsigned (not with --trust or --trust-fingerprint)")
    p.add_argument("--max-findings", type=int, default=200, metavar="N", help="list at most N problems")
    _add_limits(p, BUNDLE_LIMITS)
    p.set_defaults(handler=_cmd_verify)

    from generator.cli import campaign as campaign_cli
    from generator.cli import measure as measure_cli

    measure_cli.add_parser(sub)
    campaign_cli.add_parser(sub)
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
        with applied(_limits(args)):
            return handler(args)

    with sigint_handled():
        return run_command(argv, command, lambda: parsed[0] if parsed else None)
