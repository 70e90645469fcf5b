"""`check`: load, validate, recompute acceptance per prediction file, recompute and gate, assemble decision.json."""

from __future__ import annotations

import contextvars
import os
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from cryptography import x509

from generator import __version__
from generator.audit.load.campaign import is_file
from generator.audit.load.findings import Finding, Severity, count_by_severity, sort_key
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.load import CampaignInputs, RunFile, load_campaign
from generator.audit.load.readers import idsets
from generator.audit.load.readers.boundedread import read_bounded, second_line_starts
from generator.audit.load.readers.predictions import (
    ColumnRules,
    LabelFile,
    known_ids,
    parse_label_bytes,
    refused,
    size_limit,
)
from generator.audit.recompute.decision.decision import recompute
from generator.audit.recompute.decision.gate import decide, withhold
from generator.audit.recompute.decision.model import (
    CampaignSummary,
    Decision,
    DecisionDocument,
    InputFingerprint,
    QualityRule,
    Recomputation,
    RegistrationStatus,
    Tool,
)
from generator.audit.recompute.quality import corpora, subgroups
from generator.audit.recompute.quality.acceptance import (
    Acceptance,
    Truth,
    assess_run,
    assess_run_reference,
    prepare_truth,
)
from generator.audit.recompute.quality.reproduction import reproduction_findings
from generator.audit.recompute.quality.subgroups import GroupTruth
from generator.audit.sealing.sealcheck import check_seal
from generator.audit.validate import followons
from generator.audit.validate.attribution import attribute, owners_of
from generator.audit.validate.tariffs import tariffs_proof
from generator.audit.validate.validate import validate_inputs
from generator.core.jsonvalue import JsonDocument
from generator.core.system.safefiles import sha256_file

# Prediction files read, parsed and assessed at once, each in a worker thread of its own (reading, hashing,
# parsing and the column-wise assessment release the GIL): one per core of the machines this runs on, and the
# bound on memory (docs/performance.md). Finished files are reduced to their findings and acceptance.
PARALLEL_FILES = 2
Progress = Callable[[str, int, int], None]
# Where a prediction file is read from, given its path and name: `build` copies it into the bundle first and
# has the copy read, so that what is checked and hashed is what the bundle holds.
ReadFrom = Callable[[Path, str], Path]


@dataclass(frozen=True)
class _Outcome:
    """One run's prediction file reduced to what the decision needs (its columns are released)."""

    size: int | None = None
    digest: str | None = None  # None: the file is missing
    problems: list[Finding] = field(default_factory=list)
    acceptance: Acceptance | None = None
    copy_of: int | None = None  # the same bytes, parsed and assessed by the job of this run (its index)


@dataclass
class CheckResult:
    """The decision document, its findings (sorted) and the loaded inputs."""

    decision: JsonDocument  # decision.json as JSON (document.to_json_dict()); `document` is its typed form
    findings: list[Finding]
    inputs: CampaignInputs
    document: DecisionDocument  # the same decision, typed

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]


def decision_time() -> str:
    """When the decision is made: SOURCE_DATE_EPOCH when set (reproducible builds), else now, UTC."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch and epoch.isdigit() else datetime.now(UTC)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class _PlainTruth:
    """A corpus's truth as plain lists (the reference path): the expected IDs, their labels, the subgroups."""

    expected: list[str]
    reference: dict[str, str]
    groups: tuple[GroupTruth, ...] = ()


@dataclass
class _Judge:
    """What each run is assessed against, per corpus revision: the prepared truth (column-wise) or plain lists (the
    reference path). A run naming no registered corpus is judged against the first (its row is a finding)."""

    protocol: Protocol
    truths: dict[str, Truth] = field(default_factory=dict)
    plain: dict[str, _PlainTruth] = field(default_factory=dict)
    prints: dict[str, str | None] = field(default_factory=dict)  # each registered revision's content fingerprint

    def assess(self, labels: LabelFile | None, revision: str | None) -> Acceptance:
        first = self.protocol.corpus.revision
        if self.truths:
            acc = assess_run(self.truths.get(revision or first, self.truths[first]), labels, self.protocol)
        else:
            truth = self.plain.get(revision or first, self.plain[first])
            acc = assess_run_reference(truth.expected, truth.reference, labels, self.protocol, truth.groups)
        acc.corpus = self.prints.get(revision or "")  # a run naming no registered corpus counts under its own name
        return acc


