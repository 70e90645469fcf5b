"""The error hierarchy: problems that stop a command (exit status 2), as opposed to findings."""

from __future__ import annotations


class AuditError(Exception):
    """Base of every error that stops a command; the CLI prints it and exits with status 2.

    The message says what failed and what to do about it.
    """

    exit_status = 2


class UsageError(AuditError):
    """The command line asks for something impossible (bad option value, conflicting options)."""


class CampaignNotFoundError(AuditError):
    """The campaign folder given on the command line does not exist or is not a folder."""


class UnreadableInputError(AuditError):
    """An input exists but cannot be read (permissions, I/O error)."""


class OutputExistsError(AuditError):
    """The output path already exists; nothing is ever overwritten."""


class EnvironmentProblemError(AuditError):
    """The machine lacks something the command needs (a library, a GPU, a tool)."""


class LimitExceededError(AuditError):
    """An input exceeds a documented limit (size, nesting); the message names the option that raises it."""


class SecretInInputError(AuditError):
    """An input holds a private key: it is never read as evidence, printed, nor copied into a bundle."""


class UnsafeFileError(UnreadableInputError):
    """A key, certificate, PKCS#12 or trust file that is not a small regular file (a pipe, a device, a folder, too
    large): it is refused before it is read, so it can neither block the command nor fill its memory."""


class ReadableKeyError(AuditError):
    """A private key file that its group or other users can read: refused, as ssh refuses such a key.

    `path` and `mode` say which file and what permission bits it has, so that the caller can name its own way
    of accepting it anyway.
    """

    def __init__(self, message: str, path: str, mode: int) -> None:
        super().__init__(message)
        self.path = path
        self.mode = mode


class EnvironmentFaultError(AuditError):
    """The machine failed the command: disk full, permission denied, an input/output error, out of memory.

    Not a finding and not a bug: the message names the path and what to do, and nothing partial is left.
    """

    @classmethod
    def from_os_error(cls, exc: OSError, target: str | None = None) -> EnvironmentFaultError:
        """The fault an OSError stands for. `target` is what the command was writing: a full disk is named by
        it (the file that hit the limit is a temporary one, removed since), any other fault by its own path."""
        import errno

        named = exc.filename if exc.filename is not None else target
        code = exc.errno
        if code in (errno.ENOSPC, errno.EDQUOT):
            where = target or named or "the output folder"
            return cls(f"{where}: no space left on the device (disk full or quota reached); nothing was written: "
                       "free some space or write somewhere else, then run the command again")
        where = named or target or "a file"
        if code in (errno.EACCES, errno.EPERM):
            return cls(f"{where}: permission denied; check the permissions of that file or folder, or choose one "
                       "you may use, then run the command again")
        if code == errno.EROFS:
            return cls(f"{where}: the file system is read-only; write somewhere else")
        if code == errno.EIO:
            return cls(f"{where}: input/output error (the disk, network share or file system failed); check the "
                       "device, then run the command again")
        if code in (errno.EMFILE, errno.ENFILE):
            return cls(f"{where}: too many open files on this machine; raise the limit (ulimit -n) or close "
                       "other programs, then run the command again")
        if code == errno.ENOMEM:
            return cls(f"{where}: out of memory; free memory or use a machine with more, then run again")
        reason = exc.strerror or type(exc).__name__
        return cls(f"{where}: {reason} (errno {code}); check that file or folder, then run the command again")


class CampaignFindingsError(AuditError):
    """A campaign whose files cannot be used as they are (error findings in them, or files other than the ones
    a decision was computed from): the command stops before writing anything and exits 1, as for findings."""

    exit_status = 1


class LocalTimeError(UsageError):
    """A local date-time or time zone that cannot be placed on the real timeline: a zone that is not an IANA
    name, text that is not YYYY-MM-DDTHH:MM, a time carrying an offset, one the zone skips or shows twice, or
    one outside the dates the zone can place. The message names the value and what to give instead.

    A UsageError still, so that callers mapping those to exit 2 (or to a finding) keep doing so."""


class QuoteError(UsageError):
    """A package quote asked for an impossible number: lots or accepted results that are not a positive whole
    number. The message names the quantity and the values accepted; the command line names its own option.

    A UsageError still, so that callers mapping those to exit 2 keep doing so."""


class InvoiceRefusedError(AuditError):
    """An invoice that `invoice attach` cannot take: not a readable PDF, no Factur-X/ZUGFeRD XML, attachments of
    the names it would add already there, or a signature (a signed invoice is never modified). Nothing is written."""


class InvoiceBundleNotVerifiedError(AuditError):
    """The bundle to attach to an invoice does not verify as `gpu-audit verify` would check it: nothing is
    written and the command exits 1, as `verify` does for a problem."""

    exit_status = 1
