"""Options and steps several commands share: the --max-... limits, --max-findings, and reading a campaign."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import Any

from generator.core.errors import UsageError
from generator.core.limits import DEFAULT as DEFAULT_LIMITS
from generator.core.limits import GiB, KiB, Limits, MiB

Handler = Callable[[argparse.Namespace], int]

# The documented limits each command takes (docs/security.md, "Limits and hostile input"); --max-findings is separate.
CAMPAIGN_LIMITS = ("max_file_bytes", "max_json_depth")
BUNDLE_LIMITS = ("max_file_bytes", "max_json_depth", "max_bundle_bytes", "max_zip_entries", "max_zip_ratio",
                 "max_pdf_bytes", "max_pdf_seconds", "max_pdf_objects", "max_pdf_references", "max_pdf_fields")
_UNITS = {"": 1, "k": KiB, "kib": KiB, "m": MiB, "mib": MiB, "g": GiB, "gib": GiB}


def positive_amount(text: str) -> int:
    """A positive whole number, optionally with a binary unit: 4096, 64KiB, 512M, 2GiB."""
    import re

    m = re.fullmatch(r"\s*([0-9]{1,19})\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number (units K, M, G accepted)")
    return int(m.group(1)) * _UNITS[unit]


# The note's languages (generator.render.view.i18n.LANGUAGES, which a test keeps equal): named here so that parsing
# the command line never imports Babel.
NOTE_LANGUAGES = ("en", "de", "fr", "zh")


def add_language_option(p: argparse.ArgumentParser) -> None:
    """Give `p` the --lang option: the note's language, overriding the protocol's `language`."""
    p.add_argument("--lang", choices=NOTE_LANGUAGES, metavar="LANG",
                   help="the note's language: en, de, fr or zh (default: the protocol's language, else en)")


def add_trust_options(p: argparse.ArgumentParser) -> None:
    """Give `p` the trust anchor options of `verify`: --trust, --trust-fingerprint, --allow-unsigned."""
    p.add_argument("--trust", metavar="CERT.pem", help="the certificate the signer must be (or be issued by)")
    p.add_argument("--trust-fingerprint", metavar="SHA256:HEX",
                   help="the SHA-256 fingerprint of the signer's certificate, obtained from the signer by another "
                   "channel")
    p.add_argument("--allow-unsigned", action="store_true",
                   help="accept a bundle built with --unsigned (not with --trust or --trust-fingerprint)")


def add_trust_tsa_option(p: argparse.ArgumentParser) -> None:
    """Give `p` --trust-tsa: the time-stamping authorities the reader trusts for the registration's seal."""
    p.add_argument("--trust-tsa", action="append", default=[], metavar="CERT.pem",
                   help="a time-stamping authority you trust (its PEM certificate, or the CA's that issued it; "
                   "repeatable): the registration's token time is proven only when its authority is one of these, "
                   "else it is stated by an unchecked authority")


def trust_tsa_of(args: argparse.Namespace) -> Any:
    """The certificates --trust-tsa names, read as --trust's file is (a tuple of cryptography certificates)."""
    from pathlib import Path

    from generator.bundle.verify.sealverify import load_tsa_trust

    return load_tsa_trust([Path(p) for p in args.trust_tsa])


def trust_of(args: argparse.Namespace) -> Any:
    """The trust anchor the options of add_trust_options name (a generator.bundle.verdict.Trust)."""
    from pathlib import Path

    from generator.bundle.verify.verify import load_trust

    return load_trust(Path(args.trust) if args.trust else None, args.trust_fingerprint)


def add_limits(p: argparse.ArgumentParser, names: Sequence[str]) -> None:
    """Give `p` the --max-... option of each limit in `names`, with its documented help and default."""
    helps = {
        "max_file_bytes": "largest input file read whole, in bytes (K, M, G units; default 2G)",
        "max_json_depth": "deepest JSON nesting accepted (default 64)",
        "max_bundle_bytes": "largest total uncompressed size of a bundle zip (default 8G)",
        "max_zip_entries": "most entries in a bundle zip (default 10000)",
        "max_zip_ratio": "highest compression ratio of a zip entry over 1 MiB (default 200)",
        "max_pdf_bytes": ("largest decision note parsed, and largest invoice or bundle `invoice attach` takes, in "
                          "bytes (default 64M)"),
        "max_pdf_seconds": "most processor seconds the decision note's parse may take (default 5)",
        "max_pdf_objects": "most objects the decision note may hold, counted before it is parsed (default 100000)",
        "max_pdf_references": ("most indirect references the decision note may hold, counted before it is parsed "
                               "(default 100000)"),
        "max_pdf_fields": ("most form fields and annotations the decision note may list, counted before pyHanko "
                           "reads them (default 1000)"),
    }
    for name in names:
        flag = "--" + name.replace("_", "-")
        p.add_argument(flag, type=positive_amount, default=getattr(DEFAULT_LIMITS, name), metavar="N",
                       help=helps[name])


def limits_of(args: argparse.Namespace) -> Limits:
    """The limits the command line asks for: each --max-... option given, else its default."""
    values = {name: getattr(args, name) for name in DEFAULT_LIMITS.__dataclass_fields__ if hasattr(args, name)}
    try:
        return Limits(**values)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# How long jemalloc keeps pages freed by pyarrow before giving them back (docs/performance.md, "memory").
# `check` and `validate` keep them a second, so that each prediction file's columns reuse the pages of the one
# before instead of faulting in new ones: less system time for a little more memory. `build`, which also
# copies the files and holds more at its peak, keeps them a quarter of a second: most of that saving, for
# less memory than a second would keep (the measured trade-off is in docs/performance.md).
KEEP_FREED_MS = 1000
BUILD_KEEP_FREED_MS = 250


def reading_campaigns(decay_ms: int = 0) -> None:
    """Set up pyarrow for a command that reads a campaign: Ctrl-C left to Python, freed memory given back
    after `decay_ms` (KEEP_FREED_MS for the commands that only check).

    pyarrow otherwise catches the signal during its long calls and, now and then, loses it: the build went on
    and exited 0. Without pyarrow's handler the interrupt is raised when the call returns, a moment later.

    The prediction files are read a few at a time (docs/performance.md): pyarrow's jemalloc pool with a short
    decay gives the columns of a file already assessed back to the system, instead of keeping them resident
    beside the next ones as the mimalloc default does (or jemalloc never purging). A pyarrow built without
    jemalloc, or a pool chosen with ARROW_DEFAULT_MEMORY_POOL, is left as it is.
    """
    import pyarrow

    pyarrow.enable_signal_handlers(False)
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    try:
        pool = pyarrow.jemalloc_memory_pool()
    except NotImplementedError:
        return
    pyarrow.set_memory_pool(pool)
    pyarrow.jemalloc_set_decay_ms(decay_ms)


def require_max_findings(args: argparse.Namespace) -> None:
    """--max-findings lists at least one finding: 0 or less is a usage error."""
    if args.max_findings < 1:
        raise UsageError("--max-findings must be at least 1")
