"""The invoice commands: `invoice check` and `invoice attach`, each a thin wrapper over one library function."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from generator.cli.options import BUNDLE_LIMITS, add_limits, add_trust_options, limits_of, trust_of

if TYPE_CHECKING:
    from generator.invoice.check import Committed
    from generator.invoice.read import Invoice


def _cmd_attach(args: argparse.Namespace) -> int:
    from generator.core.termtext import escape_terminal
    from generator.invoice.attach import attach_bundle

    trust = trust_of(args)
    written = attach_bundle(Path(args.invoice), Path(args.bundle), Path(args.out), trust=trust,
                            allow_unsigned=args.allow_unsigned, limits=limits_of(args))
    print(escape_terminal(str(written)))
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the `gpu-audit invoice` group and its subcommands."""
    p = sub.add_parser(
        "invoice",
        help="work with a provider's Factur-X / ZUGFeRD invoice PDF",
        description="Commands on a provider's electronic invoice (a PDF/A-3 carrying Factur-X or ZUGFeRD XML).",
    )
    group = p.add_subparsers(dest="invoice_command", metavar="SUBCOMMAND", required=True)
    _add_check(group)
    _add_attach(group)


def _add_attach(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`gpu-audit invoice attach`: the invoice, the bundle, the new file and the bundle's trust anchor."""
    p = group.add_parser(
        "attach",
        help="write a copy of the invoice with the verified bundle and its signed note attached",
        description="Verify BUNDLE as `gpu-audit verify` does (same trust options), then write OUT.pdf: a copy of "
        "INVOICE.pdf with two embedded, associated files (/AFRelationship /Supplement, listed in the catalog's "
        "/AF): the bundle as a zip (a folder is zipped deterministically; a .zip is embedded as it is), named "
        "BUNDLE-ID.zip, and its signed decision-note.pdf. The invoice's XML, its relationship and its XMP "
        "metadata are left as they are; INVOICE.pdf itself is never changed, and an existing OUT.pdf is refused. "
        "A signed invoice is refused: it is never modified, so send the bundle beside it. Exit 0 written, 1 the "
        "bundle does not verify (or no trust anchor is given), 2 anything else refused; nothing is written unless "
        "exit 0.",
    )
    p.add_argument("invoice", metavar="INVOICE.pdf", help="the Factur-X or ZUGFeRD invoice PDF (not signed)")
    p.add_argument("bundle", metavar="BUNDLE", help="bundle folder or .zip made by `gpu-audit build`")
    p.add_argument("-o", "--out", required=True, metavar="OUT.pdf", help="the new invoice copy (must not exist)")
    add_trust_options(p)
    add_limits(p, BUNDLE_LIMITS)
    p.set_defaults(handler=_cmd_attach)


def _origin(c: Committed) -> str:
    """Where the committed price comes from, as the decision says (nothing for a decision that does not)."""
    if c.price_source is None:
        return ""
    return f"; price: {c.price_source}" + (f" ({c.price_source_detail})" if c.price_source_detail else "")


def _due_line(inv: Invoice) -> str:
    """The amount the invoice asks to be paid, and what it is made of as the invoice states it."""
    if inv.due is None:
        return f"amount due: not stated (gross {inv.grand_total} {inv.currency})"
    parts = [f"gross {inv.grand_total}"] + [f"{name} {value}" for name, value in
                                            (("prepaid", inv.prepaid), ("rounding", inv.rounding)) if value is not None]
    return f"amount due {inv.due} {inv.currency} ({', '.join(parts)})"


def _cmd_check(args: argparse.Namespace) -> int:
    import json

    from generator.bundle.verdict import add_library_warnings
    from generator.core.termtext import escape_terminal
    from generator.invoice.check import check_invoice, committed_total, usd

    with warnings.catch_warnings(record=True) as caught:  # as `verify`: a line before the verdict, never after
        warnings.simplefilter("always")
        trust = trust_of(args)
        result = check_invoice(Path(args.invoice), Path(args.bundle), trust, allow_unsigned=args.allow_unsigned)
    add_library_warnings(result.report, caught)
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
        return 0 if result.ok else 1
    for warned in result.report.library_warnings:
        print(f"warning: {escape_terminal(warned)}")
    if not result.report.ok:
        for problem in result.report.problems[:20]:
            print(escape_terminal(str(problem)))
        print(f"FAILED: {escape_terminal(args.bundle)}: the bundle does not verify (see `gpu-audit verify`), so "
              "the invoice was not checked against it")
        return 1
    inv = result.invoice
    assert inv is not None  # check_invoice reads the invoice first; an unreadable one is exit 2
    print(escape_terminal(f"bundle {result.report.bundle_id}: verified, signer trusted" if result.report.trusted else
                          f"bundle {result.report.bundle_id}: verified, unsigned (--allow-unsigned)"))
    print(escape_terminal(f"invoice {inv.number} ({inv.source}): {len(inv.lines)} line(s), net {inv.net_total} "
                          f"{inv.currency}; tax {inv.tax_total} {inv.currency} (shown apart, not compared); gross "
                          f"{inv.grand_total} {inv.currency}"))
    print(escape_terminal(_due_line(inv)))
    for c in result.committed:
        # the decision's names: an unsigned bundle (--allow-unsigned) may hold anything in them
        print(escape_terminal(f"committed: {c.gpu}, {c.days}-day package: {c.lots} x {usd(c.price_per_lot_usd_minor)}"
                              f" = {usd(c.total_usd_minor)} ({', '.join(c.experiments)})" + _origin(c)))
    for what, amount in result.other_expenses:
        print(escape_terminal(f"other expense (registered apart, not a package, not compared): {what}: {usd(amount)}"))
    for f in result.findings:
        where = f"invoice line {f.line}" if f.line is not None else "invoice"
        print(escape_terminal(f"{where}: {f.code}: {f.message} [billed {f.billed}; {f.against} {f.committed}]"))
    total = usd(committed_total(result.committed))
    print(escape_terminal(f"compared: {inv.source}: only the invoice's XML was compared, not its printed page (check "
                          "that the page a person reads shows the same amounts)"))
    if result.findings:
        what = ("the invoice's own amounts do not add up or are not allowed" if
                all(f.against != "committed" for f in result.findings) else
                "the invoice does not bill what the decision committed")
        print(f"FAILED: {len(result.findings)} finding(s): {what} ({total} net of tax)")
        return 1
    print(escape_terminal(f"OK: invoice {inv.number} bills exactly the committed packages: {total} net of tax"))
    return 0


def _add_check(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`gpu-audit invoice check`: the invoice, the bundle and the bundle's trust anchor."""
    p = group.add_parser(
        "check",
        help="reconcile a provider's Factur-X / ZUGFeRD invoice with the bundle's committed packages",
        description="Verify BUNDLE as `gpu-audit verify` does (same trust options), read INVOICE (a Factur-X or "
        "ZUGFeRD PDF, or its CII XML, checked against the factur-x library's official XSD, parsed with entity "
        "resolution and network access off, in a bounded child process), and compare it line by line with the "
        "packages the decision committed, each counted once: GPU and duration, lots, unit price, line total, "
        "currency, and the total net of tax against the campaign's committed total. Tax is never compared with "
        "the decision, but the invoice's own sums are checked exactly (EN 16931): each tax category's rate (0 to "
        "100 %%) and tax (basis x rate), the tax total, the gross and the amount due (gross - prepaid + rounding, "
        "prepaid never negative). A PDF with more than one invoice XML among its attachments is refused. Only the "
        "XML is compared, never the printed page. Exit 0 when everything matches, 1 with findings (or a bundle "
        "that does not verify), 2 for an unreadable invoice or bundle.",
    )
    p.add_argument("invoice", metavar="INVOICE", help="the Factur-X or ZUGFeRD invoice PDF, or its CII XML")
    p.add_argument("bundle", metavar="BUNDLE", help="bundle folder or .zip, or its decision-note.pdf")
    add_trust_options(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=_cmd_check)
