"""WeasyPrint imported on first use, with a clear error when it or its system libraries are missing."""

from __future__ import annotations

import importlib
import importlib.metadata
from types import ModuleType

from generator.core.errors import EnvironmentProblemError

DISTRIBUTION = "weasyprint"


def load_weasyprint() -> ModuleType:
    """The weasyprint module, imported on first use: it loads Pango, HarfBuzz and fontconfig, a second's work
    that only the commands which render pay.

    A missing WeasyPrint, or one whose system libraries cannot be loaded (WeasyPrint raises OSError from
    its library lookup), is an EnvironmentProblemError that says what to install.
    """
    try:
        return importlib.import_module("weasyprint")
    except ImportError as exc:
        raise EnvironmentProblemError(
            f"WeasyPrint could not be imported ({exc}); install gpu-audit with its dependencies "
            "(`pip install .`) to render the note") from None
    except OSError as exc:
        raise EnvironmentProblemError(
            f"WeasyPrint could not load its system libraries ({exc}); install Pango (1.44 or newer) and its "
            "fontconfig and HarfBuzz with the system's package manager, as WeasyPrint's installation guide "
            "says, to render the note") from None


def weasyprint_version() -> str:
    """The installed WeasyPrint's version, e.g. "70.0": a note's PDF is byte-identical only within one."""
    return importlib.metadata.version(DISTRIBUTION)
