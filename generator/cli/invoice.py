"""The invoice commands: `invoice check` and `invoice attach`, each a thin wrapper over one library function."""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from generator.cli.options import BUNDLE_LIMITS, add_limits, add_trust_options, limits_of, trust_of
from generator.core.termtext import counted

if TYPE_CHECKING:
    from generator.invoice.check import BilledLine, Committed, InvoiceCheck, InvoiceFinding
    from generator.invoice.document import Invoice

# UN/ECE recommendation 20 codes an invoice bills packages or time in, as a reader names them.
UNIT_NAMES = {"C62": "one", "H87": "piece", "LO": "lot", "HUR": "hours", "DAY": "days", "MIN": "minutes",
              "WEE": "weeks", "MON": "months", "ANN": "years"}


VERBOSE_HELP = ("for an invoice that cannot be read, also print the reader's own words (the schema validator's or the "
                "PDF reader's message) for the provider")


@contextmanager
def _reader_words(verbose: bool) -> Iterator[None]:
    """An unreadable invoice's sentence, with the reader's own words on a line of their own under --verbose, else
    a pointer to them."""
    from generator.invoice.read import InvoiceUnreadableError

    try:
        yield
    except InvoiceUnreadableError as exc:
        if not exc.detail:
            raise
        more = (f"\n  the reader's own words, for the provider: {exc.detail}" if verbose else
                " (--verbose adds the reader's own words, for the provider)")
        raise InvoiceUnreadableError(f"{exc}{more}", exc.detail) from None


def _cmd_attach(args: argparse.Namespace) -> int:
    from generator.core.termtext import escape_terminal
    from generator.invoice.attach import attach_bundle

    trust = trust_of(args)
    with _reader_words(args.verbose):
        done = attach_bundle(Path(args.invoice), Path(args.bundle), Path(args.out), trust=trust,
                             allow_unsigned=args.allow_unsigned, limits=limits_of(args),
                             attach_anyway=args.attach_anyway)
    for row in _findings(done.check.findings):
        print(escape_terminal(row))
    inv = done.check.invoice
    number = inv.number if inv is not None else ""
    if done.written is None:
        what = (f"{inv.source} is no Factur-X or ZUGFeRD invoice" if inv is not None and inv.other_format else
                f"invoice {number} contradicts the bundle (see `gpu-audit invoice check`)")
        print(f"FAILED: {counted(len(done.check.findings), 'finding')}: {escape_terminal(what)}, so the bundle was "
              "not attached and nothing was written; --attach-anyway attaches it with the findings in the "
              "attachment's description")
        return 1
    if done.check.findings:
        print(f"attached anyway (--attach-anyway): {counted(len(done.check.findings), 'finding')} written into "
              "the bundle attachment's description")
    print(escape_terminal(str(done.written)))
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
        "A signed invoice is refused: it is never modified, so send the bundle beside it. The invoice is first "
        "reconciled with the bundle as `gpu-audit invoice check` does: an invoice that contradicts the bundle is "
        "refused with its findings, unless --attach-anyway, which attaches the bundle with every finding written "
        "into the bundle attachment's description. Exit 0 written, 1 the bundle does not verify (or no trust "
        "anchor is given) or the invoice contradicts it, 2 anything else refused (an invoice that cannot be read "
        "too, even with --attach-anyway); nothing is written unless exit 0.",
    )
    p.add_argument("invoice", metavar="INVOICE.pdf", help="the Factur-X or ZUGFeRD invoice PDF (not signed)")
    p.add_argument("bundle", metavar="BUNDLE", help="bundle folder or .zip made by `gpu-audit build`")
    p.add_argument("-o", "--out", required=True, metavar="OUT.pdf", help="the new invoice copy (must not exist)")
    p.add_argument("--attach-anyway", action="store_true",
                   help="attach the bundle even when the invoice contradicts it, with the findings written into the "
                        "attachment's description")
    p.add_argument("--verbose", action="store_true", help=VERBOSE_HELP)
    add_trust_options(p)
    add_limits(p, BUNDLE_LIMITS)
    p.set_defaults(handler=_cmd_attach)


def _origin(c: Committed) -> str:
    """Where the committed price comes from, as the decision says (nothing for a decision that does not)."""
    if c.price_source is None:
        return ""
    return f"; price: {c.price_source}" + (f" ({c.price_source_detail})" if c.price_source_detail else "")


