"""Import WeasyPrint without the 0.3 s that ctypes spends spawning gcc and ld for library names that do not exist."""

from __future__ import annotations

import ctypes.util
import importlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType


def load_weasyprint() -> ModuleType:
    """The weasyprint module; on Linux imported with the dynamic linker's cache as the only library lookup.

    WeasyPrint tries several spellings of each library it loads (Windows, macOS and Linux ones). On Linux,
    every spelling that does not exist makes `ctypes.util.find_library` run ldconfig, then gcc, then ld:
    16 misses, about 0.3 s of every render and build. One read of the ldconfig cache answers the spellings
    that exist, and each list ends with the library's soname, which the dynamic loader opens itself, so
    nothing that the slow lookup would find is lost.
    """
    if "weasyprint" in sys.modules or not sys.platform.startswith("linux"):
        return importlib.import_module("weasyprint")
    with _replaced_find_library(_ldconfig_lookup()):
        return importlib.import_module("weasyprint")


def _ldconfig_lookup() -> Callable[[str], str | None]:
    """find_library's answer from one reading of `ldconfig -p`: the first cached `libNAME.*`, or None."""
    try:
        listing = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, check=False, timeout=10,
                                 env={"LC_ALL": "C", "LANG": "C"}).stdout
    except (OSError, subprocess.SubprocessError):
        listing = b""  # no cache to read: every spelling but the soname misses, as it would without gcc

    def find_library(name: str) -> str | None:
        found = re.search(rb"\s(lib%s\.\S+)\s" % re.escape(os.fsencode(name)), listing)
        return os.fsdecode(found.group(1)) if found else None

    return find_library


@contextmanager
def _replaced_find_library(lookup: Callable[[str], str | None]) -> Iterator[None]:
    """ctypes.util.find_library replaced for the duration of one import, then given back."""
    original = ctypes.util.find_library
    ctypes.util.find_library = lookup
    try:
        yield
    finally:
        if ctypes.util.find_library is lookup:
            ctypes.util.find_library = original
