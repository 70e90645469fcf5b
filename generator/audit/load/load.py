"""`load`: read every file of a campaign folder into CampaignInputs, with the findings of reading them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from generator.audit.load import names, rentals
from generator.audit.load.campaign import (
    DEFAULT_FILES,
    PROTOCOL_FILE,
    CampaignFolder,
    is_file,
    open_campaign,
    prediction_path,
    template_example,
)
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.access import as_object
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import FurtherCorpus, Protocol
from generator.audit.load.inputs.rows import GridRow, TariffRow
from generator.audit.load.labmanifest import ManifestReading, read_manifest
from generator.audit.load.labmeasure import lab_output_findings
from generator.audit.load.readers.csvtable import Table, decode_utf8, read_bytes, read_table
from generator.audit.load.readers.jsondoc import Document, loads_strict, read_document
from generator.audit.load.readers.predictions import (
    ColumnRules,
    LabelFile,
    known_ids,
    read_ids,
    read_labels,
    size_limit,
)
from generator.seal.record import SEAL_FILES

# The inputs in the order they are read; validation walks them in the same order (each input's load
# findings, then its rules), so that the findings come out in one order whichever stage made them.
SECTIONS = ("protocol", "expected_ids", "reference", "tariffs", "raw_results", "measurements")
_KEY_COLUMNS = ("experiment_id", "variant_id", "phase", "run_index")


@dataclass
class RunFile:
    """The prediction file mapped to one grid row (path None when it would leave the folder)."""

    row_index: int
    relpath: str
    path: Path | None
    exists: bool

    @property
    def readable(self) -> Path | None:
        """The file to read: its path when it exists inside the folder, else None."""
        return self.path if self.exists else None


@dataclass
class FurtherTruth:
    """A further corpus of the useful work with its expected IDs and reference as read (None: not readable), and
    what validation found of them."""

    corpus: FurtherCorpus
    expected: LabelFile | None = None
    reference: LabelFile | None = None
    distinct: bool = False  # set by validation: every expected ID once
    matches: bool = False  # set by validation: the reference labels exactly the expected IDs
    fingerprint: str | None = None  # set by validation when it does: the content fingerprint (corpusprint)


@dataclass
class CampaignInputs:
    """Everything loaded from a campaign folder, with the findings of loading (and of validation, once validated)."""

    folder: CampaignFolder
    protocol: Protocol | None
    files: dict[str, str]
    expected: LabelFile | None = None
    expected_distinct: bool = False  # set by validation: every expected ID once
    reference: LabelFile | None = None
    reference_matches: bool = False  # set by validation: the reference labels exactly the expected IDs
    fingerprint: str | None = None  # set by validation when it does: the first corpus's content fingerprint
    grid: Table | None = None
    tariffs: Table | None = None
    lab_manifest: ManifestReading | None = None  # protocol files.lab_manifest, when given and found
    split_ids: dict[str, LabelFile] = field(default_factory=dict)  # the training and tuning splits' IDs, by name
    subgroup_ids: dict[str, LabelFile] = field(default_factory=dict)  # the planned subgroups' IDs, by subgroup ID
    further: list[FurtherTruth] = field(default_factory=list)  # the further corpora, in the protocol's order
    measurements: dict[str, Document] = field(default_factory=dict)
    measured: dict[str, MeasurementDoc] = field(default_factory=dict)  # the schema-valid measurements, typed
    grid_rows: list[GridRow] = field(default_factory=list)  # the grid's rows typed, aligned with grid.rows
    tariff_rows: list[TariffRow] = field(default_factory=list)  # the tariffs' rows typed
    run_files: list[RunFile] = field(default_factory=list)
    input_files: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # loading's; loading's and validation's once validated
    load_findings: dict[str, list[Finding]] = field(default_factory=lambda: {s: [] for s in SECTIONS})

    @property
    def classes(self) -> set[str] | None:
        return set(self.protocol.classes) if self.protocol else None


def _locate(inputs: CampaignInputs, relpath: str, role: str, section: str, owner: str) -> Path | None:
    """Resolve a path named by an input; a path leaving the folder or a missing file is a finding."""
    out = inputs.load_findings[section]
    path = None if names.refused(relpath) else inputs.folder.resolve(relpath)  # a name the bag cannot carry
    if path is None:
        if owner == PROTOCOL_FILE and inputs.protocol is not None:
            # Validation reports it once, at the protocol field that names it (protocol_rules.check_paths,
            # names.check_names): the loader only leaves it unread.
            return None
        out.append(make_finding("path-outside-campaign", Severity.ERROR, owner,
                                f"{role} path {relpath!r} leaves the campaign folder", value=relpath,
                                rule="paths stay inside the campaign folder",
                                fix="use a relative path inside the campaign folder, without '..' or links out"))
        return None
    if not is_file(path):
        out.append(make_finding("missing-file", Severity.ERROR, relpath, f"{role} file is missing", value=relpath,
                                rule=f"{role} file named by {owner}", fix=f"add {relpath} or correct the path"))
        return None
    inputs.input_files.append(relpath)
    return path


def _load_protocol(folder: CampaignFolder) -> CampaignInputs:
    """The protocol, and the file names it gives (the defaults without a readable protocol)."""
    inputs = CampaignInputs(folder=folder, protocol=None, files=dict(DEFAULT_FILES))
    path = _locate(inputs, PROTOCOL_FILE, "protocol", "protocol", "the campaign folder")
    if path is not None:
        doc = read_document(path, PROTOCOL_FILE, "protocol")
        inputs.load_findings["protocol"].extend(doc.findings)
        named = rentals.reference_findings(as_object(doc.data)) if doc.ok else []
        inputs.load_findings["protocol"].extend(named)  # a rental name that resolves to none or two: not built
        if doc.ok and not named:
            inputs.protocol = Protocol.of(as_object(doc.data))
        if inputs.protocol:
            inputs.files.update(inputs.protocol.files.as_map())
    return inputs


def _load_truth(inputs: CampaignInputs, fast: bool) -> None:
    """The expected IDs, then the reference labels (read alone: on all cores)."""
    files = inputs.files
    path = _locate(inputs, files["expected_ids"], "expected IDs", "expected_ids", PROTOCOL_FILE)
    if path is not None:
        inputs.expected = read_ids(path, files["expected_ids"], fast=fast, threads=True)
        inputs.load_findings["expected_ids"].extend(inputs.expected.problems)
    path = _locate(inputs, files["reference"], "reference", "reference", PROTOCOL_FILE)
    if path is not None:
        # The reference usually lists the expected IDs in their order: their ID checks are then done already.
        known = (known_ids(inputs.expected, ColumnRules.from_schema("labels-row", inputs.classes))
                 if fast and inputs.expected is not None else None)
        inputs.reference = read_labels(path, files["reference"], inputs.classes, Severity.ERROR, fast=fast,
                                       known=known, threads=True,
                                       max_bytes=size_limit(inputs.expected, inputs.classes))
        inputs.load_findings["reference"].extend(inputs.reference.problems)


def _load_further(inputs: CampaignInputs, fast: bool) -> None:
    """Each further corpus's expected IDs, then its reference (their findings are the shared inputs')."""
    for corpus in inputs.protocol.corpora or () if inputs.protocol else ():
        truth = FurtherTruth(corpus)
        path = _locate(inputs, corpus.expected_ids, f"{corpus.name} expected IDs", "expected_ids", PROTOCOL_FILE)
        if path is not None:
            truth.expected = read_ids(path, corpus.expected_ids, fast=fast, threads=True)
            inputs.load_findings["expected_ids"].extend(truth.expected.problems)
        path = _locate(inputs, corpus.reference, f"{corpus.name} reference", "reference", PROTOCOL_FILE)
        if path is not None:
            truth.reference = read_labels(path, corpus.reference, inputs.classes, Severity.ERROR, fast=fast,
                                          threads=True, max_bytes=size_limit(truth.expected, inputs.classes))
            inputs.load_findings["reference"].extend(truth.reference.problems)
        inputs.further.append(truth)


def _load_id_files(inputs: CampaignInputs, fast: bool) -> None:
    """The ID file of each training or tuning split and each planned subgroup the protocol registers (its
    format's findings are the protocol's: a split or a subgroup is part of what the protocol states)."""
    for split in (inputs.protocol.splits or ()) if inputs.protocol else ():
        path = _locate(inputs, split.ids, f"{split.name} split IDs", "protocol", PROTOCOL_FILE)
        if path is not None and split.name not in inputs.split_ids:
            inputs.split_ids[split.name] = read_ids(path, split.ids, fast=fast, threads=True)
            inputs.load_findings["protocol"].extend(inputs.split_ids[split.name].problems)
    for group in inputs.protocol.quality.subgroups if inputs.protocol else ():
        path = _locate(inputs, group.ids, f"{group.id} subgroup IDs", "protocol", PROTOCOL_FILE)
        if path is not None and group.id not in inputs.subgroup_ids:
            inputs.subgroup_ids[group.id] = read_ids(path, group.ids, fast=fast, threads=True)
            inputs.load_findings["protocol"].extend(inputs.subgroup_ids[group.id].problems)


def _load_table(inputs: CampaignInputs, key: str, role: str, schema_name: str) -> Table | None:
    path = _locate(inputs, inputs.files[key], role, key, PROTOCOL_FILE)
    if path is None:
        return None
    table = read_table(path, inputs.files[key], schema_name)
    inputs.load_findings[key].extend(table.findings)
    return table


def _load_lab_manifest(inputs: CampaignInputs) -> None:
    """The Lab archive's MANIFEST.json the protocol names, read for its items and its entry of the tariffs file."""
    rel = inputs.files.get("lab_manifest")
    path = None if rel is None else _locate(inputs, rel, "Lab manifest", "tariffs", PROTOCOL_FILE)
    if rel is None or path is None:
        return
    text, problem = decode_utf8(read_bytes(path, rel), rel)
    if text is None:
        if problem is not None:
            inputs.load_findings["tariffs"].append(problem)
        return
    try:
        inputs.lab_manifest = read_manifest(loads_strict(text))
    except (ValueError, RecursionError) as exc:  # not strict JSON (duplicate keys and NaN included)
        inputs.lab_manifest = ManifestReading(None, f"it is not strict JSON ({exc})", parsed=False)


