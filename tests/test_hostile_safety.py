"""Nothing lost, nothing fetched: inputs are only read by every command, outputs appear whole or not at all,
two builds racing for one name cannot both write it, no path from an input leads outside the campaign folder,
no command opens a network connection, and the CSV the tool writes neutralises spreadsheet formulas."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import GRID, REPO, set_cell
from fuzz import harness
from fuzz.mutators import SECRET, plant_outside

from generator.bundle.sign import signing


@dataclass(frozen=True)
class Built:
    """One build and what it was made from."""

    home: Path
    campaign: Path
    out: Path
    key: Path
    cert: Path
    stray: Path  # a private key left inside the campaign folder
    outcome: harness.Outcome
    problems: list[str]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """One signed build of a campaign copy that holds stray private keys, watched byte for byte and mtime."""
    home = tmp_path_factory.mktemp("safety")
    campaign = harness.fresh_campaign(home)
    signing.keygen(campaign, "Stray Key In Campaign")  # signer-key.pem and signer.pem inside the folder
    stray = signing.keygen(campaign / "keys", "Another Stray")[0]
    key, cert = signing.keygen(home / "signing", "Safety Org")
    out = home / "bundle"
    o, problems = harness.check_command(["build", campaign, "-o", out, "--key", key, "--cert", cert, "--quiet"],
                                        [campaign, home / "signing"])
    return Built(home=home, campaign=campaign, out=out, key=key, cert=cert, stray=stray, outcome=o, problems=problems)


def test_build_only_reads_its_inputs(built: Built) -> None:
    o = built.outcome
    assert not built.problems, harness.describe(o, ["build"], built.problems)
    assert o.code == 0, o.out + o.err


def test_a_private_key_in_the_campaign_folder_never_enters_the_bundle(built: Built) -> None:
    out = built.out
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files
    for p in files:
        assert b"PRIVATE KEY" not in p.read_bytes(), p
    assert [p.relative_to(out).as_posix() for p in files if p.suffix == ".pem"] == ["signer.pem"]
    o = built.outcome
    assert "PRIVATE KEY" not in o.out + o.err
    for key in (built.stray, built.key):  # neither the stray key nor the signing key is shown
        body = [ln for ln in key.read_text().splitlines() if "-----" not in ln]
        assert not any(ln in o.out + o.err for ln in body)


def test_the_built_bundle_verifies(built: Built) -> None:
    o, problems = harness.check_command(["verify", built.out, "--trust", built.cert], [built.out])
    assert not problems and o.code == 0, harness.describe(o, ["verify"], problems)


def test_validate_check_render_and_verify_only_read_their_inputs(built: Built, tmp_path: Path) -> None:
    campaign = built.campaign
    commands: list[list[str | Path]] = [["validate", campaign], ["validate", "--json", campaign], ["check", campaign],
                                        ["check", "--out", tmp_path / "decision.json", campaign]]
    for argv in commands:
        o, problems = harness.check_command(argv, [campaign])
        assert not problems and o.code == 0, harness.describe(o, [], problems)
    decision = tmp_path / "decision.json"
    o, problems = harness.check_command(["render", decision, "-o", tmp_path / "note", "--campaign", campaign],
                                        [campaign, decision])
    assert not problems and o.code == 0, harness.describe(o, [], problems)
    assert sorted(p.name for p in (tmp_path / "note").iterdir()) == ["decision-note.html", "decision-note.pdf"]
    z = tmp_path / "bundle.zip"
    subprocess.run([sys.executable, "-m", "zipfile", "-c", str(z), str(built.out)], check=True)
    for target in (built.out, z):
        o, problems = harness.check_command(["verify", target, "--trust", built.cert], [target])
        assert not problems and o.code == 0, harness.describe(o, [], problems)


def test_check_out_refuses_an_existing_file_and_leaves_it(run_cli, campaign: Path, tmp_path: Path) -> None:
    existing = tmp_path / "decision.json"
    existing.write_text("mine")
    r = run_cli("check", "--out", str(existing), str(campaign))
    assert r.code == 2 and "already exists" in r.err
    assert existing.read_text() == "mine"


# ------------------------------------------------------------------------------------------ racing builds


def test_two_builds_racing_for_one_target_one_wins_the_other_refuses(built: Built, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    cmd = [sys.executable, "-m", "generator", "build", str(harness.EXAMPLE), "-o", str(out),
           "--key", str(built.key), "--cert", str(built.cert), "--quiet"]
    procs = [subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    codes = sorted(r[0] for r in results)
    assert codes == [0, 2], results
    loser = next(r for r in results if r[0] == 2)
    assert re.fullmatch(rf"gpu-audit: error: (another build is writing {re.escape(str(out))}; nothing is overwritten"
                        rf"|{re.escape(str(out))} already exists; choose a new bundle path "
                        rf"\(nothing is overwritten\))\n",
                        loser[2]), loser
    assert "Traceback" not in loser[2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]  # no temporary folder, no lock left
    v = harness.run_main(["verify", out, "--trust", built.cert])
    assert v.code == 0, v.out


def test_a_build_target_that_appears_during_the_build_is_not_replaced(built: Built, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.bundle.build import build as bundle_mod

    out = tmp_path / "bundle"
    real = bundle_mod._write_tag_files

    def meanwhile(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        out.mkdir()
        (out / "theirs.txt").write_text("someone else's")

    monkeypatch.setattr(bundle_mod, "_write_tag_files", meanwhile)
    o = harness.run_main(["build", harness.EXAMPLE, "-o", out, "--unsigned", "--quiet"])
    assert o.code == 2 and not o.crash, o.crash or o.err
    assert o.err == f"gpu-audit: error: {out} appeared during the build; nothing is overwritten\n"
    assert sorted(p.name for p in out.iterdir()) == ["theirs.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]


def test_an_unwritable_or_overlong_target_is_a_usage_error(tmp_path: Path) -> None:
    o = harness.run_main(["build", harness.EXAMPLE, "-o", tmp_path / ("x" * 250), "--unsigned"])
    assert o.code == 2 and not o.crash, o.crash
    assert "cannot create the build lock" in o.err


# ------------------------------------------------------------------------------------------ nothing outside


@pytest.mark.parametrize("key", ["expected_ids", "reference", "raw_results", "tariffs"])
@pytest.mark.parametrize("target", ["../outside/secret.csv", "/etc/passwd", "link-out.csv"])
def test_protocol_files_pointing_outside_are_refused(run_cli, campaign: Path, key: str, target: str) -> None:
    plant_outside(campaign.parent)
    (campaign / "link-out.csv").symlink_to(campaign.parent / "outside" / "secret.csv")
    proto = json.loads((campaign / "protocol.json").read_text())
    proto["files"][key] = target
    (campaign / "protocol.json").write_text(json.dumps(proto))
    for cmd in ("validate", "check"):
        r = run_cli(cmd, "--json", str(campaign)) if cmd == "validate" else run_cli(cmd, str(campaign))
        assert r.code == 1, r.err
        if target.startswith("/"):  # refused by the schema already (relativePath)
            assert "schema-violation" in r.out and "/files/" in r.out and "/etc/passwd" in r.out
        else:
            assert f"path {target!r} leaves the campaign folder" in r.out
        assert SECRET not in r.out + r.err and "root:" not in r.out + r.err


def test_measurement_path_through_a_link_is_refused(run_cli, campaign: Path) -> None:
    plant_outside(campaign.parent)
    m = campaign / "measurements" / "b200-batch-b4.json"
    m.unlink()
    m.symlink_to(campaign.parent / "outside" / "secret.json")
    r = run_cli("validate", "--json", str(campaign))
    assert r.code == 1
    assert "measurement path 'measurements/b200-batch-b4.json' leaves the campaign folder" in r.out
    assert SECRET not in r.out


def test_grid_linked_to_etc_passwd_is_refused_and_not_shown(run_cli, campaign: Path) -> None:
    (campaign / GRID).unlink()
    (campaign / GRID).symlink_to("/etc/passwd")
    for cmd in ("validate", "check"):
        r = run_cli(cmd, str(campaign))
        assert r.code == 1
        assert ("raw results path 'resultats-bruts.csv' leaves the campaign folder [error path-outside-campaign]"
                in r.out)
        assert "root:" not in r.out + r.err


def test_a_link_inside_the_folder_is_followed(run_cli, campaign: Path) -> None:
    (campaign / "data").mkdir()
    (campaign / GRID).rename(campaign / "data" / GRID)
    (campaign / GRID).symlink_to(Path("data") / GRID)
    assert run_cli("validate", str(campaign)).code == 0


def test_a_private_key_named_as_an_input_is_refused_and_not_shown(run_cli, campaign: Path, tmp_path: Path) -> None:
    key, _ = signing.keygen(campaign, "Named Key")
    proto = json.loads((campaign / "protocol.json").read_text())
    proto["files"]["expected_ids"] = "signer-key.pem"
    (campaign / "protocol.json").write_text(json.dumps(proto))
    secret_lines = [ln for ln in key.read_text().splitlines() if "-----" not in ln]
    for argv in (["validate", str(campaign)], ["check", str(campaign)],
                 ["build", str(campaign), "-o", str(tmp_path / "b"), "--unsigned"]):
        r = run_cli(*argv)
        assert r.code == 2
        assert r.err == ("gpu-audit: error: signer-key.pem: holds a PEM private key; a signing key is never a campaign "
                         "input (it is not read, printed nor copied into a bundle): move it out of the campaign folder "
                         "and name the right file in protocol.json\n")
        assert not any(line in r.out + r.err for line in secret_lines)
    assert not (tmp_path / "b").exists()


# ------------------------------------------------------------------------------------------ nothing fetched


@pytest.mark.filterwarnings("ignore:A test tried to use socket.socket")
def test_sockets_are_disabled_in_the_test_run() -> None:
    """pytest-socket (addopts --disable-socket --allow-unix-socket): an Internet socket cannot even be made."""
    with pytest.raises(Exception) as info:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("127.0.0.1", 9))
    assert type(info.value).__name__ == "SocketBlockedError"


def test_no_command_opens_a_connection_even_when_inputs_ask(tmp_path: Path) -> None:
    """URLs in every text field: the audit hook sees every attempt, even one the code would swallow."""
    campaign = harness.fresh_campaign(tmp_path)
    proto = json.loads((campaign / "protocol.json").read_text())
    proto["title"] = '<img src="http://192.0.2.1/pixel.png"><link rel=stylesheet href="https://192.0.2.1/x.css">'
    proto["question"] = "<iframe src='file:///etc/passwd'></iframe> @import url(http://192.0.2.1/y.css);"
    (campaign / "protocol.json").write_text(json.dumps(proto))
    set_cell(campaign, 1, "notes", '<img src="http://192.0.2.1/a.png"> <script src="http://192.0.2.1/s.js"></script>')
    out = tmp_path / "bundle"
    commands: list[list[str | Path]] = [["validate", campaign], ["check", "--out", tmp_path / "d.json", campaign],
                                        ["build", campaign, "-o", out, "--unsigned", "--quiet"],
                                        ["verify", out, "--allow-unsigned"]]
    for argv in commands:
        o, problems = harness.check_command(argv, [campaign])
        assert not problems, harness.describe(o, [], problems)
        assert o.network == []
    assert "192.0.2.1" in (out / "data" / "decision-note.html").read_text()  # shown as text, never fetched


# ------------------------------------------------------------------------------------------ formulas in CSV


def test_the_tool_writes_csv_in_one_module_only() -> None:
    """A tripwire: any new CSV writer must neutralise formulas too (the bundle's inputs are byte copies)."""
    writers = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "generator").rglob("*.py")
                     if re.search(r"csv\.(writer|DictWriter)\(", p.read_text(encoding="utf-8")))
    assert writers in ([], ["generator/gpu/campaign/campaign_rows.py"])  # campaign run's write_csv, which neutralises


