"""registration.json as typed data (schemas/registration.schema.json): the sealed files, their digests and copies."""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import json
import re
import zlib
from dataclasses import dataclass
from typing import Any

from generator.core.system.strictjson import JsonRefused, loads

REGISTRATION_FILE = "registration.json"
SIGNATURE_FILE = "registration.json.p7s"  # CMS SignedData, detached, DER: over registration.json's exact bytes
TOKEN_FILE = "registration.json.tsr"  # RFC 3161 TimeStampResp, DER: over registration.json.p7s's exact bytes
SEAL_FILES = (REGISTRATION_FILE, SIGNATURE_FILE, TOKEN_FILE)
SCHEMA_VERSION = "1"
# A sealed file up to this size travels inside registration.json (gzip, base64), so that `check` can name what
# changed in it (the IDs removed, the pointer whose value changed); a larger one is sealed by its digest alone.
COPY_LIMIT = 16 * 2**20
MAX_REGISTRATION_BYTES = 64 * 2**20
ROLES = ("protocol", "expected_ids", "reference", "subgroup_ids", "split_ids", "tariffs", "lab_manifest")
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class SealedFile:
    """One file as registered: its path in the campaign, its role, size and SHA-256, and its bytes (gzip, base64)
    when it is at most COPY_LIMIT bytes."""

    path: str
    role: str
    size: int  # registration.json's `bytes`
    sha256: str
    copy_gzip_base64: str | None

    @classmethod
    def of(cls, path: str, role: str, data: bytes) -> SealedFile:
        copy = (base64.b64encode(gzip.compress(data, mtime=0)).decode("ascii") if len(data) <= COPY_LIMIT
                else None)
        return cls(path, role, len(data), hashlib.sha256(data).hexdigest(), copy)

    def registered_bytes(self) -> bytes | None:
        """The file's bytes as registered, when registration.json keeps them and they match the sealed digest."""
        if self.copy_gzip_base64 is None or self.size > COPY_LIMIT:
            return None
        try:
            packed = base64.b64decode(self.copy_gzip_base64, validate=True)
            inflate = zlib.decompressobj(wbits=31)  # gzip; never more than the size sealed, plus one byte
            data = inflate.decompress(packed, self.size + 1)
        except (binascii.Error, zlib.error):
            return None
        if len(data) != self.size or hashlib.sha256(data).hexdigest() != self.sha256:
            return None
        return data


@dataclass(frozen=True)
class Signer:
    """Who sealed: the signing certificate's subject and the SHA-256 of its DER encoding."""

    subject: str
    sha256: str


@dataclass(frozen=True)
class Registration:
    """registration.json: the tool that sealed, the protocol's registered_at as written, the signer, the files."""

    schema_version: str
    tool_name: str
    tool_version: str
    registered_at: str
    signer: Signer
    files: tuple[SealedFile, ...]

    def to_bytes(self) -> bytes:
        """The exact bytes written and signed (UTF-8 JSON, two-space indent, keys in the schema's order)."""
        data = {"schema_version": self.schema_version, "tool": {"name": self.tool_name, "version": self.tool_version},
                "registered_at": self.registered_at,
                "signer": {"subject": self.signer.subject, "sha256": self.signer.sha256},
                "files": [{"path": f.path, "role": f.role, "bytes": f.size, "sha256": f.sha256,
                           "copy_gzip_base64": f.copy_gzip_base64} for f in self.files]}
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    def file(self, path: str) -> SealedFile | None:
        return next((f for f in self.files if f.path == path), None)

    @classmethod
    def from_bytes(cls, raw: bytes, max_depth: int = 16) -> Registration:
        """registration.json read strictly; ValueError (JsonRefused among them) says what is wrong."""
        data = _object(loads(raw, max_depth), "registration.json")
        tool, signer = _object(data.get("tool"), "/tool"), _object(data.get("signer"), "/signer")
        files = data.get("files")
        if not isinstance(files, list) or not files:
            raise JsonRefused("/files: a list of the sealed files is required")
        if data.get("schema_version") != SCHEMA_VERSION:
            raise JsonRefused(f"/schema_version: {SCHEMA_VERSION!r} is the only version this tool reads")
        sealed = tuple(_sealed_file(_object(f, f"/files/{i}"), i) for i, f in enumerate(files))
        if len({f.path for f in sealed}) != len(sealed):
            raise JsonRefused("/files: a path is sealed twice")
        return cls(SCHEMA_VERSION, _text(tool, "name", "/tool"), _text(tool, "version", "/tool"),
                   _text(data, "registered_at", ""), Signer(_text(signer, "subject", "/signer"),
                                                            _digest(signer, "/signer")), sealed)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise JsonRefused(f"{where}: an object is required")
    return value


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise JsonRefused(f"{where}/{key}: a non-empty string is required")
    return value


def _digest(data: dict[str, Any], where: str) -> str:
    value = _text(data, "sha256", where)
    if not _HEX64.fullmatch(value):
        raise JsonRefused(f"{where}/sha256: 64 lower-case hexadecimal digits are required")
    return value


def _sealed_file(data: dict[str, Any], i: int) -> SealedFile:
    where = f"/files/{i}"
    size, copy, role = data.get("bytes"), data.get("copy_gzip_base64"), _text(data, "role", where)
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise JsonRefused(f"{where}/bytes: a size in bytes is required")
    if copy is not None and not isinstance(copy, str):
        raise JsonRefused(f"{where}/copy_gzip_base64: a base64 string or null")
    if role not in ROLES:
        raise JsonRefused(f"{where}/role: one of {', '.join(ROLES)}")
    return SealedFile(_text(data, "path", where), role, size, _digest(data, where), copy)
