"""`campaign run`: execute a registered batch protocol on one GPU and write the campaign folder it audits.

At run time this imports only the standard library, torch and numpy, so it runs on a bare GPU machine.

Model interface (`--model`):
- a file written by `gpu-audit campaign train` (the shipped reference classifier), or
- `module:function`: ``function(device: str, dtype: str, context: int)`` returns an object with
  ``predict(texts: Sequence[str]) -> list[str]`` (tokenise, transfer, infer and return the labels on the host)
  and the attributes ``name``, ``revision``, ``tokenizer_revision`` (strings) and ``parameter_count`` (int).
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from generator import __version__
from generator.audit.recompute.metrics import compute_metric, quality_rule_holds
from generator.core.errors import EnvironmentProblemError, OutputExistsError, UsageError
from generator.core.resources import load_schema, published_tariffs
from generator.gpu import measure

# The grid's columns and the published prices have one source each: the schema and the packaged tariffs.
GRID_COLUMNS: list[str] = load_schema("raw-results-row")["x-csv-columns"]
WARMUP_TEXTS = 64
CORPUS_FILE, REFERENCE_FILE = "eval.jsonl", "eval-reference.csv"
CPU_NOTE = "TEST-ONLY CPU run (--allow-cpu-for-tests): not a GPU measurement, no memory counters"
MAX_ERROR = 500
COLD_TIMEOUT_S = 600


class BatchModel(Protocol):
    """What `--model` must provide."""

    name: str
    revision: str
    tokenizer_revision: str
    parameter_count: int

    def predict(self, texts: Sequence[str]) -> list[str]: ...


@dataclass(frozen=True)
class CampaignConfig:
    """The command line of `campaign run`."""

    protocol: Path
    model: str
    corpus: Path
    device: str
    out: Path
    allow_cpu_for_tests: bool = False


@dataclass
class CampaignResult:
    """What was written: the folder, the grid rows (with a private `_outcome`), the environment and when (UTC)."""

    out: Path
    rows: list[dict[str, Any]]
    environment: dict[str, Any]
    failed_attempts: int = 0
    started_at: str | None = None
    ended_at: str | None = None


@dataclass
class _Plan:
    protocol: dict[str, Any]
    protocol_bytes: bytes
    corpus_path: Path
    corpus_revision: str
    ids: list[str]
    reference: dict[str, str]
    classes: list[str]
    precision: str
    context: int
    seed: int
    experiments: list[dict[str, Any]] = field(default_factory=list)


# --------------------------------------------------------------------------- inputs


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def corpus_revision(corpus_file: Path) -> str:
    """The revision string the protocol registers: the name and the start of the file's SHA-256."""
    return "debian-descriptions-eval@sha256:" + sha256_file(corpus_file)[:16]


def read_corpus(path: Path) -> tuple[list[str], list[str]]:
    """IDs and texts of a JSON-lines corpus, in file order (the registered input order)."""
    ids, texts = [], []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                ids.append(str(record["id"]))
                texts.append(str(record["text"]))
    return ids, texts


