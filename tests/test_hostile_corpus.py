"""The corpus of inputs that once failed (tests/fuzz/cases/*), replayed on every run.

Each case is a folder: `case.json` (what it is based on, the commands, the expected exit statuses, and
`xfail` for a crash found in a file the hostile-input work may not edit, reported to its owner) and `files/`
(the files that differ from inputs/example, from a fresh bundle of it, or the zip itself). Every command must
keep the property: exit as expected with a message, no uncaught exception, nothing outside the folder shown,
inputs unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzz import harness

CASES = sorted(p for p in harness.CASES.iterdir() if (p / "case.json").is_file())


def _param(case: Path) -> object:
    spec = json.loads((case / "case.json").read_text(encoding="utf-8"))
    marks = [pytest.mark.xfail(strict=True, reason=spec["xfail"])] if spec.get("xfail") else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case_keeps_the_property(case: Path, tmp_path: Path) -> None:
    spec, root = harness.apply_case(case, tmp_path)
    for argv in harness.case_argvs(spec, root, tmp_path):
        o, problems = harness.check_command(argv, [root, tmp_path / "outside"], expect=spec["expect"],
                                            timeout=spec.get("timeout"), bound=spec.get("timeout"))
        assert not problems, harness.describe(o, [spec["note"]], problems)


def test_the_corpus_is_not_empty() -> None:
    assert len(CASES) >= 20
    kinds = {json.loads((c / "case.json").read_text())["kind"] for c in CASES}
    assert kinds == {"campaign", "bundle", "zip", "files"}
