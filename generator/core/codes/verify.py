"""The codes of verify's problems and of the invoice check's findings: one row each (generator.core.codes.registry)."""

from __future__ import annotations

from generator.core.codes.code import BUNDLE as B
from generator.core.codes.code import ERROR as E
from generator.core.codes.code import INVOICE as V
from generator.core.codes.code import Code

_SIGNER = "build the bundle again with a valid signing certificate"
_REBUILD = "build the bundle again; a bundle changed after it was built is not the one its maker signed"

# Every problem fails the verification: a problem has no severity of its own.
VERIFY: tuple[Code, ...] = (
    Code("bad-bag-info", E, B, "bag-info.txt holds exactly the fields gpu-audit writes, matching the manifest",
         _REBUILD),
    Code("bad-certificate", E, B, "signer.pem is exactly one readable PEM certificate", _REBUILD),
    Code("bad-decision", E, B, "the decision.json verified is strict JSON whose bundle ID recomputes", _REBUILD),
    Code("bad-manifest", E, B, "MANIFEST.json is the strict document gpu-audit writes", _REBUILD),
    Code("bad-manifest-line", E, B, "each BagIt manifest line is one checksum and one listed path, once",
         _REBUILD),
    Code("bad-pdf", E, B, "the decision note is a PDF pyHanko can read", _REBUILD),
    Code("bad-pdf-signature", E, B, "the note's signature digest matches the signed bytes and covers the file",
         _REBUILD),
    Code("bad-signature", E, B, "MANIFEST.json's signature verifies with signer.pem", _REBUILD),
    Code("bad-timestamp", E, B, "the signature's RFC 3161 timestamp verifies", _REBUILD),
    Code("bundle-id-mismatch", E, B, "the note, bag-info.txt and MANIFEST.json name the bundle ID decision.json "
         "gives", _REBUILD),
    Code("certificate-chain", E, B, "a path leads from the signer's certificate to the trust anchor",
         "trust the certificate that issued the signer's, or the signer's own"),
    Code("certificate-expired", E, B, "the signer's certificate was valid at the signing time and is today",
         _SIGNER),
    Code("certificate-names", E, B, "the name constraints on the path to the trust anchor allow the signer's name "
         "and every intermediate's", "trust a CA whose name constraints cover the signer, or the signer's own"),
    Code("certificate-not-yet-valid", E, B, "the signer's certificate was already valid when it signed",
         _SIGNER),
    Code("certificate-period-unknown", E, B, "the signer's certificate's validity period can be read", _SIGNER),
    Code("certificate-usage", E, B, "the signer's key usage and extended key usage allow signing", _SIGNER),
    Code("certificate-weak", E, B, "every key on the signer's path is RSA of 2048 bits or more (EC of 256), and no "
         "certificate below the anchor is signed with SHA-1 or MD5", _SIGNER),
    Code("checksum-mismatch", E, B, "every file's SHA-256 is the one the signed manifest lists", _REBUILD),
    Code("decision-mismatch", E, B, "the decision.json embedded in the note is the bundle's, byte for byte",
         _REBUILD),
    Code("input-mismatch", E, B, "the inputs the decision lists are the bundle's copies, by SHA-256", _REBUILD),
    Code("malformed-certificate", E, B, "a certificate follows RFC 5280 (cryptography will refuse it otherwise)",
         _SIGNER),
    Code("missing-file", E, B, "every file MANIFEST.json lists is present", _REBUILD),
    Code("not-a-bag", E, B, "the folder or zip is a gpu-audit bundle (bagit.txt, MANIFEST.json)",
         "give the bundle folder or zip that `build` wrote"),
    Code("not-a-plain-file", E, B, "a bundle holds plain files and folders only, no links or devices", _REBUILD),
    Code("not-a-plain-pdf", E, B, "a note verified alone is one plain PDF and nothing else",
         "give the decision-note.pdf that `build` wrote"),
    Code("not-parsed", E, B, "nothing is parsed once MANIFEST.json's signature fails", _REBUILD),
    Code("pdf-modified-after-signing", E, B, "the note was not changed after it was certified", _REBUILD),
    Code("pdf-not-certified", E, B, "the note carries a certification signature permitting no changes", _REBUILD),
    Code("pdf-too-complex", E, B, "the note holds at most --max-pdf-objects objects and --max-pdf-references "
         "references, counted from its bytes before it is parsed", "if the note is genuine, raise the limit the "
         "line names"),
    Code("pdf-too-costly", E, B, "the note parses within --max-pdf-seconds and the memory ceiling",
         "if the note is genuine, raise --max-pdf-seconds"),
    Code("registration-mismatch", E, B, "decision.json's registration status names the seal the bundle carries (its "
         "registration.json and signer), or none when it carries none", _REBUILD),
    Code("seal-invalid", E, B, "the registration's seal the bundle carries verifies: registration.json reads and its "
         "signature (registration.json.p7s) is by the certificate it names, over its exact bytes", _REBUILD),
    Code("seal-token-invalid", E, B, "the registration's time-stamp token (registration.json.tsr) stamps its "
         "signature and verifies", _REBUILD),
    Code("sealed-input-changed", E, B, "every file the registration seals is among the bundle's inputs, byte for "
         "byte as sealed", "the decision rests on inputs changed after registration: ask the campaign's team for "
         "the inputs as registered, or a new registration and new runs"),
    Code("signer-mismatch", E, B, "signer.pem is the certificate MANIFEST.json and the note name", _REBUILD),
    Code("size-mismatch", E, B, "every file's size is the one the signed manifest lists", _REBUILD),
    Code("too-deep", E, B, "a bundle's folders nest no deeper than gpu-audit writes them", _REBUILD),
    Code("too-large", E, B, "a bundle file, the zip and the note stay under their --max-* limits",
         "if the bundle is genuine, raise the limit"),
    Code("trust-is-own-signer", E, B, "the trust anchor is not the bundle's own signer.pem",
         "give the certificate you received from the signer, not one from the bundle"),
    Code("os-artefact", E, B, "the bundle holds no file an operating system adds (.DS_Store, Thumbs.db, desktop.ini, "
         "__MACOSX/, ._*)", "remove it with the command the line names and verify again"),
    Code("unexpected-bag-info", E, B, "bag-info.txt holds no field beyond those gpu-audit writes", _REBUILD),
    Code("unexpected-file", E, B, "the bundle holds no file MANIFEST.json does not list", _REBUILD),
    Code("unexpected-folder", E, B, "the bundle holds no folder MANIFEST.json does not imply", _REBUILD),
    Code("unreadable", E, B, "every listed file can be read", _REBUILD),
    Code("unsafe-zip", E, B, "every byte of a bundle zip is accounted for: entries back to back, allowed extra "
         "fields, plain files and folders, one name per path", "zip the bundle folder again with a plain tool (the "
         "line names one), or give its folder"),
    Code("unsigned", E, B, "a bundle is signed, unless --allow-unsigned accepts an unsigned one",
         "build with a signing key, or pass --allow-unsigned"),
    Code("unsigned-bytes", E, B, "the note's signature holds no unsigned bytes beyond the signature", _REBUILD),
    Code("untrusted-signer", E, B, "the signer is the trust anchor given, or chains to it",
         "trust the signer's certificate or fingerprint, received apart from the bundle"),
)