def _load_measurements(inputs: CampaignInputs) -> None:
    """Each measurement JSON a variant links, once."""
    experiments = inputs.protocol.experiments if inputs.protocol else []
    for exp in experiments:
        for variant in exp.variants:
            rel = variant.measurement
            if not rel or rel in inputs.measurements:
                continue
            path = _locate(inputs, rel, "measurement", "measurements", PROTOCOL_FILE)
            if path is not None:
                doc = inputs.measurements[rel] = read_document(path, rel, "measurement")
                inputs.load_findings["measurements"].extend(doc.findings)
                if doc.ok:
                    inputs.measured[rel] = MeasurementDoc.of(as_object(doc.data))
                else:  # the Lab's own output is named as what it is, with what it lacks
                    linked = [f"{e.id}/{v.id}" for e in experiments for v in e.variants if v.measurement == rel]
                    inputs.load_findings["measurements"].extend(lab_output_findings(rel, doc.data, linked))


def template_stays_inside(inputs: CampaignInputs) -> bool:
    """Whether the prediction-file template keeps a schema-valid row's file in the folder, under a portable name.

    A template that fails is reported once, on protocol.json (protocol_rules.check_paths); its rows then map
    to no file and get no finding of their own.
    """
    pattern = inputs.files["predictions"]
    return inputs.folder.resolve(template_example(pattern)) is not None and not names.refused(pattern)


