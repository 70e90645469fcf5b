"""The bundle commands: `keygen`, `build` and `verify`, each a thin wrapper over one library function."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from generator.cli.options import (
    BUILD_KEEP_FREED_MS,
    BUNDLE_LIMITS,
    CAMPAIGN_LIMITS,
    add_language_option,
    add_limits,
    add_trust_options,
    add_trust_tsa_option,
    limits_of,
    reading_campaigns,
    require_max_findings,
    trust_of,
    trust_tsa_of,
)
from generator.core.errors import UsageError
from generator.core.termtext import counted

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


def signing_identity(args: argparse.Namespace) -> Any:
    """The identity --key and --cert, or --pkcs12, name (None with --unsigned): `build`'s and `register`'s."""
    from generator.bundle.sign import signing

    unsigned = bool(getattr(args, "unsigned", False))
    may_be_unsigned = hasattr(args, "unsigned")  # `register` always signs
    chosen = [bool(args.key or args.cert), bool(args.pkcs12), unsigned]
    if sum(chosen) > 1:
        raise UsageError("give either --key and --cert, or --pkcs12" + (", or --unsigned" if may_be_unsigned else ""))
    if unsigned:
        return None
    readable = bool(getattr(args, "allow_readable_key", False))
    if args.pkcs12:
        return _key_loaded(lambda: signing.load_pkcs12_identity(
            Path(args.pkcs12), _passphrase(PKCS12_PASSPHRASE_ENV, "PKCS#12 passphrase: "), allow_readable_key=readable))
    if not (args.key and args.cert) and not may_be_unsigned:
        raise UsageError("a registration is sealed with the team's key: give --key KEY.pem --cert CERT.pem (make "
                         "them once with `gpu-audit keygen DIR`), or --pkcs12 FILE")
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
    from generator.bundle.sign.signing import keygen

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
    from generator.bundle.build.leftovers import find_leftovers, remove_leftovers
    from generator.core.termtext import escape_terminal

    if clean:
        for entry in remove_leftovers(parent):
            print(f"removed the leftover of an interrupted build: {escape_terminal(str(entry))}", file=sys.stderr)
        return
    found = find_leftovers(parent)
    if found:
        names = ", ".join(escape_terminal(str(p)) for p in found)
        print(f"warning: {counted(len(found), 'leftover')} of interrupted builds: {names}; no running build holds "
              "them: remove them with `gpu-audit build --clean-leftovers ...`", file=sys.stderr)


def _cmd_build(args: argparse.Namespace) -> int:
    from generator.bundle.build.build import BuildWorkers, build_bundle

    with BuildWorkers() as workers:  # first: their imports overlap the set-up below
        reading_campaigns(BUILD_KEEP_FREED_MS)
        identity = signing_identity(args)
        _leftovers(Path(args.out).parent, clean=args.clean_leftovers)
        show = (not args.quiet) and sys.stderr.isatty()
        progress = _progress_bar() if show else None
        make_zip = args.zip or args.out.endswith(".zip")  # never a folder named NAME.zip
        result = build_bundle(Path(args.campaign_dir), Path(args.out), identity, make_zip=make_zip,
                              strict=args.strict, organization=args.organization, progress=progress,
                              limits=limits_of(args), tsa_url=args.tsa, language=args.lang, workers=workers)
    from generator.audit.report import format_decision, format_findings
    from generator.core.termtext import counted, escape_terminal

    if show:
        sys.stderr.write("\n")
    errors = result.check.errors
    if not result.built:
        print(format_findings(errors, subject=args.campaign_dir, max_findings=args.max_findings))
        print(f"not built: {counted(len(errors), 'error finding')} and --strict was given")
        return 1
    if not args.quiet:
        print(format_decision(result.check.document))
        print(format_findings(result.check.findings, subject=args.campaign_dir, max_findings=args.max_findings))
    print(f"bundle {result.bundle_id}: {escape_terminal(str(result.path))}")
    if result.pdf is not None:
        print(f"decision note: {escape_terminal(str(result.pdf))}")
    if identity is None:
        print("warning: the bundle is UNSIGNED", file=sys.stderr)
    return 1 if errors else 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from generator.bundle.verdict import add_library_warnings, report_lines
    from generator.bundle.verify.verify import verify_bundle
    from generator.core.termtext import counted, escape_terminal

    require_max_findings(args)
    # A library's warning (cryptography on a certificate that breaks RFC 5280) would reach stderr on its own,
    # after the verdict when both streams go to one place; it is caught and becomes a line before the verdict.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trust = trust_of(args)
        report = verify_bundle(Path(args.bundle), trust=trust, allow_unsigned=args.allow_unsigned,
                               limits=limits_of(args), trust_tsa=trust_tsa_of(args))
    add_library_warnings(report, caught)
    # Names in a bundle are the maker's: a CR or an escape sequence in one must not overwrite these lines.
    for problem in report.problems[: args.max_findings]:
        print(escape_terminal(str(problem)))
    if len(report.problems) > args.max_findings:
        print(f"... and {counted(len(report.problems) - args.max_findings, 'more problem')}")
    for line in report_lines(report):
        print(line)
    return 0 if report.ok else 1


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `gpu-audit keygen`, `build` and `verify`, in that order."""
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

    _add_build(sub)
    _add_verify(sub)


