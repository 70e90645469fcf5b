"""MANIFEST.json as `verify` reads it: strict JSON, then the shape of schemas/manifest.schema.json.

The shape is checked by hand, since verify does not import jsonschema; tests/test_bundle_format.py validates
built manifests against the schema itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from generator.bundle.bundlelayout import MANIFEST, PAYLOAD_MANIFESTS_OF, signed_tag_files
from generator.bundle.verdict import Problem, Report
from generator.core.limits import Limits
from generator.core.system.strictjson import JsonRefused, loads

KEYS = {"schema_version", "bundle_id", "tool", "created", "signed", "signer", "self_checksum", "bag_info",
        "tag_files", "files"}
_ID = re.compile(r"GA-[0-9A-F]{16}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ManifestDoc:
    """The signed list: every payload and tag file with its size and SHA-256, the bag-info fields, the signer."""

    raw: bytes
    version: str  # "3", or "2" (a bundle with a SHA-512 payload manifest as well)
    bundle_id: str
    created: str
    signed: bool
    signer_sha256: str | None
    bag_info: list[tuple[str, str]]
    payload: dict[str, tuple[int, str]]
    tags: dict[str, tuple[int, str]]


def _files(value: Any, what: str) -> dict[str, tuple[int, str]]:
    if not isinstance(value, list):
        raise JsonRefused(f"{what} is not a list")
    out: dict[str, tuple[int, str]] = {}
    for entry in value:
        if (not isinstance(entry, dict) or set(entry) != {"path", "bytes", "sha256"}
                or not isinstance(entry["path"], str) or type(entry["bytes"]) is not int or entry["bytes"] < 0
                or not isinstance(entry["sha256"], str) or not _HEX64.fullmatch(entry["sha256"])):
            raise JsonRefused(f"{what}: an entry is not {{path, bytes, sha256}}")
        path = entry["path"]
        if path in out or "\\" in path or path.startswith("/") or ".." in path.split("/") or not path:
            raise JsonRefused(f"{what}: the path {path[:80]!r} is repeated or not a plain relative path")
        out[path] = (entry["bytes"], entry["sha256"])
    return out


def _shape(m: Any, raw: bytes) -> ManifestDoc:
    if not isinstance(m, dict):
        raise JsonRefused("not a JSON object")
    version = m.get("schema_version")
    if not isinstance(version, str) or version not in PAYLOAD_MANIFESTS_OF:
        raise JsonRefused(f"schema_version is {version!r}, not one of {sorted(PAYLOAD_MANIFESTS_OF)} (a bundle made "
                          "before its tag files were signed, or by another program)")
    if set(m) != KEYS:
        raise JsonRefused(f"keys {sorted(set(m) ^ KEYS)} differ from the format's")
    if not isinstance(m["bundle_id"], str) or not _ID.fullmatch(m["bundle_id"]):
        raise JsonRefused("bundle_id is not GA- and 16 hex digits")
    tool = m["tool"]
    if not isinstance(tool, dict) or set(tool) != {"name", "version"} or tool["name"] != "gpu-audit" \
            or not isinstance(tool["version"], str):
        raise JsonRefused("tool is not {name: gpu-audit, version}")
    if not (isinstance(m["created"], str) and isinstance(m["self_checksum"], str) and isinstance(m["signed"], bool)):
        raise JsonRefused("created, self_checksum or signed has the wrong type")
    signer = m["signer"]
    if m["signed"]:
        if (not isinstance(signer, dict) or set(signer) != {"subject", "certificate_sha256"}
                or not isinstance(signer["subject"], str) or not isinstance(signer["certificate_sha256"], str)
                or not _HEX64.fullmatch(signer["certificate_sha256"])):
            raise JsonRefused("signed is true but signer is not {subject, certificate_sha256}")
    elif signer is not None:
        raise JsonRefused("signed is false but a signer is named")
    info = m["bag_info"]
    if not isinstance(info, list) or not all(isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f)
                                             for f in info):
        raise JsonRefused("bag_info is not a list of [label, value] pairs")
    payload, tags = _files(m["files"], "files"), _files(m["tag_files"], "tag_files")
    if any(not p.startswith("data/") for p in payload):
        raise JsonRefused("files lists a path outside data/")
    if sorted(tags) != sorted(signed_tag_files(version)):
        raise JsonRefused(f"tag_files lists {sorted(tags)}, not the tag files gpu-audit writes in format {version} "
                          f"{sorted(signed_tag_files(version))}")
    return ManifestDoc(raw=raw, version=version, bundle_id=m["bundle_id"], created=m["created"], signed=m["signed"],
                       signer_sha256=signer["certificate_sha256"] if signer else None,
                       bag_info=[(a, b) for a, b in info], payload=payload, tags=tags)


def read_manifest(raw: bytes | None, present: bool, limits: Limits, report: Report) -> ManifestDoc | None:
    """MANIFEST.json parsed and its shape checked, or None with the problem in `report`."""
    if raw is None:
        if not present:
            report.problems.append(Problem("missing-file", MANIFEST, "MANIFEST.json is missing"))
        return None
    try:
        return _shape(loads(raw, limits.max_json_depth), raw)
    except JsonRefused as exc:
        report.problems.append(Problem("bad-manifest", MANIFEST, str(exc)))
        return None
