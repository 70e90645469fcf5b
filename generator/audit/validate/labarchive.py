"""The IteraGPU Lab archive's structure as the seeds give it (004 Inhalt), for a campaign that names its manifest.

The manifest is the complete list of the archive's nine items: the sizes and SHA-256 of its eight content files
(the README the seeds are, `mesure-memoire.ipynb`, `mesure_memoire.py`, `protocole-qualite.md`,
`resultats-bruts.csv`, `calcul_forfaits.py`, `tarifs-forfaits.csv`, `LICENSE.txt`), and `MANIFEST.json` itself,
which declares itself without a checksum. Its `tarifs-forfaits.csv` holds 45 prices: 15 models x 3 durations
(3, 7 and 30 days). A campaign that names the manifest (protocol `files.lab_manifest`) presents its tariffs file
as that file: both are held to this structure, and each departure is an error (`lab-manifest-structure`,
`lab-tariffs-structure`). A campaign's own tariffs file, with no manifest named, may hold only the rows it needs.
Even a manifest of the right structure is a file the campaign carries: it makes a price the provider's as
stated in this campaign, never an authenticated one (`gpu-audit invoice check` is the confirmation).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.labmanifest import LAB_FILES, MANIFEST_NAME, TARIFFS_NAME, ManifestItem, as_json, is_lab_name
from generator.core.termtext import counted

E = Severity.ERROR
LAB_DURATIONS = (3, 7, 30)
LAB_MODELS = 15
_README = "README"  # the README's slot: its name is the seeds' own, whatever its extension
_MANIFEST_RULE = ("the Lab archive's MANIFEST.json lists its nine items: the size and SHA-256 of the eight content "
                  "files, and itself without a checksum")
_MANIFEST_FIX = ("copy the MANIFEST.json of the Lab archive the tariffs came from, unchanged, or remove "
                 "files.lab_manifest and name each provider price's source in the tariffs' source column")
_TARIFFS_RULE = "the Lab archive's tarifs-forfaits.csv holds 45 prices: 15 models x 3 durations (3, 7 and 30 days)"
_TARIFFS_FIX = ("copy tarifs-forfaits.csv from the Lab archive unchanged, or remove files.lab_manifest and keep "
                "the rows the campaign needs, each provider price with its source")


def _slot(name: str) -> str:
    """The item of the nine a file name fills: the README under any extension, the others by name."""
    return name if name in LAB_FILES or name == MANIFEST_NAME else _README


def _structure(manifest: str, message: str, field: str | None, claimed: object, recomputed: object) -> Finding:
    return make_finding("lab-manifest-structure", E, manifest, message, field=field or None, claimed=claimed,
                        recomputed=recomputed, rule=_MANIFEST_RULE, fix=_MANIFEST_FIX)


def _container(items: Sequence[ManifestItem]) -> str:
    """The JSON pointer of the list or object holding most items ("" for the document itself)."""
    parents = Counter(item.pointer.rsplit("/", 1)[0] for item in items)
    return parents.most_common(1)[0][0] if parents else ""


def _membership(items: Sequence[ManifestItem], manifest: str) -> list[Finding]:
    """The nine items, each once: the ones missing (one finding) and each one beyond them."""
    out: list[Finding] = []
    filled: dict[str, str] = {}
    for item in items:
        slot = _slot(item.name) if is_lab_name(item.name) else None
        if slot is not None and filled.setdefault(slot, item.name) == item.name:
            continue
        out.append(_structure(manifest, f"{manifest} lists {item.name!r} at {item.pointer}, which is not one of the "
                              f"Lab archive's nine items" + (f" (its README is {filled[slot]!r} already)" if slot
                                                             else ""), item.pointer, item.name, "not listed"))
    missing = [name for name in (_README, *LAB_FILES, MANIFEST_NAME) if name not in filled]
    if missing:
        where = _container(items)
        out.insert(0, _structure(manifest, f"{manifest} lists {len(filled)} of the Lab archive's nine items; "
                                 f"missing: {', '.join(missing)}", where, counted(len(filled), "item"), "9 items"))
    return out


def _checksums(item: ManifestItem, manifest: str) -> list[Finding]:
    """A content file's size and SHA-256; none of the manifest itself."""
    if _slot(item.name) == MANIFEST_NAME:
        if item.sha256 is None:
            return []
        return [_structure(manifest, f"{manifest} lists a SHA-256 of itself at {item.pointer}: the Lab's manifest "
                           "declares itself without a checksum, which no file can hold of itself",
                           f"{item.pointer}/{item.sha256[0]}", as_json(item.sha256[1]), "no checksum")]
    out = []
    for key, ok, what, wanted in ((item.size, item.size_ok(), "size", "a whole number of bytes"),
                                  (item.sha256, item.sha256_ok(), "SHA-256", "64 hex digits")):
        if ok:
            continue
        if key is None:
            out.append(_structure(manifest, f"{manifest} lists {item.name} at {item.pointer} with no {what}",
                                  item.pointer, f"no {what}", wanted))
        else:
            out.append(_structure(manifest, f"{manifest} lists {item.name} with a {what} of {as_json(key[1])}, not "
                                  f"{wanted}", f"{item.pointer}/{key[0]}", as_json(key[1]), wanted))
    return out


