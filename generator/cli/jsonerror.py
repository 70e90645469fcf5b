"""The JSON a `--json` command prints when it stops (an `error` object: code, message, fix), and the parser whose
usage errors reach it instead of ending the process inside argparse."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from generator.core import errors

INTERNAL = "internal-error"
INTERRUPTED = "interrupted"


class CommandLineError(errors.UsageError):
    """A usage error argparse found: its message, and the name and usage line of the (sub)command it concerns."""

    def __init__(self, message: str, prog: str, usage: str) -> None:
        super().__init__(message)
        self.prog = prog
        self.usage = usage

    def as_argparse_prints_it(self) -> str:
        """The text argparse prints on stderr for it: the usage line, then `PROG: error: MESSAGE`."""
        return f"{self.usage}{self.prog}: error: {self}\n"


class Parser(argparse.ArgumentParser):
    """argparse's parser, except that a usage error is raised as a CommandLineError rather than printed with an
    exit inside argparse: the CLI prints it as argparse would and, under `--json`, as a JSON error too.
    `--help` and `--version` still end the process with status 0 (`exit`, not overridden)."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(message, self.prog, self.format_usage())


# (class, code, standard fix): a stopping error's code is its class's, or its nearest listed base class's.
_KINDS: tuple[tuple[type[BaseException], str, str], ...] = (
    (errors.ReadableKeyError, "readable-key",
     "make the key file readable by its owner only (chmod 600 FILE), then run the command again"),
    (errors.UnsafeFileError, "unsafe-file", "give a small regular file, not a pipe, device or folder"),
    (errors.CampaignNotFoundError, "campaign-not-found", "give the campaign folder, the one holding protocol.json"),
    (errors.UnreadableInputError, "unreadable-input",
     "check that the file named is the right one, is complete and can be read, then run the command again"),
    (errors.OutputExistsError, "output-exists", "choose a new file or folder name (nothing is ever overwritten)"),
    (errors.EnvironmentProblemError, "environment-missing",
     "install what the message names (README, set-up on a fresh machine) or run the command where it is"),
    (errors.EnvironmentFaultError, "environment-fault",
     "remedy what the message names (disk space, permissions, the device), then run the command again"),
    (errors.LimitExceededError, "limit-exceeded",
     "check that the input is the one meant; if it is genuine, raise the --max-... option the message names"),
    (errors.SecretInInputError, "secret-in-input",
     "move the private key out of the inputs (keys are never evidence), then run the command again"),
    (errors.CampaignFindingsError, "campaign-findings",
     "run `gpu-audit check` on the campaign and correct its error findings first"),
    (errors.InvoiceRefusedError, "invoice-refused",
     "ask the provider for its Factur-X or ZUGFeRD invoice as issued (a PDF/A-3 with its XML), unsigned"),
    (errors.InvoiceBundleNotVerifiedError, "bundle-not-verified",
     "run `gpu-audit verify` on the bundle with the signer's trust anchor, and obtain a bundle that verifies"),
    (errors.UsageError, "usage",
     "correct the command line (`gpu-audit COMMAND --help` lists its arguments), then run it again"),
    (errors.AuditError, "refused", "do what the message says, then run the command again"),
)

# Words an instruction starts with: a message "what is wrong; what to do" gives its own fix after the "; ".
_IMPERATIVES = frozenset(
    "add ask attach build change check chmod choose close compare contact convert copy correct create delete download "
    "free give install keep make move obtain pass put raise re-run rebuild regenerate register remove rename "
    "replace request rerun run save seal select send set sign try unzip update use verify".split())


def code_and_fix(exc: BaseException) -> tuple[str, str]:
    """The error's code, and what to do: its own `fix` attribute, else the instruction its message ends with
    (the clauses after `; ` from the first that starts with an imperative), else its code's standard fix."""
    code, fix = INTERNAL, "report it to the gpu-audit maintainers with the traceback file the message names"
    for kind, kind_code, kind_fix in _KINDS:
        if isinstance(exc, kind):
            code, fix = kind_code, kind_fix
            break
    own = getattr(exc, "fix", None)
    if isinstance(own, str) and own:
        return code, own
    if code == INTERNAL:
        return code, fix
    if isinstance(exc, CommandLineError):
        which = ("`gpu-audit --help` lists the commands, `gpu-audit COMMAND --help` a command's arguments"
                 if exc.prog == "gpu-audit" else f"`{exc.prog} --help` lists its arguments")
        return code, f"correct the command line ({which}), then run it again"
    clauses = str(exc).split("; ")
    for i, clause in enumerate(clauses[1:], 1):
        first = clause.split(maxsplit=1)[0].rstrip(",:").lower() if clause.strip() else ""
        if first in _IMPERATIVES:
            own = "; ".join(clauses[i:]).strip()
            while own.endswith(")") and own.count(")") > own.count("("):  # the clause began inside brackets
                own = own[:-1].rstrip()
            return code, own
    return code, fix


def json_requested(argv: Sequence[str], args: argparse.Namespace | None) -> bool:
    """Whether the command's output is JSON: its parsed `--json`, or, where the command line did not parse,
    `--json` (or the abbreviation argparse accepts for it) among the arguments before any `--`."""
    if args is not None:
        return bool(getattr(args, "json", False))
    for arg in argv:
        if arg == "--":
            return False
        option = arg.split("=", 1)[0]
        if len(option) >= 3 and "--json".startswith(option):
            return True
    return False


def print_error(code: str, message: str, fix: str, status: int) -> None:
    """Print the one JSON object of a command that stopped: `{"error": {code, message, fix}, "exit_status"}`.
    ASCII only (json escapes every other character), so that no file name can drive the terminal."""
    text = json.dumps({"error": {"code": code, "fix": fix, "message": message}, "exit_status": status},
                      indent=2, sort_keys=True, ensure_ascii=True)
    print(text, file=sys.stdout)
