"""Several corpora of the useful work: every configuration's runs on each, accepted and timed apart (003)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.decision.model import CorpusFingerprint
from generator.audit.recompute.decision.runcells import CorpusRuns
from generator.audit.recompute.evidence.resumes import ResumePlan
from generator.audit.recompute.money.package import Row
from generator.audit.recompute.quality.acceptance import Acceptance
from generator.audit.recompute.quality.seeds import balance
from generator.audit.validate.corpus import corpusprint

__all__ = ["claimed_count_findings", "corpus_reason", "corpus_runs", "count_findings"]

RULE = ("when the useful work is several corpora, every configuration processes the same ones under the same "
        "quality rule; each accepted corpus counts once")


def _per_corpus(exp: ExperimentSpec) -> dict[str, int]:
    """The runs of each phase a variant makes on one corpus: its registered runs, under each common seed."""
    seeds = len(exp.seeds) if exp.seeds else 1
    return {"warm": exp.runs_per_variant * seeds, "cold": exp.cold_runs_per_variant * seeds}


def count_findings(protocol: Protocol, exp: ExperimentSpec, rows: Sequence[tuple[GridRow, int]],
                   grid_file: str) -> list[Finding]:
    """Every variant has its registered runs on each corpus of the work (the run indexes alone do not show it)."""
    if not exp.further_corpora:
        return []
    counted = Counter((r.variant_id, r.phase, r.corpus_revision) for r, _ in rows)
    names = {protocol.corpus.revision: protocol.corpus.name, **{c.revision: c.name for c in protocol.corpora or ()}}
    out = []
    for variant in exp.variants:
        if variant.resume is not None:
            continue  # a resume variant's rows are resumptions, not a series of its own
        for phase, needed in _per_corpus(exp).items():
            for revision, name in names.items():
                n = counted[(variant.id, phase, revision)]
                if n >= needed:
                    continue
                out.append(make_finding(
                    "corpus-runs-missing", Severity.ERROR, grid_file, f"{exp.id}/{variant.id} has {n} {phase} "
                    f"run(s) on the corpus {name!r} ({revision}), where {needed} are registered on each corpus of "
                    "the work", field="corpus_revision", claimed=n, recomputed=needed, rule=RULE,
                    fix="run every variant on every corpus the protocol lists, and keep each run, failures included, "
                        "with the corpus it processed in corpus_revision",
                    configurations=(f"{exp.id}/{variant.id}",)))
    return out


def corpus_runs(protocol: Protocol, exp: ExperimentSpec, rows: Sequence[Row], acceptances: Mapping[int, Acceptance],
                plan: ResumePlan | None = None) -> tuple[CorpusRuns, ...] | None:
    """Each corpus's runs of one configuration, counted, accepted and timed apart (None for one corpus)."""
    if not exp.further_corpora:
        return None
    by_corpus: dict[str | None, list[Row]] = defaultdict(list)
    for item in sorted(rows, key=lambda r: r[1].key()[2:]):
        by_corpus[item[1].corpus_revision].append(item)
    corpora = [(protocol.corpus.revision, protocol.corpus.name, protocol.corpus.size),
               *((c.revision, c.name, c.size) for c in protocol.corpora or ())]
    out = []
    for revision, name, size in corpora:
        attempts, completed, failures, accepted, timed = balance(by_corpus.get(revision, []), acceptances, plan)
        out.append(CorpusRuns(revision, name, size, attempts, completed, failures, accepted,
                              completed > 0 and accepted == completed, timed))
    return tuple(out)


def claimed_count_findings(rows: Sequence[Row], distinct: int, grid_file: str) -> list[Finding]:
    """A claimed count of accepted corpora against the distinct corpora with an accepted run."""
    out = []
    for _, row, line in rows:
        claimed = row.accepted_unique_corpora
        if claimed is not None and claimed != distinct:
            hint = (" (repeats of the same corpus were counted: five repeats are not five results)"
                    if claimed > distinct and distinct <= 1 < claimed else "")
            out.append(make_finding(
                "accepted-corpora-mismatch", Severity.ERROR, grid_file,
                f"accepted_unique_corpora claims {claimed}, the evidence gives {distinct} distinct accepted "
                f"corpora{hint}", line=line,
                field="accepted_unique_corpora", claimed=claimed, recomputed=distinct,
                rule="distinct corpus revisions with an accepted run; never summed over repeats",
                fix=f"write {distinct}"))
    return out


def corpus_reason(runs: Sequence[CorpusRuns] | None) -> str | None:
    """Why a configuration is not accepted on every corpus of the work; None when it is (or the work is one)."""
    missed = [c for c in runs or () if not c.accepted]
    if not missed:
        return None
    said = "; ".join(f"{c.name}: " + ("no completed run" if c.completed == 0 else
                                      f"{c.completed - c.accepted_runs} of {c.completed} completed runs not accepted")
                     for c in missed)
    return f"not accepted on every corpus ({said})"


def fingerprint_records(protocol: Protocol, prints: Sequence[str | None]) -> tuple[CorpusFingerprint, ...]:
    """decision.json's record of each corpus's fingerprint, the first corpus first."""
    return tuple(CorpusFingerprint(revision, computed, corpusprint.revision_check(revision, computed))
                 for (_, _, revision), computed in zip(corpusprint.corpora(protocol), prints, strict=True))
