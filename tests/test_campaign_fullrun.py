"""`campaign run` runs the whole protocol `check` reads (issue 49 item 2): common seeds, several corpora, a resume
variant; its measurement (format 2) holds a cold phase per cold run, and format 1 still reads as before."""

from __future__ import annotations

import copy
import csv
import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from generator.audit.check import check_campaign
from generator.audit.load.findings import Severity

torch = pytest.importorskip("torch")

from generator.gpu.campaign import campaign_run  # noqa: E402
from generator.gpu.models import textclf  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "inputs" / "corpora" / "debian-descriptions"
SCHEMA = json.loads((ROOT / "schemas" / "measurement.schema.json").read_text(encoding="utf-8"))
TINY = 24
# What a CPU test run necessarily gets, whatever else it holds: it is never evidence of a decision (issue 47).
TEST_RUN_CODES = {"test-run", "device-not-gpu"}
# The flaky model's batch-8 calls in the campaign process: the warm-up's 2 x 3, warm run 1's 3, then warm run 2's
# second batch fails (8 of 24 texts done); the resumption's new copy makes 6 + 2 calls, the cold processes 3.
FAIL_AT = 6 + 3 + 2


def _corpus(folder: Path, start: int) -> Path:
    """TINY texts of the eval split from `start` on, with their reference."""
    folder.mkdir()
    lines = (CORPUS / "eval.jsonl").read_text(encoding="utf-8").splitlines()[start:start + TINY]
    (folder / "eval.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with (CORPUS / "eval-reference.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    with (folder / "eval-reference.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([rows[0], *rows[1 + start:1 + start + TINY]])
    return folder


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A tiny model, two 24-text corpora and a protocol for them: b4 and b8, two warm runs and a cold run each."""
    root = tmp_path_factory.mktemp("fullrun")
    blob, _ = textclf.train(CORPUS / "train.jsonl", CORPUS / "tune.jsonl", seed=7, lrs=[0.05], epochs=1,
                            buckets=512, dim=8, context=64, limit=200, bootstrap=10)
    textclf.save(blob, root / "model.pt")
    first, second = _corpus(root / "c1", 0), _corpus(root / "c2", TINY)
    revision = campaign_run.corpus_revision(first / "eval.jsonl")
    protocol = json.loads((ROOT / "inputs" / "h200-campaign-protocol.json").read_text(encoding="utf-8"))
    protocol["corpus"].update(revision=revision, size=TINY)
    protocol["quality"].update(threshold=0.0, tolerance=1.0)
    protocol["quality"]["reference"]["value"] = 0.5
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    protocol.update(registered_at=(now - timedelta(hours=1)).isoformat(),
                    window={"start": (now - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M"),
                            "end": (now + timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M"), "timezone": "UTC"},
                    deadline=(now + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M"))
    exp = protocol["experiments"][0]
    exp["variants"] = exp["variants"][1:]  # b4 and b8
    exp["runs_per_variant"] = 2
    exp["fixed"].update(corpus_revision=revision, context=64, tokenizer_revision=textclf.tokenizer_revision(512, 64),
                        model_revision="sha256:" + hashlib.sha256((root / "model.pt").read_bytes()).hexdigest())
    return {"root": root, "model": root / "model.pt", "corpora": [first, second], "protocol": protocol}


def _run(base: dict[str, Any], name: str, protocol: dict[str, Any], corpora: int = 1,
         model: str | None = None) -> Path:
    root = base["root"] / name
    root.mkdir()
    (root / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    out = root / "camp"
    campaign_run.run_campaign(campaign_run.CampaignConfig(
        protocol=root / "protocol.json", model=model or str(base["model"]), corpus=base["corpora"][0],
        device="cpu", out=out, allow_cpu_for_tests=True, further_corpora=tuple(base["corpora"][1:corpora])))
    return out


@pytest.fixture(scope="module")
def seeded(base: dict[str, Any]) -> Path:
    protocol = copy.deepcopy(base["protocol"])
    protocol["experiments"][0]["seeds"] = [11, 22]
    protocol["experiments"][0]["fixed"]["seed"] = None
    return _run(base, "seeded", protocol)


@pytest.fixture(scope="module")
def two_corpora(base: dict[str, Any]) -> Path:
    protocol = copy.deepcopy(base["protocol"])
    second = base["corpora"][1]
    protocol["corpora"] = [{"name": "second", "revision": campaign_run.corpus_revision(second / "eval.jsonl"),
                            "size": TINY, "expected_ids": "c2/expected-ids.csv", "reference": "c2/reference.csv"}]
    return _run(base, "corpora", protocol, corpora=2)


def _flaky_run(base: dict[str, Any], name: str, fail_at: int, once: bool = False) -> Path:
    """The protocol with b8's resume variant, run with the flaky model failing at its `fail_at`-th batch of 8 (in
    the first process to get there only, when `once`)."""
    protocol = copy.deepcopy(base["protocol"])
    protocol["experiments"][0]["variants"].append(
        {"id": "b8-resume", "value": 8, "measurement": "measurements/h200-batch-b8-resume.json",
         "resume": {"of": "b8", "setting": "from the first text not completed, the model loaded anew"}})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GPU_AUDIT_FLAKY_MODEL", str(base["model"]))
        mp.setenv("GPU_AUDIT_FLAKY_FAIL_AT", str(fail_at))
        if once:
            mp.setenv("GPU_AUDIT_FLAKY_ONCE", str(base["root"] / f"{name}.failed"))
        mp.setenv("PYTHONPATH", str(Path(__file__).parent))  # the cold runs' fresh processes import it too
        return _run(base, name, protocol, model="flaky_model:load")


@pytest.fixture(scope="module")
def resumed(base: dict[str, Any]) -> Path:
    return _flaky_run(base, "resumed", FAIL_AT)


def _grid(folder: Path) -> list[dict[str, str]]:
    with (folder / "resultats-bruts.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _errors_and_codes(folder: Path) -> tuple[set[str], set[str]]:
    findings = check_campaign(folder).findings
    return ({f.code for f in findings if f.severity == Severity.ERROR}, {f.code for f in findings})


def _measurement(folder: Path, variant: str) -> dict[str, Any]:
    return json.loads((folder / f"measurements/h200-batch-{variant}.json").read_text(encoding="utf-8"))


def _cold_repeats(doc: dict[str, Any]) -> list[int | None]:
    return [p["repeat"] for p in doc["phases"] if p["phase"] == "cold_forward"]


def test_common_seeds_run_and_check(seeded: Path) -> None:
    errors, codes = _errors_and_codes(seeded)
    assert errors == TEST_RUN_CODES  # exactly what a CPU test run gets, nothing else
    assert not codes & {"cold-run-unmeasured", "duration-unmeasured", "seed-runs-missing"}
    rows = _grid(seeded)
    for variant in ("b4", "b8"):
        mine = [(r["phase"], r["run_index"], r["seed"]) for r in rows if r["variant_id"] == variant]
        assert sorted(mine) == [("cold", "1", "11"), ("cold", "2", "22"), ("warm", "1", "11"), ("warm", "2", "11"),
                                ("warm", "3", "22"), ("warm", "4", "22")]
        doc = _measurement(seeded, variant)
        jsonschema.Draft202012Validator(SCHEMA).validate(doc)
        assert doc["schema_version"] == "2" and _cold_repeats(doc) == [1, 2]  # every cold run measured
        assert [p["phase"] for p in doc["phases"][:6]] == ["model_load", "inputs", "cold_forward"] * 2
        assert doc["configuration"]["repeats"] == 4 and doc["configuration"]["seed"] is None
        # one round per warm run of a variant, each seed's: 2 runs x 2 seeds (it once said "2 rounds")
        assert doc["model"]["run_order"] == "rotated (4 rounds, the first variant rotating)"
    decision = check_campaign(seeded).decision
    for c in decision["configurations"]:
        assert [(s["seed"], s["completed"]) for s in c["seeds"]] == [(11, 3), (22, 3)], c["id"]


def test_two_corpora_run_and_check(two_corpora: Path, base: dict[str, Any]) -> None:
    errors, codes = _errors_and_codes(two_corpora)
    assert errors == TEST_RUN_CODES
    assert not codes & {"cold-run-unmeasured", "duration-unmeasured", "corpus-runs-missing", "corpus-repeated"}
    second = campaign_run.corpus_revision(base["corpora"][1] / "eval.jsonl")
    rows = _grid(two_corpora)
    by_run = {(r["variant_id"], r["phase"], r["run_index"]): r["corpus_revision"] for r in rows}
    assert by_run[("b8", "cold", "2")] == by_run[("b8", "warm", "3")] == by_run[("b8", "warm", "4")] == second
    assert by_run[("b8", "cold", "1")] == by_run[("b8", "warm", "2")] != second
    assert {r["accepted_unique_corpora"] for r in rows} == {"2"}
    with (two_corpora / "c2" / "expected-ids.csv").open(encoding="utf-8", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == TINY
    for variant in ("b4", "b8"):
        doc = _measurement(two_corpora, variant)
        assert _cold_repeats(doc) == [1, 2] and doc["configuration"]["repeats"] == 4
    decision = check_campaign(two_corpora).decision
    for c in decision["configurations"]:
        assert [(k["revision"], k["completed"]) for k in c["corpora"]][1] == (second, 3), c["id"]


def test_resume_variant_resumes_the_interrupted_attempt(resumed: Path) -> None:
    errors, codes = _errors_and_codes(resumed)
    assert errors == TEST_RUN_CODES
    assert not codes & {"cold-run-unmeasured", "duration-unmeasured", "resume-target-invalid",
                        "resume-time-unmeasured"}
    rows = {(r["variant_id"], r["phase"], r["run_index"]): r for r in _grid(resumed)}
    failed, resumption = rows[("b8", "warm", "2")], rows[("b8-resume", "warm", "2")]
    assert "outcome=oom; completed=8" in failed["notes"] and failed["elapsed_seconds"] == ""
    assert "outcome=resumed; resumed=b8/warm/2; reason=resumes b8/warm/2, interrupted after 8 of 24" \
        in resumption["notes"]
    assert resumption["corpus_accepted"] == "true" and resumption["observed_ids"] == str(TINY)
    assert [k for k in rows if k[0] == "b8-resume"] == [("b8-resume", "warm", "2")]  # one resumption, no series
    doc = _measurement(resumed, "b8-resume")
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert [(p["phase"], p["repeat"]) for p in doc["phases"]] == [("model_load", None), ("inputs", None),
                                                                  ("warmup", None), ("warm_forward", 2)]
    configs = {c["id"]: c for c in check_campaign(resumed).decision["configurations"]}
    again, b8 = configs["h200-batch/b8-resume"], configs["h200-batch/b8"]
    assert again["resume"]["of"] == "b8" and again["resume"]["resumed"] == 1
    assert again["resume"]["interrupted_seconds"] is not None  # the interrupted attempt's time is counted
    assert (again["timing"]["warm"]["successes"], again["timing"]["warm"]["failures"]) == (2, 1)
    assert (b8["timing"]["warm"]["successes"], b8["out_of_memory"]) == (1, 1)  # its failure kept, never replaced


def test_interrupted_cold_run_is_resumed_in_a_fresh_process(base: dict[str, Any]) -> None:
    # b8's cold process fails at its second batch (8 texts done); the resumption is a fresh process of its own
    folder = _flaky_run(base, "resumed-cold", 2, once=True)
    errors, codes = _errors_and_codes(folder)
    assert errors == TEST_RUN_CODES and "resume-time-unmeasured" not in codes
    rows = {(r["variant_id"], r["phase"], r["run_index"]): r for r in _grid(folder)}
    assert "outcome=oom; completed=8" in rows[("b8", "cold", "1")]["notes"]
    resumption = rows[("b8-resume", "cold", "1")]
    assert "outcome=resumed; resumed=b8/cold/1" in resumption["notes"] and resumption["corpus_accepted"] == "true"
    doc = _measurement(folder, "b8-resume")
    assert [(p["phase"], p["repeat"]) for p in doc["phases"]] == [("model_load", None), ("inputs", None),
                                                                  ("cold_forward", 1)]
    again = next(c for c in check_campaign(folder).decision["configurations"] if c["id"] == "h200-batch/b8-resume")
    assert (again["timing"]["cold"]["successes"], again["resume"]["resumed"]) == (1, 1)


def _edit(folder: Path, target: Path, variant: str, change: Any) -> Path:
    shutil.copytree(folder, target)
    path = target / f"measurements/h200-batch-{variant}.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return target


def _drop_second_cold_process(doc: dict[str, Any]) -> None:
    doc["phases"] = doc["phases"][:3] + doc["phases"][6:]


def test_format_2_missing_cold_run_is_unmeasured(seeded: Path, tmp_path: Path) -> None:
    # format 2 holds every cold run: one it lacks is unmeasured (an error), not beyond the format
    folder = _edit(seeded, tmp_path / "c", "b8", _drop_second_cold_process)
    findings = check_campaign(folder).findings
    unmeasured = [f for f in findings if f.code == "duration-unmeasured"]
    assert [(f.severity, f.configurations) for f in unmeasured] == [(Severity.ERROR, ("h200-batch/b8",))]
    assert not any(f.code == "cold-run-unmeasured" for f in findings)


def test_format_1_still_reads_with_its_one_cold_phase(seeded: Path, tmp_path: Path) -> None:
    # a format 1 file (the shipped campaigns' format) holds one cold_forward: a later cold run is only a warning
    def to_v1(doc: dict[str, Any]) -> None:
        _drop_second_cold_process(doc)
        doc["schema_version"] = "1"
        doc["phases"][2]["repeat"] = None
    folder = _edit(seeded, tmp_path / "c", "b8", to_v1)
    errors, codes = _errors_and_codes(folder)
    assert errors == TEST_RUN_CODES and "cold-run-unmeasured" in codes


def test_format_2_cold_runs_numbered_in_order(seeded: Path, tmp_path: Path) -> None:
    def swap(doc: dict[str, Any]) -> None:
        doc["phases"][2]["repeat"], doc["phases"][5]["repeat"] = 2, 1
    folder = _edit(seeded, tmp_path / "c", "b8", swap)
    order = [f for f in check_campaign(folder).findings if f.code == "phase-order"]
    assert len(order) == 1 and order[0].claimed == [2, 1]


def test_further_corpus_folders_must_match_the_protocol(base: dict[str, Any], tmp_path: Path, run_cli: Any) -> None:
    protocol = copy.deepcopy(base["protocol"])
    protocol["corpora"] = [{"name": "second", "revision": "second@r1", "size": TINY + 1,
                            "expected_ids": "c2/expected-ids.csv", "reference": "c2/reference.csv"}]
    (tmp_path / "protocol.json").write_text(json.dumps(protocol), encoding="utf-8")
    common = ("campaign", "run", str(tmp_path / "protocol.json"), "--model", str(base["model"]), "--device", "cpu",
              "--allow-cpu-for-tests", "--out", str(tmp_path / "camp"), "--corpus", str(base["corpora"][0]))
    r = run_cli(*common)
    assert r.code == 2 and "give one --corpus per corpus" in r.err
    r = run_cli(*common, "--corpus", str(base["corpora"][1]))
    assert r.code == 2
    assert '/corpora/0/revision "second@r1" (a placeholder, no checksum): set it to "content-sha256:' in r.err
    # the further corpus's size too, before any work (check would say so only after the runs), in the same line
    assert f"/corpora/0/size {TINY + 1} (not these files'): set it to {TINY} before the runs" in r.err, r.err
    assert not (tmp_path / "camp").exists()