def _agreement(group: Sequence[ManifestItem], manifest: str) -> list[Finding]:
    """One content file listed more than once: every complete entry the same size and SHA-256."""
    complete = [i for i in group if i.checksum() is not None]
    if not complete:
        return _checksums(next((i for i in group if i.size or i.sha256), group[0]), manifest)
    first = complete[0]
    other = next((i for i in complete[1:] if i.checksum() != first.checksum()), None)
    if other is None or first.name == TARIFFS_NAME:  # the tariffs' own entry: lab-manifest-refused says so
        return []
    return [_structure(manifest, f"{manifest} lists {first.name} at {first.pointer} and again at {other.pointer}, "
                       "differently", other.pointer, "twice, differently", "once")]


def manifest_structure_findings(items: Sequence[ManifestItem], manifest: str) -> list[Finding]:
    """The manifest against the archive's structure: its nine items, each content file's size and SHA-256, no
    checksum of itself. An item may be listed more than once (its name apart from its digests): its entries are
    read together."""
    groups: dict[str, list[ManifestItem]] = {}
    for item in items:
        if is_lab_name(item.name):
            groups.setdefault(item.name, []).append(item)
    out = _membership(items, manifest)
    for name, group in groups.items():
        if _slot(name) == MANIFEST_NAME:
            out.extend(_checksums(next((i for i in group if i.sha256), group[0]), manifest))
        else:
            out.extend(_agreement(group, manifest))
    return out


def _tariffs(tariffs: str, message: str, line: int | None, field: str, claimed: object, recomputed: object
             ) -> Finding:
    return make_finding("lab-tariffs-structure", E, tariffs, message, line=line, field=field, claimed=claimed,
                        recomputed=recomputed, rule=_TARIFFS_RULE, fix=_TARIFFS_FIX)


def tariffs_structure_findings(keys: Sequence[tuple[str, int, int]], tariffs: str) -> list[Finding]:
    """A tariffs file presented as the Lab's, (gpu, duration_days, line) per complete row: 15 models, each priced
    for 3, 7 and 30 days (a key priced twice is `duplicate-tariff`'s)."""
    out: list[Finding] = []
    durations: dict[str, set[int]] = {}
    first_line: dict[str, int] = {}
    for gpu, days, line in keys:
        first_line.setdefault(gpu, line)
        durations.setdefault(gpu, set())
        if days in LAB_DURATIONS:
            durations[gpu].add(days)
        else:
            out.append(_tariffs(tariffs, f"{gpu} for {days} days: the Lab's tariffs price 3, 7 and 30 days only",
                                line, "duration_days", days, "3, 7 or 30"))
    for gpu, line in first_line.items():
        missing = " or ".join(f"{d}-day" for d in LAB_DURATIONS if d not in durations[gpu])
        if missing:
            priced = ", ".join(str(d) for d in sorted(durations[gpu])) or "none of them"
            out.append(_tariffs(tariffs, f"{gpu} has no {missing} price; the Lab's tariffs price each model for "
                                "3, 7 and 30 days", line, "gpu", priced, "3, 7, 30"))
    if len(first_line) != LAB_MODELS:
        out.insert(0, _tariffs(tariffs, f"{tariffs} prices {len(first_line)} models; the Lab archive's tariffs "
                               f"price {LAB_MODELS}", None, "gpu", f"{len(first_line)} models", f"{LAB_MODELS} models"))
    return out
