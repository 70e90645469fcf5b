"""The names of a bundle's files, shared by `build` and `verify` (standard library only: `verify` stays light).

The signing order, which leaves no byte unsigned except the signature and the certificate that check it:

1. the payload (`data/...`), then `bagit.txt`, `bag-info.txt` and the payload manifest (`manifest-sha256.txt`;
   format 2 also had `manifest-sha512.txt`, which `verify` still checks in such a bundle);
2. `tagmanifest-sha256.txt`, listing those tag files (not MANIFEST.json, which does not exist yet);
3. `MANIFEST.json`, listing every payload file and every tag file above, the tag manifest included, and the
   bag-info fields; it cannot list itself;
4. `MANIFEST.json.sig`, the signature of MANIFEST.json, and `signer.pem`, the certificate that verifies it.
"""

from __future__ import annotations

import os
from pathlib import Path

MANIFEST = "MANIFEST.json"
MANIFEST_SIG = "MANIFEST.json.sig"
CERT_NAME = "signer.pem"  # generator.bundle.sign.signing.CERT_NAME, repeated so that this module imports nothing
PDF_NAME = "decision-note.pdf"  # generator.render.page.note.PDF_NAME (tests/test_attacks_bundle.py checks they agree)
PDF_PATH = f"data/{PDF_NAME}"
DECISION_PATH = "data/decision.json"
INPUTS_DIR = "data/inputs/"
BAGIT_FILE = "bagit.txt"
BAG_INFO_FILE = "bag-info.txt"
TAG_MANIFEST = "tagmanifest-sha256.txt"
MANIFEST_VERSION = "3"
# The payload manifests of each format gpu-audit wrote, by algorithm. Format 3 keeps SHA-256 alone: the signed
# MANIFEST.json names every file by SHA-256 already, and a second digest (SHA-512, without the processor's
# SHA instructions) cost a large build much processor time (docs/performance.md) for no protection the signature lacks.
PAYLOAD_MANIFESTS_OF = {"2": {"sha256": "manifest-sha256.txt", "sha512": "manifest-sha512.txt"},
                        "3": {"sha256": "manifest-sha256.txt"}}


def tag_manifest_lists(version: str) -> tuple[str, ...]:
    """The tag files the tag manifest lists (step 2) in a bundle of this format."""
    return (BAGIT_FILE, BAG_INFO_FILE, *PAYLOAD_MANIFESTS_OF[version].values())


def signed_tag_files(version: str) -> tuple[str, ...]:
    """The tag files MANIFEST.json lists (step 3) in a bundle of this format."""
    return (*tag_manifest_lists(version), TAG_MANIFEST)


TAG_MANIFEST_LISTS = tag_manifest_lists(MANIFEST_VERSION)
# The WeasyPrint that rendered the note ("WeasyPrint 70.0"): its bytes are reproducible within that version only.
NOTE_RENDERER = "Note-Renderer"
# The bag-info.txt labels gpu-audit writes, in order; any other field is refused by `verify`.
BAG_INFO_LABELS = ("Source-Organization", "Bagging-Date", "Payload-Oxum", "External-Identifier", "Bag-Software-Agent",
                   NOTE_RENDERER)
SELF_CHECKSUM = ("This manifest carries no checksum of itself, to avoid a self-referential checksum: "
                 "MANIFEST.json.sig signs it, and it lists every other file of the bundle (payload and tag files, "
                 "tagmanifest-sha256.txt included) except MANIFEST.json.sig and signer.pem, which verify that "
                 "signature.")


MAX_DEPTH = 32  # folders in a path, in a bundle folder or zip: gpu-audit writes at most five


def walk_bundle(root: Path) -> tuple[set[str], set[str], list[str], list[str]]:
    """Plain files and folders under root (relative, '/'), anything that is neither, and folders too deep.

    Symbolic links are listed as odd and never followed, so every file the verification reads or hashes lies
    inside the bundle. The walk keeps its own stack (a folder thousands of levels deep is a finding, not a
    RecursionError) and does not enter a folder MAX_DEPTH levels down.
    """
    files: set[str] = set()
    folders: set[str] = set()
    odd: list[str] = []
    deep: list[str] = []
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        with os.scandir(folder) as found:
            for entry in found:
                rel = Path(entry.path).relative_to(root).as_posix()
                if entry.is_symlink():
                    odd.append(rel)
                elif entry.is_file(follow_symlinks=False):
                    files.add(rel)
                elif not entry.is_dir(follow_symlinks=False):
                    odd.append(rel)
                elif depth + 1 >= MAX_DEPTH:
                    folders.add(rel)
                    deep.append(rel)
                else:
                    folders.add(rel)
                    stack.append((Path(entry.path), depth + 1))
    return files, folders, sorted(odd), sorted(deep)
