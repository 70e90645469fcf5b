"""Time is evidence: runs dated by the runners, proved against the registration, the window and the deadline."""

from __future__ import annotations

import csv
import json
import shutil
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import REPO

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.recompute.times import runtimes
from generator.gpu.measure import environment, measure
from generator.gpu.measure.phases import run_phase

H200 = REPO / "inputs" / "h200-campaign"
SCHEMA = json.loads((REPO / "schemas" / "measurement.schema.json").read_text(encoding="utf-8"))
GRID = "resultats-bruts.csv"
CODES = ("run-before-registration", "run-outside-window", "run-after-deadline", "no-run-times", "run-time-invalid")


def copy_h200(tmp_path: Path) -> Path:
    target = tmp_path / "h200"
    shutil.copytree(H200, target)
    return target


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def save(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def grid_line(folder: Path, variant: str, phase: str, run_index: int) -> int:
    """The file line of a grid row (no cell of these grids spans lines)."""
    with (folder / GRID).open(encoding="utf-8", newline="") as fh:
        for number, row in enumerate(csv.DictReader(fh), start=2):
            if (row["variant_id"], row["phase"], row["run_index"]) == (variant, phase, str(run_index)):
                return number
    raise AssertionError(f"no grid row {variant} {phase} {run_index}")


def phase_index(doc: dict[str, Any], name: str, repeat: int | None = None) -> int:
    return next(i for i, p in enumerate(doc["phases"]) if p["phase"] == name and p.get("repeat") == repeat)


def set_time(folder: Path, measurement: str, name: str, repeat: int | None, **times: str) -> int:
    path = folder / measurement
    doc = load(path)
    index = phase_index(doc, name, repeat)
    doc["phases"][index].update(times)
    save(path, doc)
    return index


def time_findings(folder: Path) -> tuple[list[Finding], dict[str, Any]]:
    result = check_campaign(folder)
    return [f for f in result.findings if f.code in CODES], result.decision


def where(findings: list[Finding], code: str) -> set[tuple[str, int | None, str | None]]:
    return {(f.file, f.line, f.field) for f in findings if f.code == code}


def admissible(decision: dict[str, Any]) -> dict[str, bool]:
    return {c["id"]: c["admissible"] for c in decision["configurations"]}


# --------------------------------------------------------------------------- check: the real H200 campaign


def test_committed_h200_campaign_carries_its_times_inside_its_window() -> None:
    protocol = load(H200 / "protocol.json")
    registered = datetime.fromisoformat(protocol["registered_at"])
    start = datetime.fromisoformat(protocol["window"]["start"]).replace(tzinfo=UTC)
    for variant in protocol["experiments"][0]["variants"]:
        doc = load(H200 / variant["measurement"])
        jsonschema.Draft202012Validator(SCHEMA).validate(doc)
        for p in doc["phases"]:
            begun, ended = runtimes.parse_utc(p["started_at"]), runtimes.parse_utc(p["ended_at"])
            assert begun is not None and ended is not None and registered < start <= begun <= ended
    findings, _ = time_findings(H200)
    assert findings == []


def test_run_before_the_window_is_an_error_on_the_measurement_and_the_grid_row(tmp_path: Path) -> None:
    folder = copy_h200(tmp_path)
    # After the registration (09:41:26 UTC) but before the window opened (09:42 UTC).
    index = set_time(folder, "measurements/h200-batch-b8.json", "warm_forward", 3,
                     started_at="2026-12-01T09:41:40.000000Z")
    findings, decision = time_findings(folder)
    assert where(findings, "run-outside-window") == {
        ("measurements/h200-batch-b8.json", None, f"/phases/{index}/started_at"),
        (GRID, grid_line(folder, "b8", "warm", 3), "elapsed_seconds")}
    assert {f.code for f in findings} == {"run-outside-window"}
    assert all(f.is_error and f.recomputed == "2026-12-01T09:42:00.000000Z" for f in findings)
    assert not admissible(decision)["h200-batch/b8"]
    # Its start moved back, the run now spans the other variants' runs on the one GPU: none of them was timed
    # alone, so they lose too.
    result = check_campaign(folder)
    assert {f.file for f in result.findings if f.code == "runs-overlap"} == {
        f"measurements/h200-batch-{v}.json" for v in ("b1", "b4", "b8")}


def test_run_before_the_registration_is_an_error_on_the_measurement_and_the_grid_row(tmp_path: Path) -> None:
    folder = copy_h200(tmp_path)
    index = set_time(folder, "measurements/h200-batch-b1.json", "cold_forward", None,
                     started_at="2026-12-01T09:40:00.000000Z")
    findings, decision = time_findings(folder)
    cold = grid_line(folder, "b1", "cold", 1)
    expected = {("measurements/h200-batch-b1.json", None, f"/phases/{index}/started_at"),
                (GRID, cold, "elapsed_seconds")}
    assert where(findings, "run-before-registration") == expected
    assert where(findings, "run-outside-window") == expected  # before the registration is before the window too
    assert not admissible(decision)["h200-batch/b1"]


def test_registration_moved_after_the_runs_dates_every_earlier_run(tmp_path: Path) -> None:
    folder = copy_h200(tmp_path)
    protocol = load(folder / "protocol.json")
    protocol["registered_at"] = "2026-12-01T09:42:16+00:00"  # b4 ran from 09:42:15, b8 from 09:42:19
    save(folder / "protocol.json", protocol)
    findings, _ = time_findings(folder)
    flagged = {f.file for f in findings if f.code == "run-before-registration"}
    assert flagged == {"measurements/h200-batch-b1.json", "measurements/h200-batch-b4.json", GRID}
    lines = {f.line for f in findings if f.code == "run-before-registration" and f.file == GRID}
    assert lines == {grid_line(folder, "b1", "cold", 1), grid_line(folder, "b4", "cold", 1)}


def test_last_run_ending_after_the_deadline_is_an_error_on_the_measurement_and_the_grid_row(tmp_path: Path) -> None:
    folder = copy_h200(tmp_path)
    index = set_time(folder, "measurements/h200-batch-b4.json", "warm_forward", 5,
                     ended_at="2026-12-01T20:30:00.000000Z")  # the deadline is 20:00 UTC, the window ends 18:00
    findings, decision = time_findings(folder)
    expected = {("measurements/h200-batch-b4.json", None, f"/phases/{index}/ended_at"),
                (GRID, grid_line(folder, "b4", "warm", 5), "elapsed_seconds")}
    assert where(findings, "run-after-deadline") == expected
    assert where(findings, "run-outside-window") == expected
    assert next(f for f in findings if f.code == "run-after-deadline").recomputed == "2026-12-01T20:00:00.000000Z"
    assert not admissible(decision)["h200-batch/b4"]


def test_a_phase_without_a_grid_row_is_reported_on_its_measurement(tmp_path: Path) -> None:
    folder = copy_h200(tmp_path)
    index = set_time(folder, "measurements/h200-batch-b4.json", "warmup", None,
                     started_at="2026-12-01T09:41:59.000000Z")
    findings, _ = time_findings(folder)
    assert where(findings, "run-outside-window") == {
        ("measurements/h200-batch-b4.json", None, f"/phases/{index}/started_at")}


def test_end_before_start_and_impossible_dates_are_findings(tmp_path: Path) -> None:
    folder = copy_h200(tmp_path)
    a = set_time(folder, "measurements/h200-batch-b1.json", "warm_forward", 1, ended_at="2026-12-01T09:42:00.000000Z")
    findings, _ = time_findings(folder)
    assert where(findings, "run-time-invalid") == {("measurements/h200-batch-b1.json", None, f"/phases/{a}/ended_at")}
    set_time(folder, "measurements/h200-batch-b1.json", "warm_forward", 1, ended_at="2026-02-30T09:42:00Z")
    findings, _ = time_findings(folder)
    assert [f.code for f in findings] == ["run-time-invalid"]


@pytest.mark.parametrize("value", ["2026-12-01 09:42:10Z", "2026-12-01T09:42:10", "2026-12-01T09:42:10+24:00",
                                   "2026-13-01T09:42:10Z", "yesterday", 1764582130])
def test_malformed_times_break_the_schema(tmp_path: Path, value: Any) -> None:
    folder = copy_h200(tmp_path)
    doc = load(folder / "measurements/h200-batch-b1.json")
    doc["phases"][0]["started_at"] = value
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert not validator.is_valid(doc)
    save(folder / "measurements/h200-batch-b1.json", doc)
    result = check_campaign(folder)
    assert any(f.code == "schema-violation" and f.field == "/phases/0/started_at" for f in result.findings)


def test_schema_takes_files_without_times_and_wants_both_or_none() -> None:
    doc = load(H200 / "measurements/h200-batch-b1.json")
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for p in doc["phases"]:
        del p["started_at"], p["ended_at"]
    assert validator.is_valid(doc)  # other tools' files need not date their phases
    doc["phases"][0]["started_at"] = "2026-12-01T09:42:09Z"
    assert not validator.is_valid(doc)  # a start without its end


# --------------------------------------------------------------------------- check: campaigns without times, zones


def test_campaign_without_run_times_is_an_error_on_each_measurement(tmp_path: Path) -> None:
    # issue 47 item 1: undated runs were once one warning, and the answer stood on them
    folder = copy_h200(tmp_path)
    paths = sorted((folder / "measurements").glob("*.json"))
    for path in paths:
        doc = load(path)
        for p in doc["phases"]:
            del p["started_at"], p["ended_at"]
        save(path, doc)
    result = check_campaign(folder)
    found = [f for f in result.findings if f.code in CODES or f.code == "run-times-missing"]
    found.sort(key=lambda f: (f.code, f.file))
    assert [(f.code, f.severity.value, f.file) for f in found] == [("no-run-times", "warning", "protocol.json")] + [
        ("run-times-missing", "error", f"measurements/{p.name}") for p in paths]
    assert "cannot be checked" in found[0].message
    assert "(nor does any other measurement)" in found[1].message and "`gpu-audit measure run`" in str(found[1].fix)
    assert found[1].configurations == ("h200-batch/b1",)
    decision = result.decision["decision"]
    assert decision["answer"] is None and decision["reason"] == "no answer: no configuration's runs were measured"


def test_synthetic_example_dates_its_runs_inside_its_window(campaign: Path) -> None:
    findings, decision = time_findings(campaign)
    assert findings == []
    assert decision["decision"]["answer"] == "rtx4090-batch/b4"


def test_window_is_read_in_its_time_zone(campaign: Path) -> None:
    # The window opens 2026-10-05T09:00 Europe/Paris = 07:00 UTC (summer time).
    b4 = "measurements/rtx4090-batch-b4.json"
    set_time(campaign, b4, "warm_forward", 2, started_at="2026-10-05T07:00:01.000000Z")
    assert time_findings(campaign)[0] == []
    index = set_time(campaign, b4, "warm_forward", 2, started_at="2026-10-05T06:59:59.000000Z")
    findings, decision = time_findings(campaign)
    assert where(findings, "run-outside-window") == {
        (b4, None, f"/phases/{index}/started_at"), (GRID, grid_line(campaign, "b4", "warm", 2), "elapsed_seconds")}
    # The answer moves away from the configuration that ran before its window.
    assert decision["decision"]["answer"] != "rtx4090-batch/b4"
    assert not admissible(decision)["rtx4090-batch/b4"]


def test_pure_function_needs_no_grid() -> None:
    protocol = load(H200 / "protocol.json")
    docs = {v["measurement"]: load(H200 / v["measurement"]) for v in protocol["experiments"][0]["variants"]}
    def typed(docs: dict[str, Any]) -> dict[str, MeasurementDoc]:
        return {file: MeasurementDoc.of(doc) for file, doc in docs.items()}

    typed_protocol = Protocol.of(protocol)
    assert runtimes.run_time_findings(typed_protocol, typed(docs), GRID, [], []) == []
    docs["measurements/h200-batch-b1.json"]["phases"][0]["started_at"] = "2026-11-30T09:42:09.503602Z"
    found = runtimes.run_time_findings(typed_protocol, typed(docs), GRID, [], [])
    assert sorted(f.code for f in found) == ["run-before-registration", "run-outside-window"]
    assert runtimes.run_time_findings(typed_protocol, {}, GRID, [], [])[0].code == "no-run-times"


# --------------------------------------------------------------------------- the runners write the times


class _Counters:
    """CPU stand-in for the allocator counters."""

    def synchronize(self) -> None:
        pass

    def reset_peaks(self) -> None:
        pass

    def allocated(self) -> int:
        return 0

    reserved = peak_allocated = peak_reserved = allocated


def assert_dated_in_order(phases: list[dict[str, Any]], before: datetime, after: datetime) -> None:
    previous = before
    for p in phases:
        begun, ended = runtimes.parse_utc(p["started_at"]), runtimes.parse_utc(p["ended_at"])
        assert begun is not None and ended is not None, p
        assert previous <= begun <= ended <= after
        previous = ended


def test_measure_run_dates_every_phase(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    config = measure.RunConfig(device="cuda:0", batch=2, context=3, width=8, dtype="float32", warmup=1, repeats=3)
    env = environment.collect_environment("cuda:0", devices_used=1)
    before = datetime.now(UTC)
    result = measure._measure(torch, config, env, _Counters(), torch.device("cpu"))
    after = datetime.now(UTC)
    jsonschema.Draft202012Validator(SCHEMA).validate(result.document)
    assert len(result.phases) == 7
    assert_dated_in_order(result.phases, before, after)
    from generator.cli.main import main  # noqa: PLC0415

    monkeypatch.setattr(measure, "run_measurement", lambda config: result)
    assert main(["measure", "run", "--device", "cuda:0", "--batch", "2", "--context", "3", "--width", "8",
                 "--dtype", "float32", "--warmup", "1", "--repeats", "3", "--output", str(tmp_path / "m.json")]) == 0
    assert f"ran {result.phases[0]['started_at']} to {result.phases[-1]['ended_at']}" in capsys.readouterr().out


def test_a_failed_phase_is_dated_too() -> None:
    torch = pytest.importorskip("torch")

    def boom() -> None:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    row, _ = run_phase(torch, _Counters(), "warm_forward", boom, repeat=1)
    assert row["status"] == "failed" and row["elapsed_seconds"] is None
    assert runtimes.parse_utc(row["started_at"]) <= runtimes.parse_utc(row["ended_at"])  # type: ignore[operator]


FAKE_MODEL = textwrap.dedent('''
    """A stand-in model for `campaign run --model fake_model:load` (tests only)."""


    class Model:
        name, revision, tokenizer_revision, parameter_count = "fake", "fake-r1", "fake-tok-r1", 1

        def predict(self, texts):
            return ["admin" for _ in texts]


    def load(device, dtype, context):
        return Model()
''')


def _cpu_campaign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registration: dict[str, Any]) -> Path:
    """A 12-text campaign run on the CPU with a stand-in model, under a protocol registered as given."""
    from generator.gpu.campaign import campaign_run  # noqa: PLC0415

    corpora = REPO / "inputs" / "corpora" / "debian-descriptions"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    texts = (corpora / "eval.jsonl").read_text(encoding="utf-8").splitlines()[:12]
    (corpus / "eval.jsonl").write_text("\n".join(texts) + "\n", encoding="utf-8")
    reference = (corpora / "eval-reference.csv").read_text(encoding="utf-8").splitlines()[:13]
    (corpus / "eval-reference.csv").write_text("\n".join(reference) + "\n", encoding="utf-8")
    (tmp_path / "fake_model.py").write_text(FAKE_MODEL, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the cold runs' fresh processes import it too
    revision = campaign_run.corpus_revision(corpus / "eval.jsonl")
    protocol = load(REPO / "inputs" / "h200-campaign-protocol.json")
    protocol.update(registration)
    protocol["corpus"].update(revision=revision, size=12)
    protocol["quality"].update(threshold=0.0, tolerance=1.0)
    protocol["quality"]["reference"]["value"] = 0.0
    for exp in protocol["experiments"]:
        exp["runs_per_variant"] = 2
        exp["fixed"].update(corpus_revision=revision, model_revision="fake-r1", tokenizer_revision="fake-tok-r1")
    save(tmp_path / "protocol.json", protocol)
    out = tmp_path / "camp"
    campaign_run.run_campaign(campaign_run.CampaignConfig(
        protocol=tmp_path / "protocol.json", model="fake_model:load", corpus=corpus, device="cpu", out=out,
        allow_cpu_for_tests=True))
    return out


def _registered(now: datetime, start_min: int, end_min: int) -> dict[str, Any]:
    local = "%Y-%m-%dT%H:%M"
    return {"registered_at": (now - timedelta(hours=2)).isoformat(),
            "window": {"start": (now + timedelta(minutes=start_min)).strftime(local),
                       "end": (now + timedelta(minutes=end_min)).strftime(local), "timezone": "UTC"},
            "deadline": (now + timedelta(days=1)).strftime(local)}


def test_campaign_run_dates_every_phase_and_check_proves_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    before = datetime.now(UTC)
    out = _cpu_campaign(tmp_path, monkeypatch, _registered(now, -60, 360))
    after = datetime.now(UTC)
    for variant in ("b1", "b4", "b8"):
        doc = load(out / f"measurements/h200-batch-{variant}.json")
        jsonschema.Draft202012Validator(SCHEMA).validate(doc)
        cold, warm = doc["phases"][:3], doc["phases"][3:]  # the cold process's phases, then the campaign's
        assert_dated_in_order(cold, before, after)
        assert_dated_in_order(warm, before, after)
    findings, _ = time_findings(out)
    assert findings == []


def test_campaign_run_before_its_window_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The slip of issue 15: registered in advance, but run before the window opened."""
    pytest.importorskip("torch")
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    out = _cpu_campaign(tmp_path, monkeypatch, _registered(now, 60, 360))
    findings, decision = time_findings(out)
    on_grid = {f.line for f in findings if f.code == "run-outside-window" and f.file == GRID}
    assert len(on_grid) == 3 * (1 + 2)  # every attempt's row
    phases = {(f.file, f.field) for f in findings if f.code == "run-outside-window" and f.file != GRID}
    assert len(phases) == 3 * (3 + 1 + 2)  # every dated phase: model_load, inputs, cold, warm-up, 2 warm runs
    assert not any(admissible(decision).values())


def test_a_cold_process_that_fails_is_dated_by_its_own_bounds(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from generator.gpu.campaign import campaign_cold, campaign_run  # noqa: PLC0415

    config = campaign_run.CampaignConfig(protocol=tmp_path / "missing.json", model="x:y", corpus=tmp_path,
                                         device="cpu", out=tmp_path / "camp", allow_cpu_for_tests=True)
    before = datetime.now(UTC)
    phases, completed = campaign_cold.cold_run(config, "e", "v", 1, tmp_path / "cold-1.csv", tmp_path)
    after = datetime.now(UTC)
    assert completed == 0 and [p["status"] for p in phases] == ["failed"] * 3
    assert {(p["started_at"], p["ended_at"]) for p in phases} == {(phases[0]["started_at"], phases[0]["ended_at"])}
    begun, ended = runtimes.parse_utc(phases[0]["started_at"]), runtimes.parse_utc(phases[0]["ended_at"])
    assert begun is not None and ended is not None and before <= begun <= ended <= after
    jsonschema.Draft202012Validator(SCHEMA["$defs"]["phase"] | {"$defs": SCHEMA["$defs"]}).validate(phases[0])