# An invoice finding says where the invoice and the decision (or the invoice's own sums) disagree.
INVOICE_CODES: tuple[Code, ...] = (
    Code("amount-currency", E, V, "every amount is in the invoice's currency; only the tax total may be stated a "
         "second time, in the tax currency (TaxCurrencyCode)", "ask the provider to state every amount in the "
         "invoice's currency"),
    Code("attachment-name-taken", E, V, "the invoice `invoice attach` adds to carries no attachment whose file "
         "name is, or could be taken for, the bundle's or its note's (decision-note*, the bundle's name)",
         "ask the provider for the invoice without that attachment (or with it renamed), then attach again"),
    Code("billed-not-committed", E, V, "every invoice line bills a package the decision committed",
         "ask the provider to remove the line"),
    Code("billed-twice", E, V, "each committed package is billed by one invoice line, once",
         "ask the provider to remove the second line"),
    Code("billed-per-gpu", E, V, "a lot of several GPUs is billed per lot, at one price",
         "ask the provider to bill the lots, not the GPUs"),
    Code("committed-not-billed", E, V, "every committed package is billed by one invoice line",
         "check the invoice is the whole bill"),
    Code("currency", E, V, "the invoice is in the tariffs' currency (USD)",
         "ask for the invoice in the tariffs' currency"),
    Code("document-type", E, V, "the document is a commercial invoice (type code 380)",
         "check the commercial invoice, not a credit note or a correction"),
    Code("due-inconsistent", E, V, "the amount due is gross minus prepaid plus rounding", "ask the provider"),
    Code("due-missing", E, V, "the invoice states its gross total and amount due", "ask the provider"),
    Code("gross-inconsistent", E, V, "the gross total is the net total plus the tax", "ask the provider"),
    Code("invoice-format", E, V, "the invoice is Factur-X or ZUGFeRD (UN/CEFACT CII, EN 16931): a UBL invoice or "
         "an Order-X order, which the factur-x library also reads, is not reconciled",
         "ask the provider for the invoice as Factur-X or ZUGFeRD, or as its CII XML"),
    Code("line-allowance-charge", E, V, "a package is billed whole, with no allowance or charge on its line",
         "ask the provider to bill the package at its price"),
    Code("line-identification-conflict", E, V, "the ways a line names its package (article ID, GPU slug, name) "
         "name the same package", "ask the provider to correct the line"),
    Code("line-tax-category", E, V, "each line's (and document allowance's or charge's) tax category and rate is "
         "one the invoice's tax breakdown states", "ask the provider to correct the line's tax or the breakdown"),
    Code("line-not-identified", E, V, "every invoice line names a committed package: the provider's article ID "
         "registered in the protocol, the GPU slug, or the GPU and the duration in its name",
         "register the provider's article ID in the protocol's rental (article_ids), or ask the provider to name "
         "the GPU and the duration"),
    Code("lots-differ", E, V, "a line bills the number of lots committed", "ask the provider"),
    Code("net-inconsistent", E, V, "the sum of line totals is the sum of the lines, and the net total is that "
         "sum less allowances plus charges", "ask the provider"),
    Code("prepaid-negative", E, V, "the prepaid amount is zero or more", "ask the provider"),
    Code("pro-rated", E, V, "a package is billed whole, per lot, never pro-rated by the hour",
         "ask the provider to bill the whole package"),
    Code("rounding-implausible", E, V, "the rounding amount stays below a unit either way", "ask the provider"),
    Code("tax-basis-inconsistent", E, V, "each tax category's basis is the sum of its lines' net amounts less its "
         "document allowances plus its charges (EN 16931 BR-S-08, BR-Z-08, BR-E-08, BR-AE-08, BR-IC-08, BR-G-08, "
         "BR-O-08)", "ask the provider"),
    Code("tax-category-inconsistent", E, V, "each tax category's amount is its basis times its rate",
         "ask the provider"),
    Code("tax-category-repeated", E, V, "each tax category (code and rate) is stated once in the tax breakdown",
         "ask the provider"),
    Code("tax-rate", E, V, "a tax rate lies between 0 and 100 percent", "ask the provider"),
    Code("tax-total-inconsistent", E, V, "the tax total is the sum of the categories' tax", "ask the provider"),
    Code("total-differs", E, V, "the net total is the committed total", "ask the provider"),
    Code("unit", E, V, "a package is billed in lots (unit code C62)", "ask the provider to bill in lots"),
    Code("unit-price-differs", E, V, "a line's unit price is the tariff's price per lot", "ask the provider"),
)
