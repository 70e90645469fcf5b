"""Why an invoice cannot be read, in sentences for finance: the file, what is wrong, what to ask the provider for.

A schema error is translated into the field it concerns and what that field should hold; the words of the
validator or of the PDF reader (with Python's object reprs taken out) are kept apart as the detail, which
`invoice check --verbose` and `invoice attach --verbose` print for the provider.
"""

from __future__ import annotations

import re
from typing import Any

ASK_AGAIN = "ask the provider to send the invoice again, as their invoicing software wrote it"
ASK_ONE = ("ask the provider for the invoice with a single invoice XML, attached as Factur-X prescribes "
           "(factur-x.xml in the PDF's list of attachments)")
ASK_EINVOICE = ("ask the provider for the electronic invoice: Factur-X or ZUGFeRD (a PDF carrying its XML), or "
                "its CII XML")
LEVELS = {"minimum": "MINIMUM", "basicwl": "BASIC WL", "basic": "BASIC", "en16931": "EN 16931", "extended": "EXTENDED",
          "extended-ctc-fr": "EXTENDED-CTC-FR", "comfort": "COMFORT"}
STANDARDS = {"factur-x": "Factur-X", "zugferd": "ZUGFeRD 1.0"}  # the factur-x library's flavors, as readers name them
# CII elements as an invoice's reader knows them (EN 16931 business terms); any other is named by its element.
FIELDS = {
    "ExchangedDocumentContext": "the document context", "ExchangedDocument": "the document header",
    "GuidelineSpecifiedDocumentContextParameter": "the profile the invoice declares (BT-24)",
    "TypeCode": "the document type (BT-3: 380 an invoice, 381 a credit note)",
    "IssueDateTime": "the invoice date (BT-2)", "DateTimeString": "a date (written YYYYMMDD, format 102)",
    "IncludedNote": "a note (BG-1)", "SupplyChainTradeTransaction": "the invoice's content",
    "IncludedSupplyChainTradeLineItem": "an invoice line (BG-25)", "SpecifiedTradeProduct": "a line's item (BG-31)",
    "SellerAssignedID": "the seller's item ID (BT-155)", "BilledQuantity": "a line's quantity (BT-129)",
    "ChargeAmount": "a net unit price (BT-146)",
    "ApplicableHeaderTradeAgreement": "the seller and buyer part", "SellerTradeParty": "the seller (BG-4)",
    "BuyerTradeParty": "the buyer (BG-7)", "BuyerReference": "the buyer reference (BT-10)",
    "ApplicableHeaderTradeDelivery": "the delivery part", "ApplicableHeaderTradeSettlement": "the payment part",
    "InvoiceCurrencyCode": "the invoice currency (BT-5)", "ApplicableTradeTax": "a VAT breakdown (BG-23)",
    "SpecifiedTradeSettlementHeaderMonetarySummation": "the document totals (BG-22)",
    "TaxBasisTotalAmount": "the total without VAT (BT-109)", "TaxTotalAmount": "the VAT total (BT-110)",
    "GrandTotalAmount": "the total with VAT (BT-112)", "DuePayableAmount": "the amount due (BT-115)",
    "InvoiceReferencedDocument": "the reference to the preceding invoice, which a credit note names (BG-3)",
    "SpecifiedTradePaymentTerms": "the payment terms (BT-20)", "PostalTradeAddress": "a postal address",
    "SpecifiedTradeSettlementPaymentMeans": "the payment means (BG-16)", "CountryID": "a country code (ISO 3166)",
    "SpecifiedTaxRegistration": "a VAT registration", "CategoryCode": "a VAT category code (BT-118, BT-151)",
    "RateApplicablePercent": "a VAT rate (BT-119, BT-152)", "CalculatedAmount": "a VAT amount (BT-117)",
    "BasisAmount": "a VAT basis (BT-116)", "Name": "a name",
}
TYPES = {"decimal": "a number (digits and a decimal point, such as 2071.00)", "date": "a date",
         "token": "a code", "integer": "a whole number", "boolean": "true or false"}
_ELEMENT = re.compile(r"Element '(?P<element>[^']*)'(?:, attribute '(?P<attribute>[^']*)')?: (?P<rest>.*)", re.S)
_REPR = re.compile(r"<[^<>]*object at 0x[0-9a-fA-F]+>")


def refused(sentence: str, detail: str = "") -> dict[str, str]:
    """The reader's answer for an invoice it cannot read: the sentence, and the reader's own words (--verbose)."""
    return {"error": sentence, "detail": plain(detail)} if detail else {"error": sentence}


def plain(text: str) -> str:
    """`text` on one line, without Python's object reprs (pikepdf names the stream it read from)."""
    text = re.sub(r"^stream " + _REPR.pattern + r": ", "", text.strip())
    return " ".join(_REPR.sub("the file", text).split())


def unreadable_pdf(exc: Exception) -> dict[str, str]:
    """A file that starts as a PDF and that qpdf cannot open: encrypted, or damaged."""
    import pikepdf

    if isinstance(exc, pikepdf.PasswordError):
        return refused("it is an encrypted PDF: it opens only with a password, so its invoice XML cannot be read; "
                       "ask the provider for the invoice without a password", str(exc))
    return refused("it starts as a PDF but cannot be opened as one: it is damaged or cut short (an interrupted "
                   f"download or a broken e-mail attachment, say); download it again, else {ASK_AGAIN}", str(exc))


def not_an_invoice_file(data: bytes) -> dict[str, str] | None:
    """The refusal of a file that is neither a PDF nor XML (a web page saved instead of the invoice, an image,
    a text), or None for what may be XML."""
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"<!doctype html") or head.startswith(b"<html"):
        return refused("it is a web page (HTML), not an invoice: a download that saved a page instead of the file, "
                       f"say; download the invoice again, else {ASK_EINVOICE}")
    if not head.startswith(b"<"):
        return refused(f"it is neither a PDF nor an XML file, so it is no electronic invoice; {ASK_EINVOICE}")
    return None


