"""The fonts fontconfig knows, asked through its `fc-list` tool: the library WeasyPrint's Pango finds fonts with."""

from __future__ import annotations

import shutil
import subprocess


def font_files(family: str) -> list[str] | None:
    """The font files of `family` that fontconfig lists, sorted (empty when it has none); None when fontconfig's
    `fc-list` is not installed."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    listed = subprocess.run([fc_list, f":family={family}", "file"], capture_output=True, text=True, check=False,
                            timeout=30).stdout
    return sorted({line.rsplit(":", 1)[0] for line in listed.splitlines() if line.strip()})
