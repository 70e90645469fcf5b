"""Names that survive the bag: an input's path must read back the same from the bundle's manifests.

`build` copies every input to `data/inputs/PATH` and lists it in the BagIt manifests. A name that those
manifests cannot carry exactly is refused where the protocol names it, before anything is read or copied: a
bundle that its own `verify`, or `bagit.py --validate`, then rejects must never be built. Seen before this
rule (issue 17): a trailing space is stripped from the manifest line, `bagit.py` does not decode `%25` (so a
literal `%` never reads back), and `str.splitlines` ends a manifest line at U+2028 or U+0085.
"""

from __future__ import annotations

import re

from generator.audit.load.campaign import template_example
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol

CODE = "file-name-not-portable"
RULE = ("an input's path reads back the same from the bundle's BagIt manifests and from bagit.py: no '%', "
        "backslash, control character or line or paragraph separator, no empty, '.' or '..' part, and no part "
        "that starts or ends with white space")
FIX = "rename the file (and its path in protocol.json) to letters, digits, '.', '_' and '-'"

# C0 and C1 controls and DEL (CR and LF end a manifest line; a control in a zip entry name is refused by
# `verify`), the characters str.splitlines also ends a line at (U+001C-U+001E, U+0085, U+2028, U+2029), '%'
# (RFC 8493 encodes it as %25, which bagit.py never decodes) and the backslash (a separator elsewhere).
_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029%\\\\]")


def name_problem(relpath: str) -> str | None:
    """Why `relpath` (a path relative to the campaign folder, '/' separators) cannot round-trip through the
    bag, else None."""
    bad = _FORBIDDEN.search(relpath)
    if bad is not None:
        char = bad.group(0)
        shown = repr(char) if char in "%\\" else f"U+{ord(char):04X}"
        return f"it holds {shown}, which the bag's manifests or bagit.py would read back as another name"
    for part in relpath.split("/"):
        if part in ("", ".", ".."):
            return f"it has an empty, '.' or '..' part ({part!r}): the bag's copy would be listed under another name"
        if part != part.strip():
            return f"its part {part!r} starts or ends with white space, which a manifest line loses"
    return None


def check_names(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """One finding per path the protocol names (files.*, the prediction template, each variant's measurement)
    that cannot round-trip, at its field; the loader then reads and copies none of them (`refused`). Run after
    protocol_rules.check_paths, whose findings it does not repeat."""
    named = [(f"/files/{key}", value) for key, value in sorted(protocol.files.as_map().items())]
    for i, exp in enumerate(protocol.experiments):
        for j, variant in enumerate(exp.variants):
            if variant.measurement is not None:
                named.append((f"/experiments/{i}/variants/{j}/measurement", variant.measurement))
    named += [(field, relpath) for field, _, relpath in protocol.id_files()]
    outside = {f.field for f in out if f.code == "path-outside-campaign" and f.file == file}
    for field, relpath in named:
        if field in outside:
            continue  # one finding per field: a path that leaves the folder is refused as that already
        # A run's prediction file is the template filled with identifiers the schema keeps safe: the template
        # decides, and is reported once, never on each grid row.
        problem = name_problem(template_example(relpath) if field == "/files/predictions" else relpath)
        if problem is not None:
            out.append(make_finding(CODE, Severity.ERROR, file,
                                    f"the path {relpath!r} cannot be copied into the bundle: {problem}",
                                    field=field, value=relpath, rule=RULE, fix=FIX))


def refused(relpath: str) -> bool:
    """Whether the loader must skip this path (its finding is at the protocol field that names it)."""
    return name_problem(relpath) is not None
