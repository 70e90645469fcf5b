"""Machine output: with --json every command prints one JSON object whatever its exit status (an `error` object
with code, message and fix when it stops), and a reader that leaves early (`| head -1`) ends nothing and is told
nothing. Real processes where exit statuses and pipes are what is tested."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import cli_doc
import pytest
from conftest import EXAMPLE, REPO

from generator.cli.jsonerror import code_and_fix
from generator.core import errors
from generator.core.errors import (
    CampaignNotFoundError,
    EnvironmentFaultError,
    LimitExceededError,
    OutputExistsError,
    UsageError,
)

HANG_GUARD_S = 300  # a hung child fails the test instead of the suite; no duration is measured


def _env(unbuffered: bool = False) -> dict[str, str]:
    """The environment a user's shell gives: Python's own buffering unless `unbuffered` (python -u)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


def _gpu_audit(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator", *map(str, argv)], capture_output=True, text=True,
                          cwd=REPO, env=_env(), timeout=HANG_GUARD_S, check=False)


def _json_commands() -> set[str]:
    """Every command and subcommand that has a --json option."""
    return {name for name, parser in cli_doc.commands().items() if name
            and any("--json" in action.option_strings for action in parser._actions)}


def _cases(tmp: Path) -> list[tuple[str, list[str | Path], str]]:
    """(command, command line, expected code): an exit-2 case of each command that has --json."""
    existing = tmp / "exists.json"
    existing.write_text("mine\n")
    junk = tmp / "invoice.pdf"
    junk.write_bytes(b"%PDF-1.7 not an invoice")
    missing = tmp / "no-such-folder"
    return [
        ("validate", ["validate", "--json", missing], "campaign-not-found"),
        ("check", ["check", "--json", missing], "campaign-not-found"),
        ("check", ["check", "--json", "--out", existing, EXAMPLE], "output-exists"),
        ("check", ["check", "--json", "--nonsense", EXAMPLE], "usage"),  # argparse's own error
        ("check", ["check", "--js"], "usage"),  # the abbreviation argparse accepts, and a missing argument
        ("invoice check", ["invoice", "check", "--json", junk, missing], "unreadable-input"),
        ("measure estimate", ["measure", "estimate", "--json", "--parameters", "seven", "--bits", "16"], "usage"),
        ("measure estimate", ["measure", "estimate", "--json", "--parameters", "7e9", "--bits", "x"], "usage"),
        ("measure environment", ["measure", "environment", "--json", "--output", existing], "output-exists"),
    ]


