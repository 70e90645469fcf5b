"""Names that cannot round-trip through the bag are refused where the protocol names them (issue 17, item 6).

Before the rule, a measurement file whose name ends in a space, or holds a literal `%0A`, `%25` or `%`, U+2028
or U+0085, built with exit 0 into a bundle that `verify` or `bagit.py --validate` then rejected.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import BAGIT

from generator.audit.load import names

# what a bundle holds is what these tests are about, not the note parser's limits (tests/test_attacks_*.py)
pytestmark = pytest.mark.usefixtures("note_parsed_here")

# Each name, as the last part of a measurement path, with whether building it used to give a bundle that
# verify or bagit.py rejected (the others are refused for portability: `verify` refuses a control character in
# a zip entry's name).
NAMES = {
    "trailing space": ("b1.json ", True),
    "leading space": (" b1.json", False),
    "literal %0A": ("b1%0A.json", True),
    "literal %25": ("b1%25.json", True),
    "percent": ("b1-100%.json", True),
    "line separator": ("b1\u2028.json", True),
    "next line": ("b1\x85.json", True),
    "control character": ("b1\x01.json", False),
    "newline": ("b1\n.json", False),
    "carriage return": ("b1\r.json", False),
    "tab at the end": ("b1.json\t", True),
}
BUILT = [case for case, (_, rejected) in NAMES.items() if rejected]


def _protocol(campaign: Path) -> dict[str, Any]:
    return json.loads((campaign / "protocol.json").read_text(encoding="utf-8"))


def _rename_measurement(campaign: Path, name: str) -> str:
    """Give the first variant's measurement file `name` (in its folder), in the protocol and on disk."""
    protocol = _protocol(campaign)
    variant = protocol["experiments"][0]["variants"][0]
    new = f"measurements/{name}"
    (campaign / variant["measurement"]).rename(campaign / new)
    variant["measurement"] = new
    (campaign / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    return new


def _findings(run_cli: Any, campaign: Path) -> list[dict[str, Any]]:
    result = run_cli("check", str(campaign), "--json")
    assert result.code == 1, result.err
    return json.loads(result.out)["findings"]


def _name_finding(findings: list[dict[str, Any]], field: str, value: str) -> dict[str, Any]:
    found = [f for f in findings if f["code"] == names.CODE and f["field"] == field and f["value"] == value]
    assert len(found) == 1, [(f["code"], f["field"], f["value"]) for f in findings]
    return found[0]


@pytest.mark.parametrize("case", NAMES)
def test_each_name_is_a_finding_in_check(case: str, campaign: Path, run_cli: Any) -> None:
    new = _rename_measurement(campaign, NAMES[case][0])
    finding = _name_finding(_findings(run_cli, campaign), "/experiments/0/variants/0/measurement", new)
    assert finding["file"] == "protocol.json" and finding["severity"] == "error"
    assert finding["rule"] == names.RULE and repr(new) in finding["message"]
    assert run_cli("validate", str(campaign)).code == 1


@pytest.mark.parametrize("case", BUILT)
def test_build_never_makes_a_bundle_that_verify_or_bagit_rejects(case: str, campaign: Path, tmp_path: Path,
                                                                  run_cli: Any) -> None:
    _rename_measurement(campaign, NAMES[case][0])
    bundle = tmp_path / "bundle"
    built = run_cli("build", str(campaign), "-o", str(bundle), "--unsigned", "--quiet")
    if bundle.exists():  # whatever was built, its own verify and bagit.py accept it
        verified = run_cli("verify", str(bundle), "--allow-unsigned")
        assert verified.code == 0, verified.out + verified.err
        done = subprocess.run([*BAGIT, "--validate", "--quiet", str(bundle)], capture_output=True, text=True,
                              check=False, timeout=120)
        assert done.returncode == 0, done.stderr
        assert names.CODE in (bundle / "data" / "findings.json").read_text(encoding="utf-8")
    assert built.code in (1, 2), built.err  # refused with a finding (exit 1), or not built at all


@pytest.mark.parametrize(("key", "value"), [("raw_results", "resultats-bruts.csv "),
                                            ("tariffs", "tarifs%20forfaits.csv"),
                                            ("expected_ids", "./expected-ids.csv")])
def test_a_campaign_file_named_in_files_is_refused_at_its_field(key: str, value: str, campaign: Path,
                                                                 run_cli: Any) -> None:
    protocol = _protocol(campaign)
    (campaign / protocol["files"][key]).rename(campaign / value)
    protocol["files"][key] = value
    (campaign / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    findings = _findings(run_cli, campaign)
    _name_finding(findings, f"/files/{key}", value)
    assert not [f for f in findings if f["code"] in ("missing-file", "path-outside-campaign")]


def test_a_prediction_template_is_refused_once(campaign: Path, run_cli: Any) -> None:
    protocol = _protocol(campaign)
    pattern = "predictions/{experiment_id}/{variant_id}/{phase}-{run_index}%.csv"
    protocol["files"]["predictions"] = pattern
    (campaign / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    for path in sorted((campaign / "predictions").rglob("*.csv")):
        path.rename(path.with_name(path.stem + "%.csv"))
    findings = _findings(run_cli, campaign)
    _name_finding(findings, "/files/predictions", pattern)
    assert not [f for f in findings if f["code"] == names.CODE and f["file"] != "protocol.json"]


@pytest.mark.parametrize(("path", "code"), [("measurements/../measurements/b1.json", names.CODE),
                                            ("../example/measurements/b1.json", "path-outside-campaign")])
def test_a_dot_dot_part_is_one_finding(path: str, code: str, campaign: Path, run_cli: Any) -> None:
    protocol = _protocol(campaign)
    protocol["experiments"][0]["variants"][0]["measurement"] = path
    (campaign / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    found = [f for f in _findings(run_cli, campaign) if f["field"] == "/experiments/0/variants/0/measurement"]
    assert [(f["code"], f["value"]) for f in found] == [(code, path)]


def test_a_backslash_is_refused_by_the_protocol_schema(campaign: Path, run_cli: Any) -> None:
    """A backslash (a separator on Windows) never reaches the name rule: the schema refuses it at its field."""
    new = _rename_measurement(campaign, "b1\\x.json")
    found = [f for f in _findings(run_cli, campaign) if f["field"] == "/experiments/0/variants/0/measurement"]
    assert [(f["code"], f["value"]) for f in found] == [("schema-violation", new)]
    assert names.name_problem(new) is not None


@pytest.mark.parametrize("good", ["measurements/b1.json", "measurements/b 1.json", "mesures/b1-été.json",
                                  "a/b/c_d.e-f.json"])
def test_ordinary_names_pass(good: str) -> None:
    assert names.name_problem(good) is None
