"""The `register` command: a campaign's registration sealed before its runs (a thin wrapper over one function)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from generator.cli.bundle import KEY_PASSPHRASE_ENV, PKCS12_PASSPHRASE_ENV, signing_identity
from generator.core.errors import EnvironmentProblemError, UsageError

if TYPE_CHECKING:
    from generator.audit.sealing.registration import RegistrationPlan
    from generator.seal.unseal import Token

WORKSTATION = ("seal on your workstation first: `gpu-audit campaign prepare PROTOCOL --corpus CORPUS --out DIR`, "
               "then `gpu-audit register DIR --key KEY.pem --cert CERT.pem --tsa URL`; carry DIR to the GPU machine "
               "and run `campaign run DIR/protocol.json ...` there without --key (it checks every sealed file "
               "before it runs); docs/gpu.md shows the sequence")


def _warnings(plan: RegistrationPlan, token_time: datetime | None) -> list[str]:
    """What the seal will not prove: results already there, a token at or after the window's start."""
    from generator.audit.recompute.money.cost import parse_local
    from generator.core.termtext import escape_terminal

    out = []
    present = plan.results_present
    if present:
        named = ", ".join(escape_terminal(p) for p in present[:5]) + (" ..." if len(present) > 5 else "")
        out.append(f"warning: results are already in the campaign folder ({named}): a seal made after the runs "
                   "proves nothing about before them; `check` refuses a token dated at or after the first run")
    protocol = plan.protocol
    if token_time is not None:
        try:
            start = parse_local(protocol.window.start, protocol.window.timezone)
        except (UsageError, ValueError):
            return out
        if token_time >= start:
            out.append(f"warning: the token's time is not before the window's start ({protocol.window.start} "
                       f"{protocol.window.timezone}): `check` will refuse this seal")
    return out


def _cmd_register(args: argparse.Namespace) -> int:
    from generator.audit.sealing.registration import register_campaign
    from generator.bundle.sign import signing
    from generator.core.termtext import escape_terminal
    from generator.seal.unseal import read_seal
    from generator.seal.write import NoTimestampError

    identity = signing_identity(args)
    stamper = None if args.tsa is None else signing.timestamper(args.tsa)
    try:
        plan, sealed = register_campaign(Path(args.campaign_dir), signer=signing.cms_signer(identity),
                                         certificate=identity.cert, timestamper=stamper, force=args.force)
    except NoTimestampError as exc:
        raise UsageError(f"--tsa {signing.escaped(args.tsa)}: {exc}; check the URL, or register without --tsa "
                         "(the seal then proves who and what, not when)") from None
    for path in sealed.written:
        print(f"wrote {escape_terminal(str(path))}")
    reading = read_seal(plan.root)
    print(f"sealed {len(sealed.registration.files)} files: "
          + ", ".join(escape_terminal(f.path) for f in sealed.registration.files))
    print(f"signed by {escape_terminal(identity.subject)} (SHA-256 {identity.fingerprint})")
    token = reading.token
    if token is not None:
        print(f"time-stamped at {token.time.isoformat().replace('+00:00', 'Z')} by "
              f"{escape_terminal(token.tsa_subject)} (SHA-256 {token.tsa_sha256}); whoever reads the seal decides "
              "whether to trust that authority")
    else:
        print("warning: no --tsa: the seal proves who registered and what, not when; registered_at stays the "
              "protocol's word (give --tsa URL of an RFC 3161 time-stamping authority to prove the time)",
              file=sys.stderr)
    for line in _warnings(plan, token.time if token is not None else None):
        print(line, file=sys.stderr)
    return 0


