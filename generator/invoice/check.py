"""`invoice check`: a verified bundle's committed packages against a provider's invoice, line by line.

The bundle is verified first with the rules of `verify`; its decision.json then gives the packages the
campaign committed, each counted once (generator.invoice.committed), and the invoice's lines are identified and
compared with them (generator.invoice.reconcile). Tax is shown apart and never compared: the committed budget
is net. The invoice's own sums (net, tax, gross, amount due) are added up by generator.invoice.money.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from generator.bundle.verdict import Report, Trust
from generator.core.errors import UnreadableInputError
from generator.invoice.committed import (
    CURRENCY,
    Committed,
    committed_packages,
    committed_total,
    other_expenses,
    usd,
)
from generator.invoice.document import Invoice, InvoiceLine
from generator.invoice.money import InvoiceFinding
from generator.invoice.read import read_invoice
from generator.invoice.reconcile import BilledLine, match_lines, reconcile

__all__ = ["CURRENCY", "BilledLine", "Committed", "InvoiceCheck", "InvoiceFinding", "check_invoice",
           "committed_packages", "committed_total", "other_expenses", "reconcile", "reconciled", "usd"]


@dataclass
class InvoiceCheck:
    """The outcome: the bundle's verification, the invoice read, its lines as matched, the findings, and the
    totals (tax apart)."""

    report: Report
    invoice: Invoice | None = None
    committed: list[Committed] = field(default_factory=list)
    findings: list[InvoiceFinding] = field(default_factory=list)
    other_expenses: list[tuple[str, int]] = field(default_factory=list)  # registered apart: listed, not compared
    billed: list[BilledLine] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.report.ok and self.invoice is not None and not self.findings

    @property
    def compared(self) -> bool:
        """Whether the invoice was compared with the decision at all: not when its currency is another."""
        return self.invoice is not None and self.invoice.currency == CURRENCY

    def to_json(self) -> dict[str, Any]:
        """The same result for machines: amounts as decimal strings, cents as integers, null where not given."""
        inv = self.invoice
        return {"bundle": {"path": self.report.bundle, "bundle_id": self.report.bundle_id, "verified": self.report.ok,
                           "problems": [str(p) for p in self.report.problems]},
                "invoice": None if inv is None else {
                    "source": inv.source, "format": inv.document_format, "number": inv.number,
                    "type_code": inv.type_code, "currency": inv.currency,
                    "due": _str(inv.due), "prepaid": _str(inv.prepaid), "rounding": _str(inv.rounding),
                    "taxes": [{k: _str(v) if isinstance(v, Decimal) else v for k, v in asdict(t).items()}
                              for t in inv.taxes],
                    "compared": "xml",  # the invoice's XML only: its printed page is never read
                    "net_total": _str(inv.net_total), "tax_total": _str(inv.tax_total),
                    "grand_total": _str(inv.grand_total), "line_total": _str(inv.line_total),
                    "allowance_total": _str(inv.allowance_total), "charge_total": _str(inv.charge_total),
                    "lines": [_line_json(b) for b in self.billed]},
                "compared_with_decision": self.compared,
                "committed": [asdict(c) for c in self.committed],
                "committed_total_usd_minor": committed_total(self.committed),
                "other_expenses": [{"what": w, "amount_usd_minor": a} for w, a in self.other_expenses],
                "findings": [asdict(f) for f in self.findings], "ok": self.ok}


def _line_json(b: BilledLine) -> dict[str, Any]:
    """One billed line for machines: what the invoice states, how it was identified, the package it bills."""
    line: InvoiceLine = b.line
    return {"number": line.position, "line_id": line.line_id, "name": line.name, "description": line.description,
            "seller_id": line.seller_id, "buyer_id": line.buyer_id, "global_id": line.global_id,
            "global_scheme": line.global_scheme, "quantity": _str(line.quantity), "unit": line.unit,
            "unit_price": _str(line.unit_price), "total": _str(line.total), "allowances": _str(line.allowances),
            "charges": _str(line.charges), "identified_by": list(b.identity.ways),
            "identified": None if not b.identity.complete else {"gpu": b.identity.gpu, "days": b.identity.days},
            "conflict": b.identity.conflict or None,
            "package": None if b.package is None else {"gpu": b.package.gpu, "days": b.package.days,
                                                       "experiments": list(b.package.experiments)}}


def _str(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def _decision_of(path: Path, trust: Trust, allow_unsigned: bool) -> tuple[Report, bytes | None]:
    """Verify the bundle (a folder, a zip or a note) and take its decision.json as verification read it: the
    bytes that were checked are the bytes reconciled, whatever happens to the files afterwards."""
    from generator.bundle.verify.verify import verify_bundle

    report = verify_bundle(path, trust=trust, allow_unsigned=allow_unsigned)
    return report, report.decision if report.ok else None


def check_invoice(invoice_path: Path, bundle: Path, trust: Trust, allow_unsigned: bool = False) -> InvoiceCheck:
    """`gpu-audit invoice check`: verify the bundle, read the invoice, reconcile them."""
    invoice = read_invoice(invoice_path)  # an unreadable invoice is exit 2 before the bundle is touched
    report, raw = _decision_of(bundle, trust, allow_unsigned)
    report.bundle = str(bundle)
    result = InvoiceCheck(report=report, invoice=invoice)
    if raw is None:
        if report.ok:
            raise UnreadableInputError(f"{bundle}: the verified bundle holds no readable decision.json")
        return result
    decision = json.loads(raw)
    return reconciled(result, decision)


def reconciled(result: InvoiceCheck, decision: dict[str, Any]) -> InvoiceCheck:
    """`result` with the decision's committed packages, the invoice's lines matched to them and the findings."""
    assert result.invoice is not None  # reconciled only once the invoice was read
    result.committed = committed_packages(decision)
    result.other_expenses = other_expenses(decision)
    result.billed = match_lines(result.invoice, result.committed)
    result.findings = reconcile(result.invoice, result.committed)
    return result