def _plan(config: CampaignConfig) -> _Plan:
    """Read and cross-check the protocol, corpus and reference; raise UsageError before anything runs."""
    try:
        raw = config.protocol.read_bytes()
        protocol = json.loads(raw.decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the protocol {config.protocol}: {exc}") from None
    corpus_file, ref_file = config.corpus / CORPUS_FILE, config.corpus / REFERENCE_FILE
    for f in (corpus_file, ref_file):
        if not f.is_file():
            raise UsageError(f"{f} is missing: --corpus must hold {CORPUS_FILE} and {REFERENCE_FILE}")
    try:
        revision = corpus_revision(corpus_file)
        ids, _ = read_corpus(corpus_file)
        with ref_file.open(encoding="utf-8-sig", newline="") as fh:
            reference = {r["id"]: r["label"] for r in csv.DictReader(fh)}
        exps = protocol["experiments"]
        fixed = exps[0]["fixed"]
        classes = list(protocol["classes"])
        registered = protocol["corpus"]["revision"]
    except (KeyError, IndexError, TypeError, ValueError, OSError) as exc:
        raise UsageError(f"the protocol or corpus lacks a required part ({type(exc).__name__}: {exc})") from None
    if registered != revision:
        raise UsageError(f"the corpus {corpus_file} has revision {revision}, the protocol registers {registered}")
    if len(set(ids)) != len(ids) or set(ids) != set(reference):
        raise UsageError(f"{CORPUS_FILE} and {REFERENCE_FILE} do not hold the same unique IDs")
    for exp in exps:
        if exp.get("variable") != "batch":
            raise UsageError(f"experiment {exp.get('id')!r}: only the declared variable `batch` is supported")
        if exp.get("cold_runs_per_variant") not in (0, 1):
            raise UsageError(f"experiment {exp['id']!r}: cold_runs_per_variant must be 0 or 1")
        if exp["fixed"] != fixed:
            raise UsageError("every experiment must hold the same fixed settings (one model, one precision)")
        if exp.get("order", "rotated") != "rotated":
            raise UsageError(f"experiment {exp['id']!r}: only the rotated order is supported")
    if fixed.get("precision") not in measure.DTYPES:
        raise UsageError(f"fixed.precision must be one of {', '.join(measure.DTYPES)}, got {fixed.get('precision')!r}")
    return _Plan(protocol=protocol, protocol_bytes=raw, corpus_path=corpus_file, corpus_revision=revision, ids=ids,
                 reference=reference, classes=classes, precision=fixed["precision"], context=int(fixed["context"]),
                 seed=int(fixed["seed"]), experiments=exps)


def load_model(spec: str, device: str, dtype: str, context: int) -> BatchModel:
    """A reference-classifier file, or `module:function` called as function(device=, dtype=, context=)."""
    path = Path(spec)
    if path.is_file():
        from generator.gpu import textclf  # noqa: PLC0415

        return textclf.ReferenceClassifier(path, device, dtype, context)
    if ":" not in spec:
        raise UsageError(f"--model {spec!r} is neither a file nor module:function")
    module, _, func = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"--model {spec!r} cannot be loaded ({type(exc).__name__}: {exc})") from None
    return factory(device=device, dtype=dtype, context=context)  # type: ignore[no-any-return]


def _environment(config: CampaignConfig) -> tuple[Any, dict[str, Any]]:
    """torch and the environment seen; refuse a machine without the GPU unless the CPU test flag allows it."""
    torch, reason = measure._import_torch()
    if torch is None:
        raise EnvironmentProblemError(f"cannot run the campaign: {reason}. No file was written")
    if config.device == "cpu":
        if not config.allow_cpu_for_tests:
            raise UsageError("--device cpu is refused: campaigns are measured on a GPU (cuda:N); "
                             "--allow-cpu-for-tests exists for the test suite only")
        env = measure.collect_environment("cuda:0", devices_used=0)
        env.update(device="cpu", gpu_available=False, gpu_name=None, gpu_total_memory_bytes=None,
                   unavailable_reason=env["unavailable_reason"] or "CPU test run: no GPU used")
        return torch, env
    env = measure.collect_environment(config.device, devices_used=1)
    if not env["gpu_available"]:
        raise EnvironmentProblemError(f"cannot run the campaign on {config.device}: {env['unavailable_reason']}. "
                                      "Nothing runs on the CPU instead, and no file was written")
    return torch, env


class _NoCounters:
    """The CPU has no allocator counters: readings are None (not recorded), never 0."""

    def synchronize(self) -> None:
        pass

    def reset_peaks(self) -> None:
        pass

    def allocated(self) -> None:
        return None

    def reserved(self) -> None:
        return None

    peak_allocated = peak_reserved = allocated


# --------------------------------------------------------------------------- one run


def _corpus_pass(model: BatchModel, corpus_file: Path, batch: int, done: list[tuple[str, str]],
                 limit: int | None = None) -> list[tuple[str, str]]:
    """The timed chain: read the corpus, then tokenise, transfer, infer, labels on the host, batch by batch.

    Progress goes into `done` so an attempt that fails midway still knows what it completed.
    """
    ids, texts = read_corpus(corpus_file)
    if limit is not None:
        ids, texts = ids[:limit], texts[:limit]
    for i in range(0, len(ids), batch):
        try:
            labels = model.predict(texts[i:i + batch])
        except RuntimeError:
            raise
        except Exception as exc:  # a user model's own error is an attempt failure, not a crash
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc
        if len(labels) != len(ids[i:i + batch]):
            raise RuntimeError(f"the model returned {len(labels)} labels for {len(ids[i:i + batch])} texts")
        done.extend(zip(ids[i:i + batch], (str(x) for x in labels)))
    return done


