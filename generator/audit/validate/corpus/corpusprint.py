"""The corpus's content fingerprint (its expected IDs and their reference labels, canonicalised), and the rules that
tie a corpus's identity to those bytes: a revision that carries a fingerprint matches it, and two corpora of the same
content are one corpus, whatever their names and revisions."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from generator.audit.load.campaign import PROTOCOL_FILE
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.readers import idkeys, idsets
from generator.audit.load.readers.labelfile import LabelFile

__all__ = ["FORM", "carried", "corpora", "fingerprint", "fingerprint_findings", "revision_check"]

# The fingerprint's form, and the one a revision carries it in: `<name>@content-sha256:<hex>` (the name and its `@`
# optional), with all 64 hex digits or the first 16 (`campaign run` registers it: gpu/campaign/corpus_folder). A
# revision without it carries no content fingerprint: the `<name>@sha256:<16 hex>` form `campaign run` registered
# before issue 49 is the SHA-256 of the texts file (eval.jsonl), which no campaign folder holds, so `check` records
# it as written and cannot tie it to bytes (docs/campaign-folder.md).
FORM = "content-sha256:"
_CARRIED = re.compile(r"content-sha256:(.*)\Z", re.IGNORECASE | re.DOTALL)
_DIGITS = re.compile(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{64}", re.ASCII)
_SLICE = 1 << 16  # rows canonicalised at once: the memory is one slice's, whatever the corpus's size


def _labels(reference: LabelFile) -> pa.Array:
    """The reference's labels as strings, from the reader's strings or its class codes."""
    if reference.labels is None and reference.label_codes is not None:
        return pa.array(reference.label_classes, type=pa.string()).take(pa.array(reference.label_codes))
    return idsets.as_array(reference.labels if reference.labels is not None else [])


def _pairs(ids: pa.Array, labels: pa.Array) -> pa.Array:
    """Each row as two netstrings, `<n>:<id>,<m>:<label>,` (n and m the values' UTF-8 lengths in bytes)."""
    def length(column: pa.Array) -> pa.Array:
        return pc.cast(pc.binary_length(column), pa.string())
    return pc.binary_join_element_wise(length(ids), ":", ids, ",", length(labels), ":", labels, ",", "")


def _id_order(ids: pa.Array) -> pa.Array:
    """The rows in the order of their IDs' UTF-8 bytes: IDs of one width by their packed keys (idkeys: the keys
    sort as the IDs do), as they stand when already in that order, else by comparing the strings."""
    packed = idkeys.packed_keys(ids, ids)
    if packed is None:
        return pc.sort_indices(ids)
    keys = packed[0]
    if len(keys) < 2 or bool((keys[1:] > keys[:-1]).all()):
        return pa.array(np.arange(len(keys), dtype=np.int64))
    return pa.array(np.argsort(keys, kind="stable"))


def _joined(rows: pa.Array) -> memoryview | bytes:
    """The bytes of a string array's values, one after the other (its data buffer between its first and last
    offsets)."""
    wide = pa.types.is_large_string(rows.type)
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64 if wide else np.int32)
    start, end = int(offsets[rows.offset]), int(offsets[rows.offset + len(rows)])
    data = rows.buffers()[2]
    return memoryview(data)[start:end] if data is not None else b""


def fingerprint(reference: LabelFile) -> str:
    """`content-sha256:<64 hex>`: the SHA-256 of the reference's (ID, label) pairs sorted by ID (UTF-8 byte order),
    each pair written `<n>:<id>,<m>:<label>,` (n and m their UTF-8 lengths in bytes). Computed on a reference that
    labels exactly the expected IDs, once each: the pairs are then the expected IDs and their labels. The file's
    row order, line endings, BOM, quoting and header do not count; one changed ID or label does."""
    ids, labels = idsets.as_array(reference.ids), _labels(reference)
    order = _id_order(ids)
    digest = hashlib.sha256()
    for start in range(0, len(order), _SLICE):
        take = order.slice(start, _SLICE)
        digest.update(_joined(_pairs(ids.take(take), labels.take(take))))
    return FORM + digest.hexdigest()


def carried(revision: str) -> str | None:
    """What a revision carries after `content-sha256:` (None: it carries no content fingerprint)."""
    found = _CARRIED.search(revision)
    return found.group(1) if found else None


def revision_check(revision: str, computed: str | None) -> str:
    """`matches`, `differs`, `absent` (the revision carries no fingerprint: recorded as written), or
    `unchecked` (it carries one, but the corpus's files are not sound enough to be fingerprinted)."""
    digits = carried(revision)
    if digits is None:
        return "absent"
    if computed is None:
        return "unchecked"
    full = computed.removeprefix(FORM)
    return "matches" if _DIGITS.fullmatch(digits) and full.startswith(digits.lower()) else "differs"


def corpora(protocol: Protocol) -> list[tuple[str, str, str]]:
    """Each corpus of the work: its JSON pointer in the protocol, name and revision, the first corpus first."""
    return [("/corpus", protocol.corpus.name, protocol.corpus.revision),
            *((f"/corpora/{i}", c.name, c.revision) for i, c in enumerate(protocol.corpora or ()))]


def fingerprint_findings(protocol: Protocol, prints: Sequence[str | None]) -> list[Finding]:
    """A revision carrying a fingerprint other than its corpus's content's; a corpus of the same content as an
    earlier one (under another revision: the same revision twice is `corpus-repeated` already)."""
    out: list[Finding] = []
    first: dict[str, tuple[str, str, str]] = {}
    for (where, name, revision), computed in zip(corpora(protocol), prints, strict=True):
        if revision_check(revision, computed) == "differs":
            out.append(make_finding(
                "corpus-fingerprint-mismatch", Severity.ERROR, PROTOCOL_FILE, f"the corpus {name!r} registers the "
                f"revision {revision!r}, whose content fingerprint is not that of its expected IDs and reference "
                f"labels ({computed})", field=f"{where}/revision", claimed=revision, recomputed=computed,
                rule="a revision that carries a content fingerprint (content-sha256:) carries its corpus's: all 64 "
                     "hex digits or the first 16",
                fix=f"register the revision these files have, <name>@{computed} (or its first 16 hex digits), or "
                    "put back the expected IDs and reference the revision was registered with"))
        if computed is None:
            continue
        earlier = first.setdefault(computed, (where, name, revision))
        if earlier[0] != where and earlier[2] != revision:
            out.append(make_finding(
                "corpus-repeated", Severity.ERROR, PROTOCOL_FILE, f"the corpus {name!r} (revision {revision!r}) "
                f"holds the same expected IDs and reference labels as the corpus {earlier[1]!r} (revision "
                f"{earlier[2]!r}): one corpus registered twice", field=f"{where}/revision", value=revision,
                claimed=revision, recomputed=computed,
                rule="each corpus of the useful work once: two corpora of the same content (the same "
                     "expected IDs and labels, in any order) are one corpus, whatever their names and revisions",
                fix=f"list the corpus once (remove {where} and its runs); a second run over the same texts is a "
                    "repeat, never a second accepted result"))
    return out