def _money(amount: object, currency: str | None) -> str:
    """An amount with its currency, or "not given"."""
    from generator.invoice.money import given

    return given(amount) if amount is None else f"{amount} {given(currency)}"


def _due_line(inv: Invoice) -> str:
    """The amount the invoice asks to be paid, and what it is made of as the invoice states it."""
    from generator.invoice.money import given

    if inv.due is None:
        return f"amount due: not stated (gross: {_money(inv.grand_total, inv.currency)})"
    parts = [f"gross {given(inv.grand_total)}"] + [f"{name} {value}" for name, value in
                                                   (("prepaid", inv.prepaid), ("rounding", inv.rounding))
                                                   if value is not None]
    return f"amount due {_money(inv.due, inv.currency)} ({', '.join(parts)})"


def _billed_line(b: BilledLine, currency: str, compared: bool) -> str:
    """One billed line as the invoice states it, and the committed package it was matched to."""
    from generator.invoice.money import given

    line, identity = b.line, b.identity
    ids = "; ".join(f"{who} {value}" for who, value in (("seller's item ID", line.seller_id),
                                                         ("buyer's item ID", line.buyer_id),
                                                         ("global ID", line.global_id)) if value) or "no item ID"
    extra = "".join(f", {what} {value}" for what, value in (("allowances", line.allowances),
                                                             ("charges", line.charges)) if value)
    unit = f"{given(line.unit)}" + (f" ({UNIT_NAMES[line.unit]})" if line.unit in UNIT_NAMES else "")
    if not line.counted:
        matched = f"a {line.status} line, which bills nothing of its own (not compared)"
    elif not compared:
        matched = "not compared (the invoice's currency is not the decision's)"
    elif b.package is not None:
        matched = f"{b.package.what}, identified by its {' and '.join(identity.ways)}"
    elif identity.complete:
        matched = f"{identity.gpu}, {identity.days} days: no committed package left to bill (see the findings)"
    else:
        matched = "no committed package identified (see the findings)"
    number = f"line {line.position}" + (f" (ID {line.line_id})" if line.line_id not in ("", str(line.position))
                                        else "")
    return (f"billed {number}: \"{given(line.name)}\" ({ids}): quantity {given(line.quantity)} {unit}, unit price "
            f"{given(line.unit_price)}, amount {given(line.total)} {currency}{extra} -> {matched}")


def _findings(findings: list[InvoiceFinding]) -> list[str]:
    """Each finding on one line: where, code, message, and the two figures compared (never Python's None)."""
    from generator.invoice.money import given

    out = []
    for f in findings:
        where = f"invoice line {f.line}" if f.line is not None else "invoice"
        out.append(f"{where}: {f.code}: {f.message} [billed {given(f.billed)}; {f.against} {given(f.committed)}]")
    return out


def _verdict(result: InvoiceCheck, inv: Invoice) -> str:
    """The last line: OK or FAILED, with both figures, billed and committed."""
    from generator.invoice.check import committed_total, usd
    from generator.invoice.money import given

    figures = (f"billed {given(inv.net_total)} {given(inv.currency)} net of tax, committed "
               f"{usd(committed_total(result.committed))}")
    if not result.findings:
        return (f"OK: invoice {inv.number} bills exactly the committed packages: {given(inv.net_total)} "
                f"{given(inv.currency)} net of tax billed, {usd(committed_total(result.committed))} committed")
    what = ("the invoice is not in the decision's currency, so nothing was compared" if not result.compared else
            "the invoice's own amounts do not add up or are not allowed" if
            all(f.against != "committed" for f in result.findings) else
            "the invoice does not bill what the decision committed")
    return f"FAILED: {counted(len(result.findings), 'finding')}: {what} ({figures})"