def test_every_command_with_json_prints_an_error_object_on_exit_2(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    assert {command for command, _, _ in cases} == _json_commands(), "a command with --json has no exit-2 case"
    for _, argv, code in cases:
        proc = _gpu_audit(*argv)
        shown = f"gpu-audit {' '.join(map(str, argv))}: {proc.stdout!r} {proc.stderr!r}"
        assert proc.returncode == 2, shown
        answer = json.loads(proc.stdout)  # the whole of stdout is one JSON object
        assert set(answer) == {"error", "exit_status"} and answer["exit_status"] == 2, shown
        error = answer["error"]
        assert set(error) == {"code", "message", "fix"} and error["code"] == code, shown
        assert all(isinstance(v, str) and v.strip() for v in error.values()), shown
        assert error["message"] in proc.stderr.replace("error: ", ""), shown  # the line stderr shows, as ever
        assert "Traceback" not in proc.stderr and "None" not in proc.stdout, shown
    assert Path(tmp_path / "exists.json").read_text() == "mine\n"


def test_a_usage_error_keeps_argparse_text_on_stderr_and_names_the_subcommand_in_json() -> None:
    proc = _gpu_audit("check", "--json")
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: gpu-audit check [-h] [--json]")
    assert proc.stderr.endswith("gpu-audit check: error: the following arguments are required: CAMPAIGN_DIR\n")
    error = json.loads(proc.stdout)["error"]
    assert error["message"] == "gpu-audit check: the following arguments are required: CAMPAIGN_DIR"
    assert "`gpu-audit check --help`" in error["fix"]


def test_without_json_a_failure_prints_nothing_on_stdout(run_cli, tmp_path: Path) -> None:
    r = run_cli("check", str(tmp_path / "missing"))
    assert r.code == 2 and r.out == "" and r.err.startswith("gpu-audit: error: campaign folder")
    r = run_cli("check", "--nonsense", str(EXAMPLE))
    assert r.code == 2 and r.out == "" and "unrecognized arguments: --nonsense" in r.err


def test_an_interrupt_and_a_bug_under_json_are_error_objects(run_cli, monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    import generator.audit.check as check

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(check, "check_campaign", interrupted)
    r = run_cli("check", "--json", str(EXAMPLE))
    assert r.code == 130 and r.err == "gpu-audit: interrupted\n"
    assert json.loads(r.out) == {"error": {"code": "interrupted", "message": "interrupted",
                                           "fix": "run the command again and let it finish"}, "exit_status": 130}

    def buggy(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("planted")

    monkeypatch.setattr(check, "check_campaign", buggy)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    r = run_cli("check", "--json", str(EXAMPLE))
    error = json.loads(r.out)["error"]
    assert r.code == 2 and error["code"] == "internal-error" and "RuntimeError: planted" in error["message"]
    assert "traceback" in error["fix"]


def test_measure_environment_json_with_output_is_one_object(run_cli, tmp_path: Path) -> None:
    r = run_cli("measure", "environment", "--json", "--output", str(tmp_path / "env.json"))
    assert r.code == 0 and "python_version" in json.loads(r.out)  # the JSON alone on stdout
    assert r.err == f"wrote {tmp_path / 'env.json'}\n"


@pytest.mark.parametrize(("exc", "code", "fix"), [
    (CampaignNotFoundError("campaign folder 'x' does not exist; give the folder holding protocol.json"),
     "campaign-not-found", "give the folder holding protocol.json"),  # the message's own instruction
    (UsageError("--max-findings must be at least 1"), "usage",
     "correct the command line (`gpu-audit COMMAND --help` lists its arguments), then run it again"),
    (OutputExistsError("x already exists; nothing is overwritten: choose a new file name"), "output-exists",
     "choose a new file or folder name (nothing is ever overwritten)"),  # no clause starts with an instruction
    (LimitExceededError("a: 9 bytes exceeds the limit of 4 (--max-file-bytes, default 2G); if the input is "
                        "genuine, raise it with --max-file-bytes N"), "limit-exceeded",
     "check that the input is the one meant; if it is genuine, raise the --max-... option the message names"),
    (EnvironmentFaultError("a: permission denied; check the permissions of that file or folder, or choose one "
                           "you may use, then run the command again"), "environment-fault",
     "check the permissions of that file or folder, or choose one you may use, then run the command again"),
    (errors.UnreadableInputError("bad.pdf: it starts as a PDF but cannot be opened as one: it is damaged or cut "
                                 "short; download it again, else ask the provider to send the invoice again"),
     "unreadable-input", "download it again, else ask the provider to send the invoice again"),  # #50: finance's
    (errors.SecretInInputError("k.pem holds a private key (a key belongs outside the inputs; keep it secret, never "
                               "put it in a bundle)"), "secret-in-input", "keep it secret, never put it in a bundle"),
])
def test_the_code_and_fix_of_a_stopping_error(exc: Exception, code: str, fix: str) -> None:
    assert code_and_fix(exc) == (code, fix)


def test_docs_cli_names_every_error_code() -> None:
    from generator.cli import jsonerror

    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    codes = {code for _, code, _ in jsonerror._KINDS} | {jsonerror.INTERNAL, jsonerror.INTERRUPTED}
    assert sorted(c for c in codes if f"`{c}`" not in doc) == []


def test_an_error_carrying_its_own_fix_gives_it() -> None:
    exc = UsageError("the invoice has no XML; give the PDF")
    exc.fix = "ask the provider for the Factur-X PDF"  # type: ignore[attr-defined]
    assert code_and_fix(exc) == ("usage", "ask the provider for the Factur-X PDF")


# ------------------------------------------------------------------------------------ a reader that leaves early


def _reader_leaves(argv: list[str | Path], after_first_line: bool, unbuffered: bool = False
                   ) -> tuple[int, str]:
    """Run gpu-audit with stdout a pipe of 4 KiB (Linux's smallest), read its first line or nothing, close the
    pipe and wait: its exit status and its stderr. An output over 4 KiB plus the line read is still being
    written when the reader leaves, whatever the speed of either side."""
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen([sys.executable, "-m", "generator", *map(str, argv)], stdout=w, stderr=subprocess.PIPE,
                            cwd=REPO, env=_env(unbuffered))
    os.close(w)
    if after_first_line:
        while os.read(r, 1) not in (b"\n", b""):
            pass
    os.close(r)
    _, err = proc.communicate(timeout=HANG_GUARD_S)
    return proc.returncode, err.decode("utf-8", "replace")


def test_head_1_on_json_ends_quietly_with_the_usual_status() -> None:
    # decision.json of the example is over 100 KiB: the reader has left long before it is written
    assert _reader_leaves(["check", "--json", EXAMPLE], after_first_line=True) == (0, "")


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "python-u"])
def test_a_reader_gone_before_any_output_changes_neither_status_nor_stderr(tmp_path: Path, unbuffered: bool) -> None:
    assert _reader_leaves(["check", EXAMPLE], after_first_line=False, unbuffered=unbuffered) == (0, "")
    broken = tmp_path / "campaign"
    broken.mkdir()
    (broken / "protocol.json").write_text("{\n")
    status, err = _reader_leaves(["validate", broken], after_first_line=False, unbuffered=unbuffered)
    assert (status, err) == (1, "")  # findings: 1, as with a reader
    status, err = _reader_leaves(["check", "--json", tmp_path / "missing"], after_first_line=False,
                                 unbuffered=unbuffered)
    assert status == 2 and err.startswith("gpu-audit: error: campaign folder") and err.count("\n") == 1, err
