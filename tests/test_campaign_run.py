"""Tests of `gpu-audit campaign` (train, run) on the CPU, and of the committed real H200 campaign."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from seal_helpers import local_tsa, seal_in_place, team

from generator.audit.check import check_campaign
from generator.audit.load.findings import Severity
from generator.seal.record import REGISTRATION_FILE, SIGNATURE_FILE, TOKEN_FILE
from generator.seal.unseal import read_seal

torch = pytest.importorskip("torch")

from generator.gpu.campaign import campaign_rows, campaign_run  # noqa: E402
from generator.gpu.models import textclf  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "inputs" / "corpora" / "debian-descriptions"
H200 = ROOT / "inputs" / "h200-campaign"
MODEL_DIR = ROOT / "inputs" / "reference-model"
TINY = 24


def run_times_registered_now() -> dict[str, Any]:
    """registered_at an hour ago, a UTC window from 30 minutes ago to 6 hours ahead, the deadline a day ahead."""
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    local = "%Y-%m-%dT%H:%M"
    return {"registered_at": (now - timedelta(hours=1)).isoformat(),
            "window": {"start": (now - timedelta(minutes=30)).strftime(local),
                       "end": (now + timedelta(hours=6)).strftime(local), "timezone": "UTC"},
            "deadline": (now + timedelta(days=1)).strftime(local)}


# What a test run is, whatever else it holds: never evidence of a decision (issue 47 item 2).
TEST_RUN_CODES = {"test-run", "device-not-gpu"}


def errors(folder: Path) -> list[Any]:
    """The error findings of a campaign, the test-run ones aside (every CPU run of the suite has those)."""
    return [f for f in check_campaign(folder).findings if f.severity == Severity.ERROR
            and f.code not in TEST_RUN_CODES]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny model trained on 200 records, a 24-text corpus and a protocol registered for it."""
    root = tmp_path_factory.mktemp("tiny")
    blob, _ = textclf.train(CORPUS / "train.jsonl", CORPUS / "tune.jsonl", seed=7, lrs=[0.05], epochs=1,
                            buckets=512, dim=8, context=64, limit=200, bootstrap=10)
    textclf.save(blob, root / "model.pt")
    corpus = root / "corpus"
    corpus.mkdir()
    lines = (CORPUS / "eval.jsonl").read_text(encoding="utf-8").splitlines()[:TINY]
    (corpus / "eval.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with (CORPUS / "eval-reference.csv").open(encoding="utf-8", newline="") as fh:
        ref = list(csv.reader(fh))[: TINY + 1]
    with (corpus / "eval-reference.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(ref)
    revision = campaign_run.corpus_revision(corpus / "eval.jsonl")
    model_revision = "sha256:" + hashlib.sha256((root / "model.pt").read_bytes()).hexdigest()
    protocol = json.loads((ROOT / "inputs" / "h200-campaign-protocol.json").read_text(encoding="utf-8"))
    protocol["corpus"].update(revision=revision, size=TINY)
    protocol["quality"].update(threshold=0.0, tolerance=1.0)
    protocol["quality"]["reference"]["value"] = 0.5
    protocol.update(run_times_registered_now())  # the runner records its times: the window must hold them
    for exp in protocol["experiments"]:
        exp["runs_per_variant"] = 2
        exp["fixed"].update(corpus_revision=revision, model_revision=model_revision, context=64,
                            tokenizer_revision=textclf.tokenizer_revision(512, 64))
    (root / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    return {"root": root, "model": root / "model.pt", "corpus": corpus, "protocol": root / "protocol.json"}


def test_run_refused_without_gpu(tiny: dict[str, Path], run_cli: Any, tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    out = tmp_path / "camp"
    r = run_cli("campaign", "run", str(tiny["protocol"]), "--model", str(tiny["model"]), "--corpus",
                str(tiny["corpus"]), "--device", "cuda:0", "--out", str(out))
    assert r.code == 2
    assert "no file was written" in r.err.lower() or "nothing runs on the cpu" in r.err.lower()
    assert list(tmp_path.iterdir()) == []


def test_cpu_refused_without_test_flag(tiny: dict[str, Path], run_cli: Any, tmp_path: Path) -> None:
    r = run_cli("campaign", "run", str(tiny["protocol"]), "--model", str(tiny["model"]), "--corpus",
                str(tiny["corpus"]), "--device", "cpu", "--out", str(tmp_path / "camp"))
    assert r.code == 2 and list(tmp_path.iterdir()) == []


def test_existing_out_refused(tiny: dict[str, Path], run_cli: Any, tmp_path: Path) -> None:
    r = run_cli("campaign", "run", str(tiny["protocol"]), "--model", str(tiny["model"]), "--corpus",
                str(tiny["corpus"]), "--device", "cpu", "--allow-cpu-for-tests", "--out", str(tmp_path))
    assert r.code == 2 and "already exists" in r.err


def _shared_rental(tiny: dict[str, Path], folder: Path, named: str) -> Path:
    """The tiny protocol with its experiment's rental listed in `rentals` and named by its id (#49 item 3)."""
    protocol = json.loads(tiny["protocol"].read_text(encoding="utf-8"))
    protocol["rentals"] = [{"id": "h200-week", **protocol["experiments"][0]["rental"]}]
    protocol["experiments"][0]["rental"] = named
    (folder / "protocol.json").write_text(json.dumps(protocol), encoding="utf-8")
    return folder / "protocol.json"


def test_an_unknown_shared_rental_is_refused_before_any_work(tiny: dict[str, Path], run_cli: Any,
                                                              tmp_path: Path) -> None:
    r = run_cli("campaign", "run", str(_shared_rental(tiny, tmp_path, "h200-wek")), "--model", str(tiny["model"]),
                "--corpus", str(tiny["corpus"]), "--device", "cpu", "--allow-cpu-for-tests", "--out",
                str(tmp_path / "camp"))
    assert r.code == 2 and 'rental "h200-wek"' in r.err and '"h200-week"' in r.err, r.err
    assert not (tmp_path / "camp").exists()


def test_a_shared_rental_runs_and_its_rows_name_its_package(tiny: dict[str, Path], run_cli: Any,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "camp"
    r = run_cli("campaign", "run", str(_shared_rental(tiny, tmp_path, "h200-week")), "--model", str(tiny["model"]),
                "--corpus", str(tiny["corpus"]), "--device", "cpu", "--allow-cpu-for-tests", "--out", str(out))
    assert r.code == 0, r.err
    assert errors(out) == []
    with (out / "resultats-bruts.csv").open(encoding="utf-8", newline="") as fh:
        assert {(row["duration_days"], row["lots"]) for row in csv.DictReader(fh)} == {("7", "1")}


def test_cpu_end_to_end_passes_check(tiny: dict[str, Path], run_cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "camp"
    r = run_cli("campaign", "run", str(tiny["protocol"]), "--model", str(tiny["model"]), "--corpus",
                str(tiny["corpus"]), "--device", "cpu", "--allow-cpu-for-tests", "--out", str(out))
    assert r.code == 0, r.err
    assert "warning: the protocol is not sealed" in r.err and "declared, not sealed" in r.err  # issue 48 item 3
    assert [p.name for p in tmp_path.iterdir()] == ["camp"]  # the temporary sibling was renamed
    assert errors(out) == []
    with (out / "resultats-bruts.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3 * (1 + 2)
    assert all(campaign_rows.CPU_NOTE in row["notes"] and row["device"] == "cpu" for row in rows)
    assert all(row["peak_allocated_bytes"] == "" for row in rows)  # not measured, never 0
    warm = [(row["variant_id"], row["run_index"]) for row in rows if row["phase"] == "warm"]
    assert len(warm) == 6 and len(list(out.glob("predictions/*/*/*.csv"))) == 9
    assert (out / "protocol.json").read_bytes() == tiny["protocol"].read_bytes()
    assert "h200" not in (out / "tarifs-forfaits.csv").read_text(encoding="utf-8")
    assert all(json.loads(p.read_text(encoding="utf-8"))["test_run"] is True for p in out.glob("measurements/*.json"))


def test_a_cpu_test_run_of_a_rented_rtx_4090_is_no_decision(tiny: dict[str, Path], run_cli: Any,
                                                            tmp_path: Path) -> None:
    # issue 47 item 2: a CPU test run on a protocol renting a priced RTX 4090 once checked clean and was answered
    protocol = json.loads(tiny["protocol"].read_text(encoding="utf-8"))
    for exp in protocol["experiments"]:
        exp["rental"] = {"gpu": "rtx-4090", "duration_days": 7, "lots": 1}
    (tmp_path / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    out = tmp_path / "camp"
    r = run_cli("campaign", "run", str(tmp_path / "protocol.json"), "--model", str(tiny["model"]), "--corpus",
                str(tiny["corpus"]), "--device", "cpu", "--allow-cpu-for-tests", "--out", str(out))
    assert r.code == 0, r.err
    result = check_campaign(out)
    assert errors(out) == []  # nothing else is wrong with it
    decision = result.decision
    assert decision["decision"]["answer"] is None and decision["decision"]["ranking"] == []
    for c in decision["configurations"]:
        codes = {e["code"] for e in c["evidence"]["errors"]}
        assert not c["admissible"] and c["test_run"] is True and codes >= {"test-run", "device-not-gpu"}, c["id"]
    test_runs = [f for f in result.findings if f.code == "test-run"]
    assert {f.file for f in test_runs} == {f"measurements/{p.name}" for p in out.glob("measurements/*.json")}
    r = run_cli("check", str(out))
    assert r.code == 1 and "Answer: none" in r.out and "TEST RUN: NO DECISION" in r.out


def test_rotation() -> None:
    assert campaign_run.rotation(["b1", "b4", "b8"], 4) == [["b1", "b4", "b8"], ["b4", "b8", "b1"],
                                                            ["b8", "b1", "b4"], ["b1", "b4", "b8"]]


def test_training_is_deterministic(tmp_path: Path) -> None:
    kwargs: dict[str, Any] = dict(seed=3, lrs=[0.05], epochs=1, buckets=256, dim=4, context=32, limit=120, bootstrap=5)
    a, ra = textclf.train(CORPUS / "train.jsonl", CORPUS / "tune.jsonl", **kwargs)
    b, rb = textclf.train(CORPUS / "train.jsonl", CORPUS / "tune.jsonl", **kwargs)
    assert ra == rb
    assert all(torch.equal(a["state_dict"][k], b["state_dict"][k]) for k in a["state_dict"])


def test_reference_model_sha256_matches_readme() -> None:
    digest = hashlib.sha256((MODEL_DIR / "model.pt").read_bytes()).hexdigest()
    assert digest in (MODEL_DIR / "README.md").read_text(encoding="utf-8")
    tuning = json.loads((MODEL_DIR / "tuning.json").read_text(encoding="utf-8"))
    assert tuning["model_sha256"] == digest
    assert (MODEL_DIR / "model.pt").stat().st_size < 5 * 2**20


def test_committed_h200_campaign_passes_check() -> None:
    if not H200.is_dir():
        pytest.skip("inputs/h200-campaign is not there yet")
    assert errors(H200) == []
    protocol = json.loads((H200 / "protocol.json").read_text(encoding="utf-8"))
    assert protocol["synthetic_data"] is False
    digest = hashlib.sha256((MODEL_DIR / "model.pt").read_bytes()).hexdigest()
    assert protocol["experiments"][0]["fixed"]["model_revision"] == "sha256:" + digest
    assert not re.search(r"^h200,", (H200 / "tarifs-forfaits.csv").read_text(encoding="utf-8"), re.M)


# --- issue 48 item 3: the registration sealed before the runs ------------------------------------------------


def _first_phase(folder: Path) -> datetime:
    """The earliest started_at of any phase of the campaign's measurements."""
    return min(datetime.fromisoformat(ph["started_at"].replace("Z", "+00:00"))
               for p in folder.glob("measurements/*.json")
               for ph in json.loads(p.read_text(encoding="utf-8"))["phases"] if ph.get("started_at"))


def _sealed_campaign_checks_clean(out: Path) -> None:
    assert errors(out) == []
    assert check_campaign(out).decision["registration"]["status"] == "sealed-time-stamped"
    token = read_seal(out).token
    assert token is not None and token.time < _first_phase(out)


@pytest.mark.allow_hosts(["127.0.0.1"])  # this test only, and only the local authority
def test_campaign_run_with_a_key_seals_before_the_first_phase(tiny: dict[str, Path], run_cli: Any, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for proxy in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    key, cert = team().write(tmp_path / "keys")
    out = tmp_path / "camp"
    # the token 50 minutes ago: before the fixture's window (opened 30 minutes ago) and before any run
    with local_tsa(at=datetime.now(UTC) - timedelta(minutes=50)) as tsa:
        r = run_cli("campaign", "run", str(tiny["protocol"]), "--model", str(tiny["model"]), "--corpus",
                    str(tiny["corpus"]), "--device", "cpu", "--allow-cpu-for-tests", "--out", str(out),
                    "--key", str(key), "--cert", str(cert), "--tsa", tsa.url)
    assert r.code == 0, r.err
    assert "sealed 4 files before the first run" in r.out and "not sealed" not in r.err
    assert {p.name for p in out.glob("registration.json*")} == {REGISTRATION_FILE, SIGNATURE_FILE, TOKEN_FILE}
    _sealed_campaign_checks_clean(out)


def _prepared_and_sealed(tiny: dict[str, Path], run_cli: Any, folder: Path) -> Path:
    """The workstation's part: the registered files written by `campaign prepare`, sealed as `register` does."""
    r = run_cli("campaign", "prepare", str(tiny["protocol"]), "--corpus", str(tiny["corpus"]), "--out", str(folder))
    assert r.code == 0, r.err
    assert sorted(p.name for p in folder.iterdir()) == ["expected-ids.csv", "protocol.json", "reference.csv",
                                                        "tarifs-forfaits.csv"]
    seal_in_place(folder, datetime.now(UTC) - timedelta(minutes=50))
    return folder / "protocol.json"


def test_a_sealed_folder_runs_and_its_seal_travels_into_the_campaign(tiny: dict[str, Path], run_cli: Any,
                                                                     tmp_path: Path) -> None:
    # the GPU machine's part: `campaign run` without --key on the sealed folder's protocol
    protocol = _prepared_and_sealed(tiny, run_cli, tmp_path / "sealed")
    out = tmp_path / "camp"
    r = run_cli("campaign", "run", str(protocol), "--model", str(tiny["model"]), "--corpus", str(tiny["corpus"]),
                "--device", "cpu", "--allow-cpu-for-tests", "--out", str(out))
    assert r.code == 0, r.err
    assert "its 4 files unchanged since sealed" in r.out and "not sealed" not in r.err
    for name in (REGISTRATION_FILE, SIGNATURE_FILE, TOKEN_FILE):
        assert (out / name).read_bytes() == (tmp_path / "sealed" / name).read_bytes()
    _sealed_campaign_checks_clean(out)


def test_a_sealed_file_changed_before_the_run_is_refused(tiny: dict[str, Path], run_cli: Any, tmp_path: Path) -> None:
    protocol = _prepared_and_sealed(tiny, run_cli, tmp_path / "sealed")
    argv = ("campaign", "run", str(protocol), "--model", str(tiny["model"]), "--corpus", str(tiny["corpus"]),
            "--device", "cpu", "--allow-cpu-for-tests", "--out", str(tmp_path / "camp"))
    key, cert = team().write(tmp_path / "keys")
    r = run_cli(*argv, "--key", str(key), "--cert", str(cert))  # sealed already: a second seal would be later
    assert r.code == 2 and "sealed already: run it without --key" in r.err
    reference = tmp_path / "sealed" / "reference.csv"
    reference.write_bytes(reference.read_bytes().replace(b"\r\n", b"\n"))  # same rows, other bytes
    r = run_cli(*argv)
    assert r.code == 2 and f"{reference} changed since it was sealed" in r.err and "nothing was run" in r.err
    assert not (tmp_path / "camp").exists()
    reference.unlink()
    r = run_cli(*argv)
    assert r.code == 2 and f"{reference} is sealed by registration.json but missing" in r.err


def test_a_key_without_pyhanko_is_sent_to_the_workstation(tiny: dict[str, Path], tmp_path: Path) -> None:
    # the GPU machine holds Python, PyTorch and NumPy only: pyHanko and cryptography cannot be imported there
    key, cert = team().write(tmp_path / "keys")
    blocker = ("import sys\n"
               "class Bare:\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name.split('.')[0] in ('pyhanko', 'cryptography'):\n"
               "            raise ModuleNotFoundError(name)\n"
               "sys.meta_path.insert(0, Bare())\n"
               "from generator.cli.main import main\n"
               "sys.exit(main(sys.argv[1:]))\n")
    out = tmp_path / "camp"
    proc = subprocess.run([sys.executable, "-c", blocker, "campaign", "run", str(tiny["protocol"]), "--model",
                           str(tiny["model"]), "--corpus", str(tiny["corpus"]), "--device", "cpu",
                           "--allow-cpu-for-tests", "--out", str(out), "--key", str(key), "--cert", str(cert)],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "sealing needs pyHanko" in proc.stderr and "seal on your workstation first" in proc.stderr
    assert "gpu-audit register DIR --key KEY.pem --cert CERT.pem --tsa URL" in proc.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["keys"]