def _timed_run(torch: Any, counters: Any, model: BatchModel, corpus_file: Path, batch: int, name: str,
               repeat: int | None) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """One attempt measured as a phase (synchronised start and stop, baselines, reset and absolute peaks)."""
    done: list[tuple[str, str]] = []
    row, _ = measure._run_phase(torch, counters, name, lambda: _corpus_pass(model, corpus_file, batch, done),
                                repeat=repeat)
    return row, done


def _warmup(torch: Any, counters: Any, model: BatchModel, corpus_file: Path, batch: int,
            iterations: int) -> dict[str, Any]:
    def fn() -> None:
        for _ in range(iterations):
            _corpus_pass(model, corpus_file, batch, [], limit=WARMUP_TEXTS)
    row, _ = measure._run_phase(torch, counters, "warmup", fn, iterations=iterations)
    return row


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(cell: Any) -> Any:
    """A text cell that a spreadsheet would run as a formula gets a leading apostrophe; numbers stay numbers."""
    if isinstance(cell, str) and cell.startswith(_FORMULA_START):
        return "'" + cell
    return cell


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    """Write a new CSV file (never overwriting), with formula-like text cells neutralised."""
    buf = io.StringIO()
    # RFC 4180 line ends: the csv module quotes a cell holding a line-end character, a lone CR included.
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows([neutralise(c) for c in row] for row in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as fh:
        fh.write(buf.getvalue())


def _counters(torch: Any, device: str) -> Any:
    return _NoCounters() if device == "cpu" else measure._CudaCounters(torch, torch.device(device))


# --------------------------------------------------------------------------- cold run in a fresh process


def cold_run_child(config: CampaignConfig, experiment: str, variant: str, predictions: Path, result: Path) -> None:
    """Inside the fresh process: model_load, inputs (corpus fingerprint), cold_forward; write the result JSON."""
    plan = _plan(config)
    torch, _ = _environment(config)
    exp = next(e for e in plan.experiments if e["id"] == experiment)
    batch = int(next(v for v in exp["variants"] if v["id"] == variant)["value"])
    counters = _counters(torch, config.device)
    phases: list[dict[str, Any]] = []
    done: list[tuple[str, str]] = []
    torch.manual_seed(plan.seed)
    row, model = measure._run_phase(torch, counters, "model_load",
                                    lambda: load_model(config.model, config.device, plan.precision, plan.context))
    phases.append(row)
    if model is not None:
        row, _ = measure._run_phase(torch, counters, "inputs", lambda: corpus_revision(plan.corpus_path))
        phases.append(row)
        row, done = _timed_run(torch, counters, model, plan.corpus_path, batch, "cold_forward", None)
        phases.append(row)
    write_csv(predictions, ["id", "label"], [list(r) for r in done])
    result.write_text(json.dumps({"phases": phases, "completed": len(done)}), encoding="utf-8")


def _cold_run(config: CampaignConfig, exp_id: str, variant_id: str, predictions: Path,
              scratch: Path) -> tuple[list[dict[str, Any]], int]:
    result = scratch / f"cold-{exp_id}-{variant_id}.json"
    cmd = [sys.executable, "-m", "generator", "campaign", "_cold-run", str(config.protocol.resolve()),
           "--model", config.model if not Path(config.model).is_file() else str(Path(config.model).resolve()),
           "--corpus", str(config.corpus.resolve()), "--device", config.device, "--out", str(config.out),
           "--experiment", exp_id, "--variant", variant_id, "--predictions", str(predictions),
           "--result", str(result)]
    if config.allow_cpu_for_tests:
        cmd.append("--allow-cpu-for-tests")
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    started_at = measure.utc_now()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COLD_TIMEOUT_S, env=env, check=False)
        error = None if proc.returncode == 0 and result.is_file() else \
            f"cold process exited {proc.returncode}: {(proc.stderr or proc.stdout)[-MAX_ERROR:]}"
    except subprocess.TimeoutExpired:
        error = f"cold process exceeded {COLD_TIMEOUT_S} s and was stopped"
    if error is None:
        data = json.loads(result.read_text(encoding="utf-8"))
        return data["phases"], int(data["completed"])
    # The failed process's own bounds: a cold run that failed still happened, and when matters.
    ended_at = measure.utc_now()
    failed = []
    for name in ("model_load", "inputs", "cold_forward"):
        row = measure._phase_row(name, None, 1)
        row.update(status="failed", error=error, started_at=started_at, ended_at=ended_at)
        failed.append(row)
    if not predictions.exists():
        write_csv(predictions, ["id", "label"], [])
    return failed, 0