def test_campaign_run_neutralises_formulas_in_text_cells(tmp_path: Path) -> None:
    campaign_run = pytest.importorskip("generator.gpu.campaign.campaign_run")
    if not hasattr(campaign_run, "write_csv"):
        pytest.skip("campaign_run has no write_csv")
    path = tmp_path / "grid.csv"
    hostile = ["=HYPERLINK(\"http://example.invalid\",\"x\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
               "\t=1+1", "\r=1+1"]
    campaign_run.write_csv(path, ["experiment_id", "notes"], [["e", text] for text in hostile])
    import csv

    cells = [row[1] for row in list(csv.reader(path.open(encoding="utf-8", newline="")))[1:]]
    assert cells == ["'" + text for text in hostile]  # a leading apostrophe: shown as text, never run
    campaign_run.write_csv(tmp_path / "numbers.csv", ["a", "b"], [[-1, -2.5], ["-", "ok"]])
    assert (tmp_path / "numbers.csv").read_text(encoding="utf-8").splitlines()[1:] == ["-1,-2.5", "'-,ok"]


def _ec_key_pem() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


@pytest.mark.parametrize("offset", [0, 900, 985, 990, 1000, 1010, 2500, "end-line-split"])
def test_the_bundle_copier_finds_a_key_wherever_the_blocks_split_it(tmp_path: Path, offset: int | str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.bundle.build import copying
    from generator.core.errors import SecretInInputError

    monkeypatch.setattr(copying, "BLOCK", 1000)  # the key (about 240 bytes) straddles a block boundary or not
    key = _ec_key_pem()
    if offset == "end-line-split":  # the block boundary falls inside "PRIVATE KEY-----" of the END line
        offset = 1000 - len(key) + 9
    source = tmp_path / "in.csv"
    source.write_bytes(b"x" * int(offset) + key + b"y" * 3000)
    with pytest.raises(SecretInInputError, match="in.csv: holds a PEM private key"):
        copying.copy_hashing(source, tmp_path / "copy.csv", "in.csv")


def test_a_key_is_found_in_any_text_whatever_bytes_surround_it() -> None:
    """The key search first looks for one byte of the mark ("V", at memchr speed): a key whose base64 body and
    surroundings hold no other letter of the mark is still found, and the words alone are not a key."""
    from generator.core.system.pemkeys import holds_private_key

    pem = b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
    for around in (b"", b"id,label\ndoc-1,admin\n" * 1000):
        assert holds_private_key(around + pem + around)
        assert holds_private_key(bytearray(around + pem))
    assert not holds_private_key(b"doc-1,the words PRIVATE KEY----- alone\n")
    assert not holds_private_key(b"id,label\n" * 1000)


def test_the_bundle_copier_hashes_the_copy_and_lets_key_words_alone(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from generator.bundle.build import copying

    monkeypatch.setattr(copying, "BLOCK", 1000)
    data = (b"id,label\n" + b"doc-1,the words PRIVATE KEY----- alone are no key\n" * 100)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "in.csv").write_bytes(data)
    sums = copying.copy_all([(str(tmp_path / "a" / "in.csv"), str(tmp_path / "b" / "c" / "in.csv"), "in.csv")])
    assert (tmp_path / "b" / "c" / "in.csv").read_bytes() == data
    assert sums == {"in.csv": {"sha256": hashlib.sha256(data).hexdigest()}}


def test_the_checks_copies_are_made_once_per_name_and_refuse_a_pipe_without_waiting(tmp_path: Path) -> None:
    """`build` has the check's workers copy each prediction file into the bundle and read the copy: a file two
    grid rows name is copied once, and a pipe swapped in for a file is refused, never waited on."""
    import os

    from generator.bundle.build.copying import InputCopies
    from generator.core.errors import UnreadableInputError

    copies = InputCopies(tmp_path / "inputs")
    (tmp_path / "p.csv").write_bytes(b"id,label\nd1,a\n")
    assert copies(tmp_path / "p.csv", "a/p.csv") == tmp_path / "inputs" / "a" / "p.csv"
    assert copies(tmp_path / "p.csv", "a/p.csv") == tmp_path / "inputs" / "a" / "p.csv"  # no second copy
    assert (tmp_path / "inputs" / "a" / "p.csv").read_bytes() == b"id,label\nd1,a\n" and copies.names == {"a/p.csv"}
    os.mkfifo(tmp_path / "f.csv")
    with pytest.raises(UnreadableInputError, match="f.csv: is not a regular file"):
        copies(tmp_path / "f.csv", "f.csv")
    assert copies.names == {"a/p.csv"}


def test_the_copy_worker_process_reports_a_key_that_appeared_after_validation(tmp_path: Path) -> None:
    from generator.bundle.build.copying import Copier
    from generator.core.errors import SecretInInputError

    (tmp_path / "ok.csv").write_bytes(b"id,label\nd1,a\n")
    (tmp_path / "late.csv").write_bytes(b"id,label\n" + _ec_key_pem())
    with Copier() as copier:
        copier.start([(str(tmp_path / "ok.csv"), str(tmp_path / "out" / "ok.csv"), "ok.csv"),
                      (str(tmp_path / "late.csv"), str(tmp_path / "out" / "late.csv"), "late.csv")])
        with pytest.raises(SecretInInputError, match="late.csv: holds a PEM private key"):
            copier.result()
