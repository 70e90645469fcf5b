"""A new user's own corpus and model through `campaign prepare` and `campaign run` as docs/gpu.md says (issue 49
item 1): a 60-text CSV corpus and a 2-layer BERT with a WordPiece tokenizer built offline, run once on the CPU,
checked with no error beyond what a CPU test run is, built; each registration mistake is one line that names the
protocol's field and the value to set."""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import random
import shutil
import string
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import gpu_audit
from test_campaign_run import TEST_RUN_CODES, run_times_registered_now

from generator.audit.check import check_campaign
from generator.audit.load.findings import Severity
from generator.audit.load.readers.labelfile import LabelFile
from generator.audit.validate.corpus.corpusprint import fingerprint, revision_check
from generator.cli.main import main

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from generator.gpu.campaign import campaign_registered, corpus_folder  # noqa: E402
from generator.gpu.models import hfmodel  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ["bug", "feature", "question"]
N = 60
WORDS = {"bug": "crash error fails broken trace exception", "feature": "add support new option allow please",
         "question": "how what why where can does"}
CONTEXT = 16  # tokens: the longer texts are truncated, past the tokenizer's own model_max_length too


def _corpus(folder: Path) -> None:
    """eval.csv (id,text: commas, quotes, a line break, non-ASCII) and eval-reference.csv of support tickets."""
    rng = random.Random(49)
    folder.mkdir()
    rows = []
    for k in range(N):
        label = CLASSES[k % 3]
        text = " ".join(rng.choice([*WORDS[label].split(), "the", "a", "é", "日本"]) for _ in range(rng.randint(2, 40)))
        rows.append((f"ticket-{k:03d}", text + (', "quoted",\nnext line' if k == 7 else ""), label))
    with (folder / "eval.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([("id", "text"), *((i, t) for i, t, _ in rows)])
    with (folder / "eval-reference.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([("id", "label"), *((i, lab) for i, _, lab in rows)])


def _model(folder: Path) -> None:
    """A random 2-layer BERT classifier and its WordPiece tokenizer, saved offline (no download)."""
    folder.mkdir()
    vocab = [*string.ascii_lowercase, *sorted({w for v in WORDS.values() for w in v.split()}), "the", "é", "日", "本"]
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *vocab]) + "\n",
                                      encoding="utf-8")
    transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), model_max_length=12).save_pretrained(
        str(folder))
    config = transformers.BertConfig(vocab_size=len(vocab) + 5, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                                     num_labels=len(CLASSES), id2label=dict(enumerate(CLASSES)),
                                     label2id={c: i for i, c in enumerate(CLASSES)},
                                     architectures=["BertForSequenceClassification"])
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(config).save_pretrained(str(folder))


def _protocol() -> dict[str, Any]:
    """inputs/h200-campaign-protocol.json made the user's, as docs/gpu.md says: the revisions left as "TODO"."""
    p = json.loads((ROOT / "inputs" / "h200-campaign-protocol.json").read_text(encoding="utf-8"))
    p.update(title="Support tickets, our tiny BERT, batch 1/4/8", notes="our own corpus and model",
             classes=CLASSES, **run_times_registered_now())
    p["corpus"].update(name="support tickets", revision="TODO", size=N, source="our ticket tracker")
    p["quality"].update(threshold=0.0, tolerance=1.0)
    p["quality"]["reference"].update(name="a guess", value=0.5)
    exp = p["experiments"][0]
    exp.update(id="tickets-batch", runs_per_variant=2, cold_runs_per_variant=0)  # no fresh process: a cheap test
    exp["fixed"].update(corpus_revision="TODO", model_revision="TODO", tokenizer_revision="TODO", context=CONTEXT,
                        input_order="eval.csv order", truncation=f"to {CONTEXT} tokens", padding="to the longest")
    return p