# --------------------------------------------------------------------------- acceptance and rows


def _assess(plan: _Plan, done: list[tuple[str, str]]) -> dict[str, Any]:
    """The acceptance cells exactly as `gpu-audit check` recomputes them from the prediction file."""
    q = plan.protocol["quality"]
    seen: dict[str, str] = {}
    dup = False
    for ident, label in done:
        dup = dup or ident in seen
        seen[ident] = label
    classes = set(plan.classes)
    format_valid = all(label in classes and ident.strip() == ident and ident and "\n" not in ident
                       for ident, label in done)
    ids_match = not dup and set(seen) == set(plan.ids)
    cells: dict[str, Any] = {"expected_ids": len(plan.ids), "observed_ids": len(seen), "ids_match": ids_match,
                             "format_valid": format_valid, "quality_metric": q["metric"],
                             "quality_threshold": q["threshold"], "quality_tolerance": q["tolerance"],
                             "quality_value": None, "corpus_accepted": False}
    if ids_match and format_valid:
        value = compute_metric(q["metric"], [plan.reference[i] for i in plan.ids], [seen[i] for i in plan.ids])
        ok, _ = quality_rule_holds(value, q["threshold"], q["tolerance"], q["direction"], q["reference"]["value"])
        cells.update(quality_value=round(value, 6), corpus_accepted=ok)
    return cells


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _notes(plan: _Plan, config: CampaignConfig, phase: str, row: dict[str, Any], completed: int) -> str:
    q = plan.protocol["quality"]
    parts = []
    if config.device == "cpu":
        parts.append(CPU_NOTE)
    if row["status"] != "ok":
        kind = "oom" if (row["error"] or "").startswith("out of memory") else "failed"
        error = (row["error"] or "").replace("\n", " ").replace(";", ",")[:MAX_ERROR]
        parts.append(f"outcome={kind}; completed={completed}; error={error} (kept, not replaced by a smaller batch)")
    parts.append(f"measured by gpu-audit {__version__} campaign run; timer: read corpus, tokenise, transfer, infer, "
                 "labels on the host, between two device synchronisations")
    parts.append("cold run in a fresh process (its own model load, no warm-up)" if phase == "cold" else
                 f"warm run in the campaign process after the registered warm-up ({WARMUP_TEXTS} texts x iterations)")
    parts.append(f"quality {q['metric']} {q['direction'].replace('_', ' ')}: at least {q['threshold']} and at most "
                 f"{q['tolerance']} below the reference {q['reference']['value']} ({q['reference']['name']})")
    return "; ".join(parts)


def _grid_row(plan: _Plan, config: CampaignConfig, env: dict[str, Any], model: BatchModel, exp: dict[str, Any],
              variant: dict[str, Any], phase: str, run_index: int, row: dict[str, Any],
              done: list[tuple[str, str]]) -> dict[str, Any]:
    cells = _assess(plan, done)
    failed = row["status"] != "ok"
    gpu = config.device != "cpu"
    return {
        "experiment_id": exp["id"], "variant_id": variant["id"], "corpus_revision": plan.corpus_revision,
        "model_revision": model.revision, "tokenizer_revision": model.tokenizer_revision, "seed": plan.seed,
        "gpu_model": env["gpu_name"] if gpu else None, "gpu_count": 1 if gpu else 0, "device": config.device,
        "driver_version": env["driver_version"], "python_version": env["python_version"],
        "torch_version": env["torch_version"], "runtime_version": env["runtime_version"],
        "precision": plan.precision, "batch": int(variant["value"]), "context": plan.context,
        "phase": phase, "run_index": run_index,
        "warmup_iterations": exp["warmup"]["iterations"] if phase == "warm" else 0, **cells,
        "elapsed_seconds": None if failed or row["elapsed_seconds"] is None else round(row["elapsed_seconds"], 6),
        **{k: row[k] for k in ("baseline_allocated_bytes", "baseline_reserved_bytes", "peak_allocated_bytes",
                               "peak_reserved_bytes")},
        "duration_days": exp["rental"]["duration_days"], "lots": exp["rental"]["lots"],
        "package_total_usd_minor": _package_total(exp["rental"]), "accepted_unique_corpora": None,
        "notes": _notes(plan, config, phase, row, len(done)),
        "_outcome": "ok" if not failed else ("oom" if (row["error"] or "").startswith("out of memory") else "failed"),
    }


