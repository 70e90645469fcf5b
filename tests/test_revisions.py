"""Issue 47 (d): model and tokenizer revisions are immutable. The forms accepted, the moving names refused, and
the forms `campaign run` writes (generator/gpu) accepted as they are written."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

from generator.audit.load.findings import Finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.validate.protocol_rules import check_revisions
from generator.gpu.models import hfmodel, textclf

H200 = json.loads((REPO / "inputs" / "h200-campaign" / "protocol.json").read_text(encoding="utf-8"))
COMMIT, DIGEST = "0123456789abcdef0123456789abcdef01234567", "ab" * 32
MOVING = ["main", "master", "latest", "HEAD", "v1", "v2.1", "1.0", "refs/heads/main", "stable", "dev"]
NOT_IMMUTABLE = [COMMIT[:-1], COMMIT + "8", COMMIT.upper(), f"sha256:{DIGEST[:-1]}", f"sha256:{DIGEST}0",
                 f"sha512:{DIGEST}", f"sha256sum: {DIGEST}", f"{COMMIT} ", "my-model-r1", "x (tokenises itself)"]


def _findings(key: str, value: str, synthetic: bool = False) -> list[Finding]:
    proto: dict[str, Any] = copy.deepcopy(H200)
    proto["synthetic_data"] = synthetic
    proto["experiments"][0]["fixed"][key] = value
    out: list[Finding] = []
    check_revisions(Protocol.of(proto), "protocol.json", out)
    return out


@pytest.mark.parametrize("key", ["model_revision", "tokenizer_revision"])
@pytest.mark.parametrize("value", [COMMIT, f"sha256:{DIGEST}", f"sha256sum:{DIGEST}"])
def test_a_commit_or_a_checksum_is_immutable(key: str, value: str) -> None:
    assert _findings(key, value) == []


@pytest.mark.parametrize("key", ["model_revision", "tokenizer_revision"])
@pytest.mark.parametrize("value", MOVING + NOT_IMMUTABLE)
def test_a_moving_name_or_another_form_is_an_error_naming_the_file_and_field(key: str, value: str) -> None:
    (only,) = _findings(key, value)
    assert (only.code, only.file, only.field) == ("revision-not-immutable", "protocol.json",
                                                  f"/experiments/0/fixed/{key}")
    assert repr(value) in only.message and "h200-batch" in only.message and "None" not in only.message
    assert "40-hex commit" in (only.fix or "") and "sha256:" in (only.fix or "")
    assert ("moves" in only.message) == (value in MOVING)


def test_the_tokenizer_forms_campaign_run_writes_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    (tmp_path / "vocab.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    for value in (hfmodel.tokenizer_revision(tmp_path), textclf.tokenizer_revision(16384, 512),
                  "tinyentry:classify (tokenises itself)"):
        assert _findings("tokenizer_revision", value) == [], value
    assert _findings("model_revision", hfmodel.model_revision(tmp_path)) == []
    assert _findings("model_revision", textclf.tokenizer_revision(16384, 512)) != []  # a tokenizer's form only


def test_a_synthetic_campaign_names_its_stand_ins_but_never_by_a_moving_name() -> None:
    assert _findings("model_revision", "synthetic-classifier-r1", synthetic=True) == []
    for value in MOVING:
        assert [f.code for f in _findings("model_revision", value, synthetic=True)] == ["revision-not-immutable"]


def test_the_committed_campaigns_register_immutable_revisions() -> None:
    for name in ("example", "h200-campaign", "minilm-campaign"):
        data = json.loads((REPO / "inputs" / name / "protocol.json").read_text(encoding="utf-8"))
        out: list[Finding] = []
        check_revisions(Protocol.of(data), "protocol.json", out)
        assert out == [], name