def _judge(inputs: CampaignInputs, fast: bool) -> _Judge | None:
    """The truth runs are judged against; None when there is none to judge against.

    Acceptance is recomputed only against a sound truth: distinct expected IDs, each labelled exactly once.
    A window that cannot be placed on a timeline leaves nothing to decide either.
    """
    protocol, expected, reference = inputs.protocol, inputs.expected, inputs.reference
    timeline = not any(f.code in {"unknown-timezone", "window-out-of-range"} for f in inputs.findings)
    if not (protocol and expected is not None and reference is not None and timeline and expected.readable
            and inputs.expected_distinct and inputs.reference_matches):
        return None
    further = [(t.corpus.revision, t.expected, t.reference) for t in inputs.further
               if t.expected is not None and t.reference is not None and t.expected.readable and t.distinct
               and t.matches]
    if len(further) < len(protocol.corpora or ()):
        return None  # every corpus of the work is judged, or none: a configuration needs all of them
    groups = subgroups.prepare(protocol.quality, idsets.as_array(expected.ids), inputs.subgroup_ids)
    judge = _Judge(protocol, prints={t.corpus.revision: t.fingerprint for t in inputs.further})
    judge.prints[protocol.corpus.revision] = inputs.fingerprint
    # Planned subgroups are of the first corpus; each corpus is judged against its own expected IDs and labels.
    for revision, ids, labels, planned in [(protocol.corpus.revision, expected, reference, groups),
                                           *((r, e, f, ()) for r, e, f in further)]:
        if fast:
            judge.truths[revision] = prepare_truth(ids.ids, True, labels, sorted(protocol.classes), planned)
        else:
            judge.plain[revision] = _PlainTruth(
                list(idsets.as_array(ids.ids).to_pylist()),
                dict(zip(idsets.as_array(labels.ids).to_pylist(), idsets.as_array(labels.labels).to_pylist(),
                         strict=False)), planned)
        labels.release_columns()  # the truth holds the labels now, in the expected order: one copy in memory
    return judge


@dataclass
class _Assessed:
    """What the prediction files give: their findings, each grid row's acceptance, the inputs' fingerprints."""

    findings: list[Finding] = field(default_factory=list)
    acceptances: dict[int, Acceptance] = field(default_factory=dict)
    hashed: dict[str, tuple[int, str]] = field(default_factory=dict)  # path -> (bytes, SHA-256) read already