def _published_tariffs() -> list[dict[str, str]]:
    """The only two prices the seeds publish (the packaged tariffs); no other GPU gets a price here."""
    return list(csv.DictReader(io.StringIO(published_tariffs().read_text(encoding="utf-8"))))


def _package_total(rental: dict[str, Any]) -> int | None:
    """Price per lot x lots from the published prices only; None (unknown) for any other GPU."""
    for t in _published_tariffs():
        if t["gpu"] == rental["gpu"] and int(t["duration_days"]) == rental["duration_days"]:
            return int(t["price_per_lot_usd_minor"]) * int(rental["lots"])
    return None


def rotation(values: list[Any], runs: int) -> list[list[Any]]:
    """1-4-8, 4-8-1, 8-1-4, ...: no variant always first."""
    return [values[i % len(values):] + values[: i % len(values)] for i in range(runs)]


# --------------------------------------------------------------------------- the campaign


def _new_output(out: Path) -> Path:
    if out.exists() or out.is_symlink():
        raise OutputExistsError(f"{out} already exists; nothing is overwritten: choose a new folder")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"the folder of {out} does not exist; create it first")
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))


def _prediction_path(plan: _Plan, tmp: Path, exp_id: str, variant_id: str, phase: str, run_index: int) -> Path:
    pattern = plan.protocol["files"]["predictions"]
    rel = (pattern.replace("{experiment_id}", exp_id).replace("{variant_id}", variant_id)
           .replace("{phase}", phase).replace("{run_index}", str(run_index)))
    return tmp / rel


def run_campaign(config: CampaignConfig) -> CampaignResult:
    """Run every experiment of the protocol and write the campaign folder at config.out (renamed at the end)."""
    plan = _plan(config)
    if config.device != "cpu":
        measure.parse_device(config.device)
    torch, env = _environment(config)
    tmp = _new_output(config.out)
    started_at = measure.utc_now()
    try:
        rows = _execute(plan, config, torch, env, tmp)
        ended_at = measure.utc_now()
        try:
            os.rename(tmp, config.out)  # refuses a non-empty folder that appeared meanwhile
        except OSError:
            raise OutputExistsError(f"{config.out} appeared while the campaign ran; the results stay in {tmp}") from None
    except BaseException:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    return CampaignResult(out=config.out, rows=rows, environment=env,
                          failed_attempts=sum(r["_outcome"] != "ok" for r in rows), started_at=started_at,
                          ended_at=ended_at)