@pytest.fixture(scope="module")
def byo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The campaign, made once as a new user makes it: prepare (with the model), then run on the CPU."""
    root = tmp_path_factory.mktemp("byo")
    _corpus(root / "corpus")
    _model(root / "model")
    (root / "protocol.json").write_text(json.dumps(_protocol(), indent=2), encoding="utf-8")
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        code = main(["campaign", "prepare", str(root / "protocol.json"), "--corpus", str(root / "corpus"), "--model",
                     str(root / "model"), "--out", str(root / "registered")])
    prepared = subprocess.CompletedProcess([], code, said.getvalue(), "")
    ran = gpu_audit("campaign", "run", str(root / "registered" / "protocol.json"), "--model", str(root / "model"),
                    "--corpus", str(root / "corpus"), "--device", "cpu", "--allow-cpu-for-tests",
                    "--out", str(root / "campaign"))
    return {"root": root, "prepared": prepared, "ran": ran, "campaign": root / "campaign", "model": root / "model",
            "corpus": root / "corpus", "registered": root / "registered" / "protocol.json"}


def _fingerprint(corpus: Path) -> str:
    with (corpus / "eval-reference.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return fingerprint(LabelFile("reference.csv", ids=[r["id"] for r in rows], labels=[r["label"] for r in rows]))


def test_prepare_writes_the_revisions_where_the_protocol_holds_placeholders(byo: dict[str, Any]) -> None:
    assert byo["prepared"].returncode == 0, byo["prepared"].stderr
    registered = json.loads(byo["registered"].read_text(encoding="utf-8"))
    content = _fingerprint(byo["corpus"])  # what `check` computes, with its own (pyarrow) code
    fixed = registered["experiments"][0]["fixed"]
    assert registered["corpus"]["revision"] == fixed["corpus_revision"] == content
    assert fixed["model_revision"] == hfmodel.model_revision(byo["model"])
    assert fixed["tokenizer_revision"] == hfmodel.tokenizer_revision(byo["model"])
    said = byo["prepared"].stdout
    assert f'set /corpus/revision, /experiments/0/fixed/corpus_revision to "{content}"' in said
    assert f'set /experiments/0/fixed/model_revision to "{fixed["model_revision"]}"' in said
    # the command to run next names the model and the corpus folder given, not placeholders to fill in again
    assert f'--model {byo["model"]} --corpus {byo["corpus"]} --device cuda:0' in said


def test_the_run_speaks_in_words(byo: dict[str, Any]) -> None:
    ran = byo["ran"]
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[0].startswith("CPU (test run), no GPU driver, torch ")
    assert "None" not in ran.stdout + ran.stderr
    # the texts past the tokenizer's 12 tokens are truncated to the registered context: no "indexing errors" warning
    assert [line for line in ran.stderr.splitlines() if not line.startswith("warning: the protocol is not sealed")] \
        == []


def test_check_finds_only_what_a_cpu_test_run_is_and_build_succeeds(byo: dict[str, Any],
                                                                    example_keys: tuple[Path, Path]) -> None:
    result = check_campaign(byo["campaign"])
    errors = Counter(f.code for f in result.findings if f.severity == Severity.ERROR)
    # a CPU test run is never evidence: each configuration's test-run, each row's device-not-gpu; nothing else
    assert set(TEST_RUN_CODES) == {"test-run", "device-not-gpu"}
    assert errors == {"test-run": 3, "device-not-gpu": 6}
    assert list(result.decision["campaign"]["fingerprints"]) == [
        {"revision": _fingerprint(byo["corpus"]), "fingerprint": _fingerprint(byo["corpus"]),
         "revision_check": "matches"}]
    key, cert = example_keys  # the one build of the file: exit 1 is build's "error findings" (the test run's)
    bundle = byo["root"] / "bundle"
    assert main(["build", str(byo["campaign"]), "-o", str(bundle), "--key", str(key), "--cert", str(cert),
                 "--quiet"]) == 1
    assert (bundle / "data" / "decision-note.pdf").is_file()
    assert main(["verify", str(bundle), "--trust", str(cert)]) == 0


def _edited(byo: dict[str, Any], tmp: Path, edit: Any) -> Path:
    protocol = json.loads(byo["registered"].read_text(encoding="utf-8"))
    edit(protocol)
    (tmp / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    return tmp / "protocol.json"


def _fixed(**values: Any) -> Any:
    return lambda p: p["experiments"][0]["fixed"].update(values)


def _corpus_revision(value: str) -> Any:
    def edit(p: dict[str, Any]) -> None:
        p["corpus"]["revision"] = value
        p["experiments"][0]["fixed"]["corpus_revision"] = value
    return edit


def test_each_mistake_is_one_line_naming_the_field_and_the_value(byo: dict[str, Any], tmp_path: Path,
                                                                 run_cli: Any) -> None:
    content = _fingerprint(byo["corpus"])
    model, tokenizer = hfmodel.model_revision(byo["model"]), hfmodel.tokenizer_revision(byo["model"])
    other = "content-sha256:" + "0" * 64
    cases = [
        (_corpus_revision(other), f'the content fingerprint of {byo["corpus"]} (its expected IDs and reference '
         f'labels) is "{content}"; the protocol registers /corpus/revision "{other}", '
         f'/experiments/0/fixed/corpus_revision "{other}" (not these files\'): set each to "{content}" before the '
         "runs."),
        (_fixed(model_revision="main"), f'the model\'s revision ({byo["model"]}) is "{model}"; the protocol registers '
         f'/experiments/0/fixed/model_revision "main" (a placeholder, no checksum): set it to "{model}" before the '
         "runs."),
        (_fixed(tokenizer_revision="TODO"), f'the tokenizer\'s revision ({byo["model"]}) is "{tokenizer}"; the '
         'protocol registers /experiments/0/fixed/tokenizer_revision "TODO" (a placeholder, no checksum): set it to '
         f'"{tokenizer}" before the runs.'),
        (lambda p: p["corpus"].update(size=1000), f'the number of texts in {byo["corpus"] / "eval.csv"} is 60; the '
         'protocol registers /corpus/size 1000 (not these files\'): set it to 60 before the runs.'),
    ]
    for k, (edit, line) in enumerate(cases):
        folder = tmp_path / str(k)
        folder.mkdir()
        r = run_cli("campaign", "run", str(_edited(byo, folder, edit)), "--model", str(byo["model"]), "--corpus",
                    str(byo["corpus"]), "--device", "cpu", "--allow-cpu-for-tests", "--out", str(folder / "camp"))
        assert r.code == 2 and r.err.splitlines()[-1] == "gpu-audit: error: " + line
        assert not (folder / "camp").exists()


def test_prepare_refuses_a_checksum_that_is_not_the_files(byo: dict[str, Any], tmp_path: Path, run_cli: Any) -> None:
    wrong = "sha256:" + "0" * 64
    r = run_cli("campaign", "prepare", str(_edited(byo, tmp_path, _fixed(model_revision=wrong))), "--corpus",
                str(byo["corpus"]), "--model", str(byo["model"]), "--out", str(tmp_path / "registered"))
    assert r.code == 2 and f'/experiments/0/fixed/model_revision "{wrong}" (not these files\')' in r.err
    r = run_cli("campaign", "prepare", str(_edited(byo, tmp_path, _fixed(model_revision="TODO"))), "--corpus",
                str(byo["corpus"]), "--out", str(tmp_path / "registered"))
    assert r.code == 2 and '/experiments/0/fixed/model_revision "TODO" is a placeholder: give --model MODEL' in r.err
    assert not (tmp_path / "registered").exists()


def test_check_says_what_to_register_for_a_revision_the_runs_did_not_use(byo: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    shutil.copytree(byo["campaign"], campaign)
    _edited({"registered": campaign / "protocol.json"}, campaign, _fixed(model_revision="TODO"))
    model = hfmodel.model_revision(byo["model"])
    fixes = {str(f.fix) for f in check_campaign(campaign).findings if f.code == "fixed-value-mismatch"}
    assert len(fixes) == 1 and f"register {model} as fixed.model_revision of experiment 'tickets-batch'" in fixes.pop()


def test_the_fingerprint_is_the_one_check_computes() -> None:
    rng = random.Random(7)
    alphabet = ["a", "B", "0", "-", "é", "z", "日", "ß", "_"]
    for n in (1, 2, 17, 300):
        ids = list({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(n)})
        labels = [rng.choice(["x", "y", "ü", "a,b"]) for _ in ids]
        assert corpus_folder.content_fingerprint(zip(ids, labels, strict=True)) == \
            fingerprint(LabelFile("reference.csv", ids=ids, labels=labels))
    example = ROOT / "inputs" / "example" / "reference.csv"
    with example.open(encoding="utf-8", newline="") as fh:
        pairs = [(r["id"], r["label"]) for r in csv.DictReader(fh)]
    assert corpus_folder.content_fingerprint(pairs) == fingerprint(
        LabelFile("reference.csv", ids=[i for i, _ in pairs], labels=[label for _, label in pairs]))


CONTENT = "content-sha256:" + "ab12" * 16


@pytest.mark.parametrize("revision", [
    CONTENT, "tickets@" + CONTENT, "tickets@" + CONTENT[:31], "x@content-sha256:" + CONTENT[15:31].upper(),
    "x@" + CONTENT[:30], "x@" + CONTENT[:32], "x@" + CONTENT[:-1] + "0", "x@content-sha256:", "TODO", "tickets v1"])
def test_campaign_run_reads_a_corpus_revision_as_check_does(revision: str, tmp_path: Path) -> None:
    (tmp_path / "eval.jsonl").write_text("", encoding="utf-8")
    accepted = campaign_registered.corpus_accepts(revision, CONTENT, tmp_path / "eval.jsonl")
    assert {True: "matches", False: "differs", None: "absent"}[accepted] == revision_check(revision, CONTENT)


def test_the_registered_campaigns_corpus_revision_form_still_runs() -> None:
    # inputs/h200-campaign and inputs/minilm-campaign registered `<name>@sha256:<16 hex>` of eval.jsonl
    corpus = ROOT / "inputs" / "corpora" / "debian-descriptions"
    registered = json.loads((ROOT / "inputs" / "h200-campaign-protocol.json").read_text(encoding="utf-8"))
    folder = corpus_folder.read_folder(corpus)
    assert campaign_registered.corpus_mistakes(registered, folder, corpus) == []
    changed = copy.deepcopy(registered)
    changed["corpus"]["revision"] = registered["corpus"]["revision"][:-1] + "0"
    [mistake] = campaign_registered.corpus_mistakes(changed, folder, corpus)
    assert mistake.pointers == ("/corpus/revision",) and mistake.value == registered["corpus"]["revision"]


@pytest.mark.parametrize(("files", "said"), [
    ({"eval.jsonl": '{"id": "a", "text": "x"}\n', "eval.csv": "id,text\na,x\n"}, "holds both of eval.jsonl and"),
    ({"eval-reference.csv": "id,label\na,bug\n"}, "holds neither of eval.jsonl and eval.csv"),
    ({"eval.csv": "id,text\na,x\n"}, "eval-reference.csv is missing"),
    ({"eval.csv": "ident,text\na,x\n", "eval-reference.csv": "id,label\na,bug\n"}, "the header must name id,text"),
    ({"eval.jsonl": '{"id": "a"}\n', "eval-reference.csv": "id,label\na,bug\n"}, "eval.jsonl:1: not a JSON object"),
    ({"eval.csv": "id,text\na,x\nb,y\n", "eval-reference.csv": "id,label\na,bug\n"},
     "1 of its IDs missing (first 'b')"),
    ({"eval.csv": "id,text\na,x\n", "eval-reference.csv": "id,label\na,bug\n", "expected-ids.csv": "id\na\nc\n"},
     "expected-ids.csv lists other IDs than eval.csv holds"),
])
def test_a_corpus_folder_that_is_not_one_is_refused_with_what_to_do(files: dict[str, str], said: str,
                                                                    tmp_path: Path) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(corpus_folder.UsageError) as caught:
        corpus_folder.read_folder(tmp_path)
    assert said in str(caught.value)


def test_the_first_line_names_what_is_absent_in_words() -> None:
    from generator.cli.campaign import _machine

    gpu = {"gpu_name": "NVIDIA H200", "device": "cuda:0", "torch_version": "2.5.1", "runtime": "CUDA",
           "runtime_version": "12.4", "driver_version": "550.54"}
    assert _machine(gpu) == "NVIDIA H200 (cuda:0), torch 2.5.1, CUDA 12.4, driver 550.54"
    assert _machine({**gpu, "runtime": None, "runtime_version": None, "driver_version": None}) == \
        "NVIDIA H200 (cuda:0), torch 2.5.1, runtime not reported, driver version not read"
    assert _machine({**gpu, "gpu_name": None, "device": "cpu"}) == \
        "CPU (test run), no GPU driver, torch 2.5.1"