def _check_lines(result: InvoiceCheck, inv: Invoice) -> list[str]:
    """What `invoice check` prints once the bundle verified: the invoice, its lines, totals, the committed
    packages, the findings, and the verdict last."""
    from generator.invoice.check import usd
    from generator.invoice.money import given

    currency = given(inv.currency)
    out = [f"invoice {given(inv.number)} ({inv.source}): {counted(len(inv.lines), 'line')} in {currency}"]
    out += [_billed_line(b, currency, result.compared) for b in result.billed]
    out.append(f"net total {given(inv.net_total)} {currency}; tax {given(inv.tax_total)} {currency} (shown apart, "
               f"not compared); gross {given(inv.grand_total)} {currency}")
    out.append(_due_line(inv))
    for c in result.committed:
        # the decision's names: an unsigned bundle (--allow-unsigned) may hold anything in them
        out.append(f"committed: {c.gpu}, {c.days}-day package: {c.lots} x {usd(c.price_per_lot_usd_minor)} = "
                   f"{usd(c.total_usd_minor)} ({', '.join(c.experiments)})" + _origin(c)
                   + (f"; article ID {', '.join(c.article_ids)}" if c.article_ids else ""))
    out += [f"other expense (registered apart, not a package, not compared): {what}: {usd(amount)}"
            for what, amount in result.other_expenses]
    out += _findings(result.findings)
    out.append(f"compared: {inv.source}: only the invoice's XML was compared, not its printed page (check that the "
               "page a person reads shows the same amounts)")
    return out + [_verdict(result, inv)]


def _cmd_check(args: argparse.Namespace) -> int:
    import json

    from generator.bundle.verdict import add_library_warnings
    from generator.core.termtext import escape_terminal
    from generator.invoice.check import check_invoice, committed_total, usd

    with warnings.catch_warnings(record=True) as caught:  # as `verify`: a line before the verdict, never after
        warnings.simplefilter("always")
        trust = trust_of(args)
        with _reader_words(args.verbose):
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
    rows = _check_lines(result, inv) if inv.other_format is None else _findings(result.findings) + [
        f"FAILED: 1 finding: {inv.source} is no Factur-X or ZUGFeRD invoice, so nothing was compared with the "
        f"committed {usd(committed_total(result.committed))}"]
    for row in rows:
        print(escape_terminal(row))
    return 1 if result.findings else 0


def _add_check(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`gpu-audit invoice check`: the invoice, the bundle and the bundle's trust anchor."""
    p = group.add_parser(
        "check",
        help="reconcile a provider's Factur-X / ZUGFeRD invoice with the bundle's committed packages",
        description="Verify BUNDLE as `gpu-audit verify` does (same trust options), read INVOICE (a Factur-X or "
        "ZUGFeRD PDF, or its CII XML, checked against the factur-x library's official XSD, parsed with entity "
        "resolution and network access off, in a bounded child process), and compare it line by line with the "
        "packages the decision committed, each counted once. A line is identified by its seller's item ID as one "
        "of the provider's article IDs the protocol registered (rental.article_ids), else as the GPU slug, else by "
        "its name or description naming the GPU (slug or model name) and the duration (7 days, 7 Tage, 7 jours, "
        "7 天); then lots, unit price, line total and the total net of tax are compared with the committed ones. "
        "An invoice in another currency is one finding and nothing is compared. Tax is never compared with the "
        "decision, but the invoice's own sums are checked exactly (EN 16931): the net against its lines, each tax "
        "category's rate (0 to 100 %) and tax (basis x rate), the tax total, the gross and the amount due (gross "
        "- prepaid + rounding, prepaid never negative). Each billed line is printed with the package it was "
        "matched to; the last line gives the billed and the committed totals. A PDF with more than one invoice XML "
        "among its attachments is refused. A ZUGFeRD 1.0 invoice is read as its CII equivalent; a UBL invoice or an "
        "Order-X order (which the factur-x library also reads) is one finding naming its format, nothing compared. "
        "Only the XML is compared, never the printed page. Exit 0 when everything matches, 1 with findings (or a "
        "bundle that does not verify), 2 for an invoice that cannot be read (not a PDF or XML invoice, damaged, "
        "encrypted, no invoice XML) or bundle.",
    )
    p.add_argument("invoice", metavar="INVOICE", help="the Factur-X or ZUGFeRD invoice PDF, or its CII XML")
    p.add_argument("bundle", metavar="BUNDLE", help="bundle folder or .zip, or its decision-note.pdf")
    add_trust_options(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--verbose", action="store_true", help=VERBOSE_HELP)
    p.set_defaults(handler=_cmd_check)
