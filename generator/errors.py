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