def no_invoice_xml(names: list[str]) -> dict[str, str]:
    """A PDF whose attachments hold no invoice XML: a printed invoice only."""
    carried = ("it carries no attachment at all" if not names else
               f"it carries {len(names)} attachment{'s' if len(names) > 1 else ''} ({', '.join(names[:5])}"
               f"{', ...' if len(names) > 5 else ''}), none an invoice XML")
    return refused(f"it is a PDF with no Factur-X or ZUGFeRD XML attachment (factur-x.xml, zugferd-invoice.xml): "
                   f"{carried}, so it holds no amounts a program can read, only a printed page; {ASK_EINVOICE}")


def profile_refusal(exc: Exception, what: str, flavor: str = "factur-x") -> dict[str, str]:
    """An XML that declares no Factur-X (or ZUGFeRD 1.0) profile (BT-24), or one that standard does not define."""
    standard = STANDARDS.get(flavor, flavor)
    example = "urn:ferd:CrossIndustryDocument:invoice:1p0:comfort" if flavor == "zugferd" else "urn:cen.eu:en16931:2017"
    found = re.search(r"'([^']*)'", str(exc))
    problem = (f"declares the profile {found.group(1)}, which {standard} does not define" if found else
               f"declares no profile (BT-24, the ID of GuidelineSpecifiedDocumentContextParameter, such as {example})")
    return refused(f"{what} {problem}, so it cannot be checked against the {standard} schema of its profile; ask the "
                   f"provider for the invoice declaring its {standard} profile", str(exc))


def _field(element: str, path: str | None) -> str:
    """The element as a reader of invoices knows it (its business term, its element name), and the invoice line
    it belongs to."""
    local, path = element.rpartition("}")[2], path or ""
    line = re.search(r"IncludedSupplyChainTradeLineItem(?:\[(\d+)\])?", path)
    words = FIELDS.get(local, "the element")
    if local == "ID" and path.endswith("ExchangedDocument/ram:ID"):
        words = "the invoice number (BT-1)"
    elif local == "LineTotalAmount":
        words = "the line amount (BT-131)" if line else "the sum of the line amounts (BT-106)"
    named = f"{words[:-1]}, element {local})" if words.endswith(")") else f"{words} {local}"
    return named + (f" of invoice line {line[1] or 1}" if line and local != "IncludedSupplyChainTradeLineItem" else "")


def _expected(listed: str) -> str:
    names = [_field(name.strip(), None) for name in re.sub(r"\{[^}]*\}", "", listed).split(",") if name.strip()]
    return " or ".join(names)


def explained(message: str, path: str | None) -> str:
    """One line of the schema validator's (libxml2's) in words: the field, what is wrong, what it should hold."""
    found = _ELEMENT.match(message.strip())
    if found is None:
        return "a part of it does not follow the schema"
    field = _field(found["element"], path)
    if found["attribute"]:
        field = f"the attribute {found['attribute']} of {field}"
    rest = found["rest"]
    patterns: list[tuple[str, Any]] = [
        (r"This element is not expected\. Expected is (?:one of )?\( (.*) \)",
         lambda m: f"{field} is not allowed at that place: the profile expects {_expected(m[1])} there"),
        (r"This element is not expected", lambda m: f"{field} is not allowed in this profile at that place"),
        (r"Missing child element\(s\)\. Expected is (?:one of )?\( (.*) \)",
         lambda m: f"{field} lacks {_expected(m[1])}, which the profile requires"),
        (r"'(.*)' is not a valid value of the (?:atomic|union|list) type '(?:xs:)?([^']*)'",
         lambda m: f"{field} holds \"{m[1]}\", which is not {TYPES.get(m[2], 'what the schema allows there')}"),
        (r"\[facet '[^']*'\] The value '(.*?)'",
         lambda m: f"{field} holds \"{m[1]}\", which is not one of the values the schema allows there"),
        (r"The attribute '([^']*)' is required but missing",
         lambda m: f"{field} lacks its attribute {m[1]}, which the schema requires"),
        (r"The attribute '([^']*)' is not allowed", lambda m: f"{field} carries an attribute {m[1]} the schema "
                                                              "does not allow"),
    ]
    for pattern, words in patterns:
        match = re.search(pattern, rest, re.S)
        if match is not None:
            return str(words(match))
    return f"{field} does not hold what the schema expects there"


def schema_refusal(exc: Exception, what: str, level: str | None, flavor: str = "factur-x") -> dict[str, str]:
    """The factur-x library's XSD failure (its DocumentInvalid kept as the cause) as a sentence: the first error's
    field, line and what it should hold, how many more there are, and what to ask the provider for."""
    entries = list(getattr(exc.__cause__, "error_log", None) or [])
    standard = STANDARDS.get(flavor, flavor)
    profile = f"the {standard} {LEVELS.get(level or '', level)} profile it declares" if level else \
        f"the {standard} schema"
    if not entries:
        return refused(f"{what} is not valid against {profile}; ask the provider for the invoice corrected",
                       str(exc))
    first = entries[0]
    more = f" (and {len(entries) - 1} more places)" if len(entries) > 1 else ""
    return refused(f"{what} is not valid against {profile}: on its line {first.line}, "
                   f"{explained(first.message, first.path)}{more}; ask the provider for the invoice corrected, "
                   "valid against the profile it declares (the provider's invoicing software reports the same "
                   "error), or declaring a profile that holds this field", str(exc))
