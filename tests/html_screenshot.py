"""Screenshot a decision note's HTML in headless Chromium, as a reader's browser window shows it.

    python tests/html_screenshot.py BUNDLE_OR_HTML [--width 1280] [--height 4000] [-o note.png]

Needs Chromium (Debian: `apt-get install chromium`); not part of the test run, since the test machines carry no
browser. It opens the note from its file (no network; the note is self-contained), at the window width given,
and writes one PNG of the first HEIGHT pixels. docs/note.md says what to look at: the width the text takes,
tables that scroll inside their box instead of cutting words, and no word broken without a hyphen.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("note", type=Path, help="a bundle folder or a decision-note.html")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=4000)
    parser.add_argument("-o", "--out", type=Path, default=Path("note.png"))
    args = parser.parse_args()
    page = args.note / "data" / "decision-note.html" if args.note.is_dir() else args.note
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        print("no Chromium found: apt-get install chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               f"--user-data-dir={profile}", f"--window-size={args.width},{args.height}",
                               f"--screenshot={args.out.resolve()}", page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or not args.out.is_file():
        print(done.stderr, file=sys.stderr)
        return 1
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