def campaign_sealer(args: argparse.Namespace) -> Callable[[Path], None] | None:
    """`campaign run`'s seal, given --key and --cert (or --pkcs12): the identity loaded and pyHanko found before any
    work; it seals the campaign's registered files as `register` does, before the first phase. None without a key."""
    if not (args.key or args.cert or args.pkcs12):
        if args.tsa is not None:
            raise UsageError("--tsa time-stamps the registration's seal: give --key KEY.pem --cert CERT.pem too")
        return None
    try:
        import cryptography  # noqa: F401
        import pyhanko.sign  # noqa: F401
    except ImportError:
        raise EnvironmentProblemError("--key: sealing needs pyHanko and cryptography, which this machine lacks (a GPU "
                                      "machine may hold only Python, PyTorch and NumPy); nothing was run. "
                                      + WORKSTATION) from None
    from generator.bundle.sign import signing

    identity = signing_identity(args)
    stamper = None if args.tsa is None else signing.timestamper(args.tsa)

    def seal(folder: Path) -> None:
        from generator.audit.sealing.registration import register_campaign
        from generator.seal.unseal import read_seal
        from generator.seal.write import NoTimestampError

        try:
            plan, sealed = register_campaign(folder, signer=signing.cms_signer(identity), certificate=identity.cert,
                                             timestamper=stamper)
        except NoTimestampError as exc:
            raise UsageError(f"--tsa {signing.escaped(args.tsa)}: {exc}; nothing was run: check the URL, or run "
                             "without --tsa (the seal then proves who and what, not when)") from None
        token = read_seal(plan.root).token
        print(f"sealed {len(sealed.registration.files)} files before the first run, signed by "
              f"{signing.escaped(identity.subject)} (SHA-256 {identity.fingerprint})"
              + ("" if token is None else f", time-stamped at {token.time.isoformat().replace('+00:00', 'Z')}"))
        if token is None:
            print("warning: no --tsa: the seal proves who registered and what, not when", file=sys.stderr)
        _wait_for_window(plan, token)

    return seal


def _wait_for_window(plan: RegistrationPlan, token: Token | None) -> None:
    """Runs start in the window, the seal before it: a token at or after the window's start is refused (`check`
    would refuse it), and a window still to come is waited for."""
    import time
    from datetime import UTC

    from generator.audit.recompute.money.cost import parse_local

    window = plan.protocol.window
    start = parse_local(window.start, window.timezone)
    if token is not None and token.time >= start:
        raise UsageError(f"the token's time {token.time.isoformat()} is not before the window's start ({window.start} "
                         f"{window.timezone}): `check` refuses a seal made once the window has started; nothing was "
                         "run: register a new protocol whose window starts after its seal")
    wait = (start - datetime.now(UTC)).total_seconds()
    if wait > 0:
        print(f"sealed before the window: waiting {wait:.0f} s for it to open ({window.start} {window.timezone})")
        time.sleep(wait)


def add_seal_options(p: argparse.ArgumentParser) -> None:
    """--key, --cert, --pkcs12, --allow-readable-key and --tsa: the seal's options, `register`'s and `campaign
    run`'s."""
    p.add_argument("--key", metavar="KEY.pem", help="RSA private key of 2048 bits or more (PEM)")
    p.add_argument("--cert", metavar="CERT.pem", help="its certificate (PEM), or its chain: that certificate first, "
                   "then each intermediate CA up to the root")
    p.add_argument("--pkcs12", metavar="FILE", help="key and certificate in one PKCS#12 file")
    p.add_argument("--allow-readable-key", action="store_true",
                   help="use a private key (or PKCS#12 file) that group or others can read; refused otherwise")
    p.add_argument("--tsa", metavar="URL", help="RFC 3161 time-stamping authority that stamps the signature: the "
                   "proof of when the registration was sealed (the one network request, and only when given)")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `gpu-audit register`."""
    p = sub.add_parser(
        "register",
        help="seal the campaign's registration before the runs: signed, and time-stamped with --tsa",
        description="Write CAMPAIGN_DIR/registration.json: the size, SHA-256 and a copy of protocol.json and of every "
        "file it fixes before the runs (expected IDs, reference, subgroup and split ID files, further corpora, "
        "tariffs, Lab manifest); then registration.json.p7s, a detached CMS signature over its exact bytes with the "
        "team's key, and with --tsa, registration.json.tsr, an RFC 3161 time-stamp over that signature. `check` "
        "then verifies every sealed file and the token's time against the window and the first run. An existing "
        f"seal is refused unless --force. A PKCS#12 passphrase comes from ${PKCS12_PASSPHRASE_ENV} or a prompt; an "
        f"encrypted PEM key's from ${KEY_PASSPHRASE_ENV}. Exit 0 sealed, 2 not sealed.",
    )
    p.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder (see docs/campaign-folder.md)")
    add_seal_options(p)
    p.add_argument("--force", action="store_true",
                   help="replace an existing seal: only before any run, to correct the registration (a seal "
                   "replaced after the runs is the change a seal exists to show)")
    p.set_defaults(handler=_cmd_register)