def _execute(plan: _Plan, config: CampaignConfig, torch: Any, env: dict[str, Any], tmp: Path) -> list[dict[str, Any]]:
    files = plan.protocol["files"]
    (tmp / "protocol.json").write_bytes(plan.protocol_bytes)
    write_csv(tmp / files["expected_ids"], ["id"], [[i] for i in plan.ids])
    write_csv(tmp / files["reference"], ["id", "label"], [[i, plan.reference[i]] for i in plan.ids])
    (tmp / files["tariffs"]).write_bytes(published_tariffs().read_bytes())
    scratch = Path(tempfile.mkdtemp(prefix="gpu-audit-cold-"))
    rows: list[dict[str, Any]] = []
    try:
        # Cold runs first, each in its own fresh process, before this process touches the GPU.
        cold: dict[tuple[str, str], tuple[list[dict[str, Any]], int]] = {}
        for exp in plan.experiments:
            if exp["cold_runs_per_variant"] == 1:
                for v in exp["variants"]:
                    pred = _prediction_path(plan, tmp, exp["id"], v["id"], "cold", 1)
                    cold[(exp["id"], v["id"])] = _cold_run(config, exp["id"], v["id"], pred, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    counters = _counters(torch, config.device)
    torch.manual_seed(plan.seed)
    load_row, model = measure._run_phase(torch, counters, "model_load",
                                         lambda: load_model(config.model, config.device, plan.precision, plan.context))
    if model is None:
        raise EnvironmentProblemError(f"the model could not be loaded on {config.device}: {load_row['error']}")
    inputs_row, _ = measure._run_phase(torch, counters, "inputs", lambda: corpus_revision(plan.corpus_path))
    for exp in plan.experiments:
        variants = exp["variants"]
        phases: dict[str, list[dict[str, Any]]] = {}
        by_key: dict[tuple[str, int], dict[str, Any]] = {}
        for v in variants:
            batch = int(v["value"])
            if (exp["id"], v["id"]) in cold:
                head, completed = cold[(exp["id"], v["id"])]
                pred = _prediction_path(plan, tmp, exp["id"], v["id"], "cold", 1)
                done = _read_predictions(pred)
                by_key[(v["id"], 0)] = _grid_row(plan, config, env, model, exp, v, "cold", 1, head[-1], done)
            else:
                row, _ = _timed_run(torch, counters, model, plan.corpus_path, batch, "cold_forward", None)
                head = [load_row, inputs_row, row]
            phases[v["id"]] = list(head)
            phases[v["id"]].append(_warmup(torch, counters, model, plan.corpus_path, batch,
                                           exp["warmup"]["iterations"]))
        for run_index, order in enumerate(rotation(variants, exp["runs_per_variant"]), start=1):
            for v in order:
                row, done = _timed_run(torch, counters, model, plan.corpus_path, int(v["value"]), "warm_forward",
                                       run_index)
                phases[v["id"]].append(row)
                write_csv(_prediction_path(plan, tmp, exp["id"], v["id"], "warm", run_index), ["id", "label"],
                          [list(r) for r in done])
                by_key[(v["id"], run_index)] = _grid_row(plan, config, env, model, exp, v, "warm", run_index, row, done)
        for v in variants:
            mine = [r for (vid, _), r in sorted(by_key.items(), key=lambda kv: kv[0][1]) if vid == v["id"]]
            accepted = int(any(r["corpus_accepted"] and r["_outcome"] == "ok" for r in mine))
            for r in mine:
                r["accepted_unique_corpora"] = accepted
            rows.extend(mine)
            _write_measurement(tmp, plan, config, env, model, exp, v, phases[v["id"]])
    write_csv(tmp / files["raw_results"], GRID_COLUMNS, [[_cell(r[c]) for c in GRID_COLUMNS] for r in rows])
    return rows


def _read_predictions(path: Path) -> list[tuple[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        next(reader, None)
        return [(r[0], r[1]) for r in reader if len(r) == 2]


def _write_measurement(tmp: Path, plan: _Plan, config: CampaignConfig, env: dict[str, Any], model: BatchModel,
                       exp: dict[str, Any], variant: dict[str, Any], phases: list[dict[str, Any]]) -> None:
    rel = variant.get("measurement") or f"measurements/{exp['id']}-{variant['id']}.json"
    doc = {
        "schema_version": "1",
        "tool": f"gpu-audit {__version__} campaign run" + (" (TEST-ONLY CPU run)" if config.device == "cpu" else ""),
        "synthetic_data": False,
        "run": {"experiment_id": exp["id"], "variant_id": variant["id"]},
        "environment": env,
        "configuration": {"device": config.device, "batch": int(variant["value"]), "context": plan.context,
                          "dtype": plan.precision, "warmup": exp["warmup"]["iterations"],
                          "repeats": exp["runs_per_variant"], "seed": plan.seed},
        "model": {"name": model.name[:200], "revision": model.revision[:200],
                  "parameter_count": int(model.parameter_count),
                  "tokenizer_revision": model.tokenizer_revision,
                  "phases_note": ("model_load, inputs and cold_forward come from the cold run's fresh process; "
                                  "warmup and warm_forward from the campaign process"
                                  if exp["cold_runs_per_variant"] == 1 else
                                  "every phase comes from the campaign process")},
        "phases": phases,
    }
    path = tmp / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as fh:
        fh.write(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