def _add_build(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`gpu-audit build`: its options and the passphrases it reads."""
    p = sub.add_parser(
        "build",
        help="validate, recompute, render, sign and write the audit bundle",
        description="Build the audit bundle of CAMPAIGN_DIR: a BagIt 1.0 bag with the signed PDF note, the HTML "
        "note, decision.json, findings.json and a byte-for-byte copy of every validated input, plus MANIFEST.json, "
        "its detached signature and the signer certificate. Written atomically; an existing path is refused. "
        f"A PKCS#12 passphrase comes from ${PKCS12_PASSPHRASE_ENV} or a prompt; an encrypted PEM key's from "
        f"${KEY_PASSPHRASE_ENV}. Exit 0 clean, 1 error findings (still built unless --strict), 2 not built.",
    )
    p.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder (see docs/campaign-folder.md)")
    p.add_argument("-o", "--out", required=True, metavar="BUNDLE_DIR",
                   help="new bundle folder; a path ending in .zip writes one .zip file, as --zip")
    p.add_argument("--key", metavar="KEY.pem", help="RSA private key of 2048 bits or more (PEM)")
    p.add_argument("--cert", metavar="CERT.pem", help="its certificate (PEM), or its chain: that certificate first, "
                   "then each intermediate CA up to the root (written into signer.pem and the note's signature)")
    p.add_argument("--pkcs12", metavar="FILE", help="key and certificate in one PKCS#12 file")
    p.add_argument("--unsigned", action="store_true", help="build without signatures (the note says so)")
    p.add_argument("--allow-readable-key", action="store_true",
                   help="use a private key (or PKCS#12 file) that group or others can read; refused otherwise")
    p.add_argument("--zip", action="store_true", help="write one .zip file instead of a folder (-o must end in .zip)")
    p.add_argument("--strict", action="store_true", help="refuse to build when there are error findings")
    add_language_option(p)
    p.add_argument("--organization", metavar="NAME", help="bag-info Source-Organization (default: the signer)")
    p.add_argument("--tsa", metavar="URL", help="RFC 3161 time-stamping authority that timestamps the PDF signature "
                   "(PAdES B-T): the one network request gpu-audit makes, and only when given")
    p.add_argument("--clean-leftovers", action="store_true",
                   help="first remove what interrupted builds left beside BUNDLE_DIR (hidden .NAME.tmp-* folders, "
                   ".NAME.partial and .NAME.gpu-audit-lock files that no running build holds)")
    p.add_argument("--quiet", action="store_true", help="print only where the bundle is; no progress")
    p.add_argument("--max-findings", type=int, default=200, metavar="N", help="list at most N findings")
    add_limits(p, CAMPAIGN_LIMITS)
    p.set_defaults(handler=_cmd_build)


def _add_verify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`gpu-audit verify`: the bundle, the trust anchor and the limits of what it reads."""
    p = sub.add_parser(
        "verify",
        help="check a bundle or a decision note: files, checksums, signatures, signer",
        description="Check a bundle folder or zip, or a decision-note.pdf on its own: every file listed in the signed "
        "MANIFEST.json and nothing else, every checksum, both signatures, the cross-checks (the PDF's embedded "
        "decision.json, the bundle ID, the input fingerprints), the registration's seal when the bundle carries one "
        "(who sealed, when, and that the inputs are the sealed ones), and the signer's certificate fingerprint "
        "against --trust or --trust-fingerprint. Exit 0 only when all hold and the signer is trusted (or the bundle is "
        "unsigned and --allow-unsigned is given); 1 for a problem, or when no trust anchor is given (signer not "
        "checked); 2 for usage errors.",
    )
    p.add_argument("bundle", metavar="BUNDLE", help="bundle folder or .zip")
    add_trust_options(p)
    add_trust_tsa_option(p)
    p.add_argument("--max-findings", type=int, default=200, metavar="N", help="list at most N problems")
    add_limits(p, BUNDLE_LIMITS)
    p.set_defaults(handler=_cmd_verify)