class _PredictionFiles:
    """Reads, parses and assesses the prediction files of the grid rows; their outcomes are taken in order."""

    def __init__(self, inputs: CampaignInputs, judge: _Judge | None, fast: bool, progress: Progress | None,
                 read_from: ReadFrom | None = None):
        self.inputs, self.judge, self.fast, self.progress = inputs, judge, fast, progress
        self.read_from = read_from
        self.rules = ColumnRules.from_schema("labels-row", inputs.classes)
        self.known = known_ids(inputs.expected, self.rules) if fast and inputs.expected is not None else None
        # Each further corpus's expected IDs, for the prediction files of its runs (the first's are `known`).
        self.known_further = {t.corpus.revision: known_ids(t.expected, self.rules) for t in inputs.further
                              if fast and t.expected is not None}
        self.max_bytes = max([size_limit(e, inputs.classes) or 0 for e in
                              [inputs.expected, *(t.expected for t in inputs.further)]]) or None
        self.out = _Assessed()
        for lf, rel in ((inputs.expected, inputs.files["expected_ids"]), (inputs.reference, inputs.files["reference"])):
            if lf is not None and lf.sha256 is not None and lf.size is not None:
                self.out.hashed[rel] = (lf.size, lf.sha256)
        # Repeated runs of a deterministic model write byte-identical prediction files: the column-wise path
        # parses and assesses each distinct content once, and gives its copies the same findings and
        # acceptance under their own names (same bytes, same truth, same rule: the same answer). Whichever
        # job hashes a content first claims it; the answer does not depend on which one that is.
        self._lock = threading.Lock()
        self._claimed: dict[tuple[str, str | None], int] = {}  # content and corpus -> the run whose job parses it
        self._jobs: dict[int, Future[_Outcome]] = {}  # runs sent and not yet taken
        self._first: dict[tuple[str, str | None], _Outcome] = {}  # content and corpus -> its outcome, once taken
        self._taken = 0  # outcomes taken so far (the progress shown)

    def sending_order(self) -> list[int]:
        """The runs in the order their files are sent to the workers: first those whose first row is not the
        first expected ID, then the others in grid order. A file out of order has all its IDs sorted, several
        times the work of one in order: sent last, it would leave the other worker idle at the end. The
        outcomes do not depend on the order."""
        runs = self.inputs.run_files
        if self.known is None or not len(self.known.ids):
            return list(range(len(runs)))
        start = str(self.known.ids[0].as_py()).encode("utf-8") + b","
        in_order = [run.readable is None or second_line_starts(run.readable, run.relpath, start) for run in runs]
        return sorted(range(len(runs)), key=in_order.__getitem__)  # stable: grid order within each group

    def start(self, pool: ThreadPoolExecutor, i: int, run: RunFile) -> None:
        """Send a run's file to a worker (in a copy of this context: the command's limits apply there too)."""
        self._jobs[i] = pool.submit(contextvars.copy_context().run, self._assess_file, i, run)

    def _assess_file(self, i: int, run: RunFile) -> _Outcome:
        """In a worker: read and hash the file, then (unless its bytes were claimed) parse and assess it."""
        source = run.readable
        if source is None:
            return _Outcome()
        # Read in blocks and hashed on the way; a file too large for the corpus, or with a line too long for
        # any row, is refused unparsed (memory: one block) and its SHA-256 still computed.
        path = source if self.read_from is None else self.read_from(source, run.relpath)
        raw = read_bounded(path, run.relpath, max_bytes=self.max_bytes, severity=Severity.WARNING)
        size, digest = raw.size, raw.sha256
        corpus = self.corpus_of(run)
        if self.fast:
            with self._lock:
                first = self._claimed.setdefault((digest, corpus), i)
            if first != i:
                return _Outcome(size, digest, copy_of=first)
        if raw.data is None:
            labels = refused(raw, run.relpath)
        else:
            labels = parse_label_bytes(raw.data, run.relpath, self.rules, Severity.WARNING, fast=self.fast,
                                       known=self.known_further.get(corpus or "", self.known))
        del raw  # the bytes, before the assessment adds its own arrays
        acceptance = self.judge.assess(labels, corpus) if self.judge is not None else None
        return _Outcome(size, digest, labels.problems, acceptance)

    def corpus_of(self, run: RunFile) -> str | None:
        """The corpus revision the run's grid row names (the same bytes are another answer on another corpus)."""
        return self.inputs.grid_rows[run.row_index].corpus_revision

    def finish(self, i: int, run: RunFile) -> None:
        """The run's findings and acceptance, from its own outcome, the copy it repeats, or its absence."""
        if self.progress is not None:
            self.progress("recomputing prediction files", self._taken, len(self.inputs.run_files))
        self._taken += 1
        outcome = self._jobs.pop(i).result()
        problems, acceptance = outcome.problems, outcome.acceptance
        corpus = self.corpus_of(run)
        if outcome.digest is None:  # the file is missing
            acceptance = self.judge.assess(None, corpus) if self.judge is not None else None
        else:
            self.out.hashed[run.relpath] = (outcome.size or 0, outcome.digest)
        if outcome.copy_of is not None and outcome.digest is not None:
            # The run that claimed these bytes was sent earlier or at the same time: taken already, or pending.
            first = self._first.get((outcome.digest, corpus)) or self._jobs[outcome.copy_of].result()
            problems = [replace(f, file=run.relpath) for f in first.problems]
            acceptance = (replace(first.acceptance, prediction_file=run.relpath) if first.acceptance is not None
                          else None)
        elif outcome.digest is not None:
            self._first[(outcome.digest, corpus)] = outcome
        self.out.findings.extend(problems)
        if acceptance is not None and run.path is not None:
            self.out.acceptances[run.row_index] = acceptance


def assess_predictions(inputs: CampaignInputs, judge: _Judge | None, *, fast: bool = True,
                       progress: Progress | None = None, read_from: ReadFrom | None = None) -> _Assessed:
    """Read, parse and assess every run's prediction file, PARALLEL_FILES at a time (never all in memory).

    Each file is reduced to its findings and acceptance in the worker that read it and then released; at
    most PARALLEL_FILES files (bytes and columns) are in memory at once, and twice as many jobs are queued,
    so that a worker never waits for the oldest run to be taken.
    """
    files = _PredictionFiles(inputs, judge, fast, progress, read_from)
    pool = ThreadPoolExecutor(max_workers=PARALLEL_FILES)
    try:
        pending: deque[tuple[int, RunFile]] = deque()
        order = files.sending_order()
        for i in order:
            run = inputs.run_files[i]
            files.start(pool, i, run)
            pending.append((i, run))
            while len(pending) > 2 * PARALLEL_FILES:
                files.finish(*pending.popleft())
        while pending:
            files.finish(*pending.popleft())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # an error or Ctrl-C: queued files are not started
    return files.out