def _map_run_files(inputs: CampaignInputs, grid: Table) -> None:
    """The prediction file of each grid row with a complete key, first row of a key only (a repeat is a finding)."""
    template_ok = template_stays_inside(inputs)
    seen: set[tuple[str, str, str, int]] = set()
    for index, row in enumerate(inputs.grid_rows):
        if any(row.cell(k) is None for k in _KEY_COLUMNS):
            continue
        key = row.key()
        if key in seen:
            continue
        seen.add(key)
        rel = prediction_path(inputs.files["predictions"], *key)
        path = inputs.folder.resolve(rel) if template_ok else None
        exists = path is not None and is_file(path)
        inputs.run_files.append(RunFile(index, rel, path, exists))
        if exists:
            inputs.input_files.append(rel)


def load_campaign(path: Path, *, fast: bool = True) -> CampaignInputs:
    """Read every input of a campaign folder; what cannot be read is a finding, never an exception.

    Nothing is validated beyond each file's own format and schema: `validate.validate_inputs` applies the
    rules across fields, rows and files. Prediction files are mapped to their grid rows, not read.
    """
    inputs = _load_protocol(open_campaign(path))
    _load_truth(inputs, fast)
    _load_further(inputs, fast)
    _load_id_files(inputs, fast)
    inputs.tariffs = _load_table(inputs, "tariffs", "tariffs", "tariffs-row")
    inputs.tariff_rows = [TariffRow.of(r) for r in inputs.tariffs.rows] if inputs.tariffs else []
    _load_lab_manifest(inputs)
    inputs.grid = _load_table(inputs, "raw_results", "raw results", "raw-results-row")
    inputs.grid_rows = [GridRow.of(r) for r in inputs.grid.rows] if inputs.grid else []
    if inputs.grid is not None:
        _map_run_files(inputs, inputs.grid)
    _load_measurements(inputs)
    # The registration's seal travels with the inputs (in decision.json's fingerprints and the bundle's copies);
    # sealcheck reads it.
    inputs.input_files += [name for name in SEAL_FILES if (seal := inputs.folder.resolve(name)) and is_file(seal)]
    inputs.input_files = sorted(set(inputs.input_files))
    inputs.findings = [f for section in SECTIONS for f in inputs.load_findings[section]]
    return inputs
