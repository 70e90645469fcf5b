"""The campaign folder: its files, the row-to-prediction-file mapping and path safety."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from generator.core.errors import CampaignNotFoundError

PROTOCOL_FILE = "protocol.json"
DEFAULT_FILES = {
    "expected_ids": "expected-ids.csv",
    "reference": "reference.csv",
    "raw_results": "resultats-bruts.csv",
    "tariffs": "tarifs-forfaits.csv",
    "predictions": "predictions/{experiment_id}/{variant_id}/{phase}-{run_index}.csv",
}
_PLACEHOLDER = re.compile(r"\{(experiment_id|variant_id|phase|run_index)\}")


@dataclass(frozen=True)
class CampaignFolder:
    """A campaign folder on disk; every path it hands out stays inside it."""

    root: Path

    def resolve(self, relative: str) -> Path | None:
        """The absolute path of `relative` if it stays inside the folder (symbolic links followed), else None."""
        if not relative or "\\" in relative or "\x00" in relative:
            return None
        pure = PurePosixPath(relative)
        if pure.is_absolute() or re.match(r"^[A-Za-z]:", relative):
            return None
        try:
            candidate = (self.root / pure).resolve(strict=False)
        except (RuntimeError, OSError):  # a symbolic link loop, a name too long: not a usable path
            return None
        if candidate == self.root or not candidate.is_relative_to(self.root):
            return None
        return candidate

    def display(self, relative: str) -> str:
        """How a file is named in findings: its path relative to the campaign folder, with '/'."""
        return str(PurePosixPath(relative))


def is_file(path: Path) -> bool:
    """Whether path is a regular file; a name the file system cannot hold (too long, say) is none."""
    try:
        return path.is_file()
    except OSError:
        return False


def open_campaign(path: Path) -> CampaignFolder:
    """Check that the campaign folder exists and return it, resolved."""
    if not path.exists():
        raise CampaignNotFoundError(f"campaign folder {str(path)!r} does not exist; give the folder holding "
                                    f"{PROTOCOL_FILE}")
    if not path.is_dir():
        raise CampaignNotFoundError(f"{str(path)!r} is not a folder; give the folder holding {PROTOCOL_FILE}")
    return CampaignFolder(root=path.resolve())


def template_example(pattern: str) -> str:
    """The prediction-file template filled with identifiers the schemas allow.

    A schema-valid identifier has no '/' and cannot be '.' or '..', so whether this path stays in the folder
    is whether every schema-valid row's path does: a template that fails here is the protocol's fault, to be
    reported once on files.predictions, not on every grid row.
    """
    return prediction_path(pattern, "experiment", "variant", "cold", 1)


def prediction_path(pattern: str, experiment_id: str, variant_id: str, phase: str, run_index: int) -> str:
    """The prediction file of one run attempt: the protocol's pattern with the row's key filled in."""
    values = {"experiment_id": experiment_id, "variant_id": variant_id, "phase": phase, "run_index": str(run_index)}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], pattern)