def recompute_and_gate(inputs: CampaignInputs, judged: bool, acceptances: dict[int, Acceptance],
                       findings: list[Finding], digests: Mapping[str, tuple[int, str]] | None = None
                       ) -> tuple[Recomputation | None, Decision, list[Finding]]:
    """The recomputed window, experiments and configurations (with their evidence), the gated decision, and
    every finding attributed.

    Without a truth to judge against, or a grid, nothing is recomputed and the answer is withheld.
    """
    if not (judged and inputs.grid is not None and inputs.protocol):
        findings = attribute(findings, owners_of(inputs))
        shared = [f for f in findings if f.is_error and f.shared_input]
        return None, withhold([], shared, unreadable=True), findings
    grid, tariffs = inputs.grid, inputs.tariffs
    body, more = recompute(inputs.protocol, grid.file, inputs.grid_rows, grid.lines, acceptances, inputs.measured,
                           inputs.tariff_rows, tariffs.file if tariffs else inputs.files["tariffs"],
                           tariffs_proof(inputs)[0])
    more += reproduction_findings(inputs.protocol.quality, body.configurations, digests or {}, grid.file)
    findings = attribute(findings + more, owners_of(inputs))
    configurations, decision = decide(body.configurations, findings)
    return replace(body, configurations=tuple(configurations)), decision, findings


def _fingerprints(inputs: CampaignInputs, known: dict[str, tuple[int, str]]) -> list[InputFingerprint]:
    """Size and SHA-256 of every input; files already hashed while they were read (the prediction files, the grid
    and the tariffs) are not read again."""
    tables = [t for t in (inputs.grid, inputs.tariffs) if t is not None and t.size is not None and t.sha256]
    known = {**{t.file: (t.size or 0, t.sha256 or "") for t in tables}, **known}
    out = []
    for rel in inputs.input_files:
        if rel in known:
            size, digest = known[rel]
            out.append(InputFingerprint(rel, size, digest))
            continue
        path = inputs.folder.resolve(rel)
        if path is not None and is_file(path):
            out.append(InputFingerprint(rel, path.stat().st_size, sha256_file(path)))
    return out


def assemble(inputs: CampaignInputs, hashed: dict[str, tuple[int, str]], body: Recomputation | None,
             decision: Decision, findings: list[Finding], registration: RegistrationStatus | None = None
             ) -> CheckResult:
    """decision.json: the tool, the campaign, the inputs' fingerprints, the recomputed body, the findings sorted."""
    protocol = inputs.protocol
    findings = sorted(findings, key=sort_key)
    document = DecisionDocument(
        schema_version="1", tool=Tool("gpu-audit", __version__), generated_at=decision_time(),
        campaign=CampaignSummary.of(protocol, corpora.fingerprint_records(
            protocol, [inputs.fingerprint, *(t.fingerprint for t in inputs.further)])) if protocol else None,
        rule=QualityRule.of(protocol) if protocol else None,
        inputs=tuple(_fingerprints(inputs, hashed)),
        window=body.window if body else None, experiments=body.experiments if body else (),
        configurations=body.configurations if body else (), decision=decision,
        finding_counts=count_by_severity(findings), findings=tuple(findings), registration=registration)
    return CheckResult(decision=document.to_json_dict(), findings=findings, inputs=inputs, document=document)


def check_campaign(path: Path, *, fast: bool = True, progress: Progress | None = None,
                   on_loaded: Callable[[CampaignInputs], None] | None = None,
                   read_from: ReadFrom | None = None, trust_tsa: Sequence[x509.Certificate] = ()) -> CheckResult:
    """Validate the campaign folder and recompute every claim from the evidence.

    Prediction files are read a few at a time (never all in memory); `fast=False` uses the straightforward
    row-by-row readers and set arithmetic instead, which must give the same findings. `on_loaded` learns
    the inputs (their files included) before the prediction files are read.
    `read_from` gives the path each prediction file is read from instead of its own (`build`: its copy).
    `trust_tsa`: the time-stamping authorities the reader trusts (--trust-tsa); another's token time is unchecked.
    """
    inputs = validate_inputs(load_campaign(path, fast=fast))
    sealed, registration = check_seal(inputs, trust_tsa)  # the registration's seal, read before any run is judged
    inputs.findings.extend(sealed)
    if on_loaded is not None:
        on_loaded(inputs)
    judge = _judge(inputs, fast)
    assessed = assess_predictions(inputs, judge, fast=fast, progress=progress, read_from=read_from)
    body, decision, findings = recompute_and_gate(inputs, judge is not None, assessed.acceptances,
                                                  inputs.findings + assessed.findings, assessed.hashed)
    findings = followons.link(findings, inputs.grid)  # each follow-on named under its cause; all still count
    return assemble(inputs, assessed.hashed, body, decision, findings, registration)
