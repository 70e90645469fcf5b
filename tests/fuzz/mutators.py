"""Mutators: each takes a `random.Random` and a folder (a copy of a campaign or of a bundle) and damages it.

Every mutator returns a short description of what it did (for the failure report). They are driven by a
`random.Random` only, so hypothesis (`st.randoms()`, derandomized in CI) and the long run (`random.Random(seed)`,
reproducible from its seed) share them.

Files outside the folder: `plant_outside(parent)` writes, next to the campaign, a folder `outside/` whose files
hold SECRET; symbolic links and protocol paths made by the mutators point there, and the harness checks that
SECRET never shows in any output (nothing outside the campaign folder is read).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

GRID = "resultats-bruts.csv"
SECRET = "SECRET-OUTSIDE-7f3a"
OUTSIDE = "outside"

FORMULAS = ["=1+1", "=HYPERLINK(\"http://example.invalid/x\",\"click\")", "+cmd|' /C calc'!A0", "-2+3",
            "@SUM(A1:A9)", "=WEBSERVICE(\"http://example.invalid\")", "\t=1+1", "\r=1", "=cmd|'/c calc'!'A1'"]
HOSTILE_TEXT = [
    "", " ", "  ", "0", "-0", "00", "01", "-1", "-999999999999", "1e999", "-1e999", "1e308", "1.7976931348623157e308",
    "5e-324", "1e-400", "NaN", "nan", "-nan", "Infinity", "-Infinity", "inf", "+inf", "1,5", "1.5.5", "0x10", "1_000",
    "1 000", "１２", "٣", "Ⅻ", "true", "TRUE", "True", "false", "null", "None", "yes", "1.0", "+1", ".5", "5.",
    "'", '"', '""', '"a,b"', "a,b", "a\nb", "a\r\nb", "a\rb", "\x00", "a\x00b", "\ufeff", "\ufeffx", "\u202e",
    "\u200b", "😀", "é", "e\u0301", "\x7f", "\x1b[31m", "\x0c", "\x0b", "9" * 50, "9" * 101, "9" * 400, "9" * 4299,
    "1" * 4301, "x" * 10000, "x" * 10001, "2026-02-30", "2026-13-01", "9999-12-31T23:59", "0000-01-01T00:00",
    "0001-01-01T00:00", "10000-01-01", "-1-01-01", "2026-10-05T25:61", "2026-10-05T09:00:00+99:00",
    "../../etc/passwd", "/etc/passwd", "C:\\x", "..", ".", "%0A", "%2e%2e/x", "{experiment_id}", "${HOME}", "$(id)",
    "outcome=oom", "outcome=oom; completed=0", "outcome=failed; completed=12", "outcome=aborted", "outcome=bogus",
    "completed=99999999999999999999999999", "outcome=oom; completed=-1", "outcome=OOM",
    "<script>alert(1)</script>", "<img src=\"file:///etc/passwd\">", "{{ 7*7 }}", "{% raw %}", "&amp;", "]]>",
] + FORMULAS
COLUMN_EDGES: dict[str, list[str]] = {
    "experiment_id": ["", "unknown-exp", "../x", "a/b", "x" * 65, ".", "..", "rtx4090-batch", "b200-batch"],
    "variant_id": ["", "b16", "../../../../etc", "a/b", "b1/../b4", "x" * 65, "b1", "b4", "b8"],
    "phase": ["", "Cold", "WARM", "hot", "cold", "warm"],
    "run_index": ["", "0", "-1", "1.0", "01", "100000", "100001", "99999", "6", "2", str(2**63)],
    "gpu_count": ["0", "1025", "-1", "2", "1024", ""],
    "batch": ["0", "-4", "4", "8", "1", "", str(2**64)],
    "lots": ["0", "-1", "2", str(10**30), "9" * 100, ""],
    "duration_days": ["3", "5", "30", "0", "", "7.0"],
    "elapsed_seconds": ["", "0", "-1", "1e300", "5e-324", "1e308", "0.0", "99999999", "1e-9"],
    "quality_value": ["", "1.5", "-0", "-0.1", "1", "0", "5e-324", "0.5"],
    "quality_threshold": ["0.5", "2", "-1", "", "0.8000000000000001"],
    "quality_tolerance": ["0.5", "2", "-1", "", "0.03"],
    "quality_metric": ["", "f1", "accuracy", "weighted_f1", "MACRO_F1"],
    "peak_allocated_bytes": ["-1", "0", str(2**63), "9" * 100, "", "1.5"],
    "peak_reserved_bytes": ["-1", "0", str(2**63), "9" * 100, "", "1"],
    "baseline_allocated_bytes": ["-1", "0", str(2**64), "", str(10**99)],
    "baseline_reserved_bytes": ["-1", "0", str(2**64), ""],
    "package_total_usd_minor": ["-1", "0", "1", str(10**50), "110.00", ""],
    "accepted_unique_corpora": ["-1", "0", "100", ""],
    "expected_ids": ["0", "-1", "1001", "999", ""],
    "observed_ids": ["0", "-1", "1001", "999", ""],
    "ids_match": ["yes", "", "TRUE", "1", "false"],
    "format_valid": ["no", "", "false"],
    "corpus_accepted": ["", "false", "true", "maybe"],
    "notes": ["outcome=oom; completed=0", "outcome=failed; completed=500", "outcome=aborted; completed=0",
              "outcome=bogus", "x" * 10001] + FORMULAS,
    "price_per_lot_usd_minor": ["0", "-1", "110.00", str(10**99), "9" * 101, "1e5", ""],
    "gpus_per_lot": ["0", "65", "-1", "2"],
    "snapshot_date": ["2026-02-30", "", "9999-12-31", "0000-00-00", "tomorrow"],
    "price_status": ["", "published", "illustrative", "estimated"],
    "gpu": ["", "RTX-4090", "b200", "rtx-4090", "../x", "h200"],
    "id": ["", " x", "x ", "2048", "7kaa", "=1+1", "a,b", "x" * 501],
    "label": ["", "kernel", "games", "GAMES", " games", "x" * 201],
}
SPECIAL_BYTES = [b"\x00", b"\xff", b"\xfe", b"\xef\xbb\xbf", b'"', b"\r", b"\n", b"\r\n", b",", b";", b"\t", b"\xc3",
                 b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xe2\x80", b"\\", b"{", b"[", b"}", b"]",
                 b"\x1a", b"\x85", b"\xe2\x80\xa8", b"%", b"'", b"=", b"-"]

Mutation = Callable[[random.Random, Path], str]


# ----------------------------------------------------------------------------------------------- values


def random_text(rng: random.Random, max_len: int = 40) -> str:
    """Arbitrary text (no lone surrogates: a file is written as UTF-8), biased to characters that matter."""
    pool = ",\"'\n\r\t;=+-@ \x00\x7f\ufeffé😀\u202e0123456789.eE-+abcxyz/\\%{}[]<>&"
    n = rng.randint(0, max_len)
    out = []
    for _ in range(n):
        if rng.random() < 0.8:
            out.append(rng.choice(pool))
        else:
            cp = rng.randint(1, 0x10FFFF)
            out.append(chr(cp) if not 0xD800 <= cp <= 0xDFFF else "?")
    return "".join(out)


def hostile_cell(rng: random.Random, column: str | None = None) -> str:
    if column in COLUMN_EDGES and rng.random() < 0.5:
        return rng.choice(COLUMN_EDGES[column])
    r = rng.random()
    if r < 0.55:
        return rng.choice(HOSTILE_TEXT)
    if r < 0.7:
        return str(rng.randint(-2**70, 2**70))
    if r < 0.8:
        return rng.choice([repr(rng.uniform(-1e6, 1e6)), f"{rng.random():.3f}", f"1e{rng.randint(-400, 400)}",
                           f"-{rng.randint(0, 10**6)}", f"{rng.randint(0, 9)}.{rng.randint(0, 10**30)}"])
    if r < 0.9:
        return random_text(rng)
    return rng.choice(FORMULAS) + random_text(rng, 8)


class Raw:
    """A JSON fragment written verbatim (deep nesting, lone surrogate escapes, NaN, huge numbers)."""

    def __init__(self, text: str) -> None:
        self.text = text


def hostile_json_value(rng: random.Random) -> Any:
    r = rng.random()
    choices: list[Any] = [
        None, True, False, 0, -1, 1, 2, 1.5, -0.0, 10**20, 2**63, 2**64 + 1, 1e308, -1e308, 5e-324, "", " ",
        "x" * 10000, "\u0000", "a\u0000b", "😀", "\ufeff", "../../etc/passwd", "/etc/passwd",
        f"../{OUTSIDE}/secret.csv",
        f"../{OUTSIDE}/secret.json", "2026-02-30T25:00", "9999-12-31T23:59", "0001-01-01T00:00", "2026-03-29T02:30",
        "2026-10-25T02:30", "UTC", "Etc/GMT+14", "../../../../etc/passwd", "Europe/Nowhere", "Europe/Paris\u0000",
        "/usr/share/zoneinfo/UTC", "localtime", [], {}, [None], {"": None}, ["a", "a"], [1, 2, 3],
        Raw("1" * 400), Raw("1" * 5000), Raw("-" + "9" * 310), Raw("1e999"), Raw("-1e999"), Raw("NaN"),
        Raw("Infinity"), Raw('"\\ud800"'), Raw('"\\udfff\\ud800"'), Raw('"a\\u0000"'), Raw("1E400"), Raw("0.0e-99999"),
        Raw("[" * 63 + "]" * 63), Raw("[" * 64 + "]" * 64), Raw("[" * 65 + "]" * 65), Raw("[" * 3000 + "]" * 3000),
        Raw('{"a":' * 200 + "1" + "}" * 200), Raw("[" * 100000 + "]" * 100000),
    ]
    if r < 0.75:
        return rng.choice(choices)
    if r < 0.85:
        return rng.randint(-2**80, 2**80)
    if r < 0.95:
        return random_text(rng)
    return [hostile_json_value(rng) for _ in range(rng.randint(0, 3))]


def dumps(value: Any, rng: random.Random | None = None) -> str:
    """json.dumps with Raw fragments spliced in."""
    raws: list[str] = []

    def swap(v: Any) -> Any:
        if isinstance(v, Raw):
            raws.append(v.text)
            return f"__RAW_{len(raws) - 1}__"
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        if isinstance(v, list):
            return [swap(x) for x in v]
        return v

    indent = None if rng is None or rng.random() < 0.5 else 2
    text = json.dumps(swap(value), indent=indent, ensure_ascii=rng is None or rng.random() < 0.5)
    for i, raw in enumerate(raws):
        text = text.replace(f'"__RAW_{i}__"', raw, 1)
    return text


# ----------------------------------------------------------------------------------------------- bytes


def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One byte-level change: flip, insert, delete, truncate, special bytes, separators, line ends, encodings."""
    n = len(data)
    pos = rng.randint(0, n) if n else 0
    op = rng.randrange(14)
    if op == 0 and n:
        i = rng.randrange(n)
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:], f"flip bit at {i}"
    if op == 1:
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return data[:pos] + junk + data[pos:], f"insert {junk!r} at {pos}"
    if op == 2 and n:
        k = rng.randint(1, min(64, n))
        return data[:pos] + data[pos + k:], f"delete {k} bytes at {pos}"
    if op == 3:
        return data[:pos], f"truncate at {pos}"
    if op == 4:
        sp = rng.choice(SPECIAL_BYTES) * rng.choice([1, 1, 2, 3, 100])
        return data[:pos] + sp + data[pos:], f"insert {sp[:12]!r}x at {pos}"
    if op == 5:
        sep = rng.choice([b";", b"\t", b"|", b", ", b",,"])
        return data.replace(b",", sep), f"separator , -> {sep!r}"
    if op == 6:
        how = rng.choice([(b"\n", b"\r\n"), (b"\n", b"\r"), (b"\r\n", b"\n"), (b"\n", b"\n\n"), (b"\n", b"\x85")])
        return data.replace(*how), f"line ends {how[0]!r} -> {how[1]!r}"
    if op == 7:
        return rng.choice([b"\xef\xbb\xbf" * 2, b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]) + data, "BOM(s) first"
    if op == 8:
        try:
            return data.decode("utf-8").encode(rng.choice(["utf-16", "utf-16-be", "latin-1", "cp1252", "utf-32"]),
                                               errors="replace"), "re-encoded"
        except UnicodeDecodeError:
            return data[::-1], "reversed"
    if op == 9:
        return rng.choice([b"", b" ", b"\n", b"\r\n\r\n", b"\x00" * 10, b"\xef\xbb\xbf"]), "emptied"
    if op == 10:
        long = rng.choice([b"x", b"9", b",", b'"', b"a,"]) * rng.choice([1000, 131073, 300000])
        return data[:pos] + long + data[pos:], f"long run of {long[:1]!r} ({len(long)}) at {pos}"
    if op == 11 and n:
        a = rng.randrange(n)
        chunk = data[a:a + rng.randint(1, 200)]
        return data[:pos] + chunk * rng.randint(1, 5) + data[pos:], f"duplicate chunk at {pos}"
    if op == 12:
        return data.replace(b'"', b""), "quotes removed" if b'"' in data else "no-op quotes"
    return data + rng.choice([b'"', b'\n"', b"\x00", b",\n", b"\n\n\n", b"\\"]), "tail appended"


# ----------------------------------------------------------------------------------------------- CSV


def _rows(text: str) -> list[list[str]] | None:
    try:
        return list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        return None


def _write_rows(rows: list[list[str]], rng: random.Random) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator=rng.choice(["\n", "\n", "\r\n"]),
               quoting=rng.choice([csv.QUOTE_MINIMAL, csv.QUOTE_MINIMAL, csv.QUOTE_ALL])).writerows(rows)
    return buf.getvalue()


def mutate_csv_text(rng: random.Random, text: str) -> tuple[str | bytes, str]:
    """One row- or cell-level change of a CSV file (falls back to bytes when it does not parse)."""
    rows = _rows(text)
    if not rows or rng.random() < 0.15:
        data, what = mutate_bytes(rng, text.encode("utf-8"))
        return data, what
    header = rows[0]
    op = rng.randrange(15)
    body = len(rows) - 1
    r = rng.randint(1, body) if body else 0
    if op <= 4 and body:  # the common case: one hostile cell, properly quoted
        c = rng.randrange(len(rows[r])) if rows[r] else 0
        if not rows[r]:
            return _write_rows(rows, rng), "no-op"
        col = header[c] if c < len(header) else None
        rows[r][c] = hostile_cell(rng, col)
        return _write_rows(rows, rng), f"row {r} {col}={rows[r][c][:40]!r}"
    if op == 5 and body and rows[r]:  # unquoted, as a hand edit would
        c = rng.randrange(len(rows[r]))
        rows[r][c] = hostile_cell(rng, header[c] if c < len(header) else None)
        lines = [",".join(x) for x in rows]
        return "\n".join(lines) + "\n", f"raw row {r} col {c}={rows[r][c][:40]!r}"
    if op == 6 and body:
        del rows[r]
        return _write_rows(rows, rng), f"delete row {r}"
    if op == 7 and body:
        rows.insert(rng.randint(1, len(rows)), list(rows[r]))
        return _write_rows(rows, rng), f"duplicate row {r}"
    if op == 8 and body:
        k = rng.choice([10, 500, 3000])
        rows.extend([list(rows[r]) for _ in range(k)])
        return _write_rows(rows, rng), f"row {r} repeated {k} times"
    if op == 9 and header:
        c = rng.randrange(len(header))
        which = rng.randrange(4)
        for row in rows:
            if c < len(row):
                if which == 0:
                    del row[c]
                elif which == 1:
                    row.insert(c, row[c])
                elif which == 2 and c + 1 < len(row):
                    row[c], row[c + 1] = row[c + 1], row[c]
        if which == 3:
            header[c] = hostile_cell(rng)
        return _write_rows(rows, rng), f"column {c} op {which}"
    if op == 10 and body:
        rows[r] = rows[r] + [hostile_cell(rng)] if rng.random() < 0.5 else rows[r][:-1]
        return _write_rows(rows, rng), f"row {r} field count changed"
    if op == 11:
        rows = rows[:1] if rng.random() < 0.5 else rows[1:]
        return _write_rows(rows, rng), "header only / no header"
    if op == 12 and body:
        rows.insert(r, [])
        rows.insert(r, [""])
        return _write_rows(rows, rng), f"blank lines at {r}"
    if op == 13 and body > 1:
        rng.shuffle(rows)
        return _write_rows(rows, rng), "rows shuffled (header too)"
    data, what = mutate_bytes(rng, text.encode("utf-8"))
    return data, what


def mutate_csv_file(rng: random.Random, path: Path) -> str:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        data, what = mutate_bytes(rng, raw)
        path.write_bytes(data)
        return what
    out, what = mutate_csv_text(rng, text)
    path.write_bytes(out if isinstance(out, bytes) else out.encode("utf-8"))
    return what


# ----------------------------------------------------------------------------------------------- JSON


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, prefix + (i,)))
    return out


PROTOCOL_HOT = [
    ("window", "start"), ("window", "end"), ("window", "timezone"), ("deadline",), ("files", "expected_ids"),
    ("files", "reference"), ("files", "raw_results"), ("files", "tariffs"), ("files", "predictions"),
    ("experiments", 0, "variants", 0, "value"), ("experiments", 0, "variants", 1, "measurement"),
    ("experiments", 1, "variants", 2, "id"), ("experiments", 0, "runs_per_variant"),
    ("experiments", 1, "cold_runs_per_variant"), ("experiments", 0, "rental", "lots"),
    ("experiments", 1, "rental", "gpu"), ("experiments", 0, "rental", "duration_days"), ("classes",), ("classes", 0),
    ("quality", "threshold"), ("quality", "tolerance"), ("quality", "metric"), ("quality", "direction"),
    ("quality", "reference", "value"), ("corpus", "size"), ("corpus", "revision"),
    ("experiments", 0, "fixed", "corpus_revision"), ("experiments", 0, "variable"), ("registered_at",),
    ("synthetic_data",), ("schema_version",), ("experiments",), ("experiments", 0, "variants"),
]
PROTOCOL_VALUES: dict[str, list[Any]] = {
    "start": ["2026-02-30T09:00", "9999-12-31T23:59", "0001-01-01T00:00", "2026-03-29T02:30", "2026-10-25T02:30",
              "2026-10-09T09:00", "2026-10-05T09:00", "2026-10-05", "2026-10-05T09:00Z", "2025-10-05T09:00"],
    "timezone": ["UTC", "Etc/GMT+14", "Etc/GMT-14", "../../../../etc/passwd", "Europe/Nowhere", "", "Europe/Paris\x00",
                 "/usr/share/zoneinfo/UTC", "localtime", "posixrules", "Europe/../Europe/Paris", "EST5EDT",
                 "America/St_Johns", "Pacific/Kiritimati", "Australia/Lord_Howe"],
    "files": [f"../{OUTSIDE}/secret.csv", f"../{OUTSIDE}/secret.json", "/etc/passwd", "../outside.csv", "protocol.json",
              "predictions", ".", "", "a\\b", "C:/x", "resultats-bruts.csv", "expected-ids.csv", "reference.csv",
              "measurements/b200-batch-b1.json", "link-out.csv", "signer-key.pem",
              f"../{OUTSIDE}/{{experiment_id}}/{{variant_id}}/{{phase}}-{{run_index}}.csv",
              "predictions/{experiment_id}/{variant_id}/{phase}-{run_index}.csv/../../../../x",
              "{experiment_id}{variant_id}{phase}{run_index}", "/{experiment_id}/{variant_id}/{phase}-{run_index}.csv",
              "predictions/{experiment_id}/{variant_id}/{phase}-{run_index}.csv"],
    "measurement": [f"../{OUTSIDE}/secret.json", "/etc/passwd", "measurements", "protocol.json",
                    "measurements/b200-batch-b4.json", "../../x.json", "link-out.json", ""],
    "runs_per_variant": [0, 1, 4, 6, 20, 100000, -1, 2**63, 1.5, "5"],
    "cold_runs_per_variant": [0, 1, 2, -1, None],
    "lots": [0, 1, 2, 10**18, 10**300, -1, 1.5],
    "size": [0, 1, 999, 1001, 10**12, -1],
    "threshold": [-1, 2, 1e-320, 0, 1, 0.84, 0.9, None],
    "tolerance": [-1, 2, 0, 1, 0.5],
    "value": [0, 1, 2, 4, 8, -1, 10**20, 1.5, "4", None, 2**63],
    "duration_days": [3, 7, 30, 5, 0, -7, 31],
    "gpu": ["rtx-4090", "b200", "h200", "", "../x", "RTX-4090"],
    "metric": ["accuracy", "weighted_f1", "macro_f1", "f1", ""],
    "direction": ["lower_is_better", "higher_is_better", "sideways", ""],
    "classes": [["a"], [], ["games"] * 2, [str(i) for i in range(1000)], [str(i) for i in range(1001)],
                ["admin", "games", "graphics", "net", "science", "sound", "text", "utils", "=1+1"], [""]],
}


def _set(data: Any, path: tuple, value: Any) -> bool:
    if not path:
        return False
    node = data
    for key in path[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        if isinstance(node, dict) or (isinstance(node, list) and isinstance(path[-1], int) and path[-1] < len(node)):
            node[path[-1]] = value
            return True
    except (KeyError, IndexError, TypeError):
        return False
    return False


def mutate_json_file(rng: random.Random, path: Path, hot: list[tuple] | None = None) -> str:
    try:
        return _mutate_json_file(rng, path, hot)
    except RecursionError:  # already nested too deep to load or dump: damage the bytes instead
        out, what = mutate_bytes(rng, path.read_bytes())
        path.write_bytes(out)
        return "json bytes: " + what


def _mutate_json_file(rng: random.Random, path: Path, hot: list[tuple] | None = None) -> str:
    raw = path.read_bytes()
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if data is None or rng.random() < 0.15:
        out, what = mutate_bytes(rng, raw)
        path.write_bytes(out)
        return "json bytes: " + what
    op = rng.randrange(8)
    if op <= 3:
        if hot and rng.random() < 0.6:
            target = rng.choice(hot)
            pool = PROTOCOL_VALUES.get(str(target[-1]), PROTOCOL_VALUES.get(str(target[0]), []))
            value = rng.choice(pool) if pool and rng.random() < 0.6 else hostile_json_value(rng)
        else:
            target = rng.choice(_paths(data))
            value = hostile_json_value(rng)
        if not _set(data, target, value):
            data = value if not target else data
        what = f"set {'/'.join(map(str, target))} = {str(value if not isinstance(value, Raw) else value.text)[:50]!r}"
    elif op == 4:
        candidates = [p for p in _paths(data) if p]
        target = rng.choice(candidates) if candidates else ()
        parent: Any = data
        for key in target[:-1]:
            parent = parent[key]
        if isinstance(parent, dict):
            del parent[target[-1]]
        elif isinstance(parent, list):
            del parent[target[-1]]
        what = f"delete {'/'.join(map(str, target))}"
    elif op == 5:
        objects = [p for p in _paths(data) if isinstance(_get(data, p), dict)]
        target = rng.choice(objects) if objects else ()
        node = _get(data, target)
        if isinstance(node, dict):
            node[rng.choice(["extra", "", "x" * 300, "\u0000", "__proto__", "files"])] = hostile_json_value(rng)
        what = f"add key under {'/'.join(map(str, target))}"
    elif op == 6:  # duplicate a key, textually
        text = dumps(data, rng)
        key = rng.choice(["schema_version", "files", "phases", "title", "signed", "timezone", "start"])
        needle = f'"{key}":'
        i = text.find(needle)
        if i >= 0:
            text = text[:i] + f'"{key}": {dumps(hostile_json_value(rng))}, ' + text[i:]
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        return f"duplicate key {key}"
    else:  # wrap a node deeper
        target = rng.choice(_paths(data))
        depth = rng.choice([10, 62, 63, 64, 65, 100, 1100])
        value = Raw("[" * depth + dumps(_get(data, target)) + "]" * depth)
        if not _set(data, target, value):
            data = value
        what = f"wrap {'/'.join(map(str, target))} in {depth} lists"
    path.write_bytes(dumps(data, rng).encode("utf-8", errors="surrogatepass"))
    return what


def _get(data: Any, path: tuple) -> Any:
    node = data
    for key in path:
        node = node[key]
    return node


# ----------------------------------------------------------------------------------------------- files on disk


def plant_outside(parent: Path) -> Path:
    """The files outside the campaign folder that inputs may point at; each holds SECRET."""
    out = parent / OUTSIDE
    if not out.exists():
        out.mkdir()
        (out / "secret.csv").write_text(f"id,label\n{SECRET},games\n", encoding="utf-8")
        (out / "secret.json").write_text(json.dumps({"secret": SECRET, "schema_version": "1"}), encoding="utf-8")
        (out / "secret-grid.csv").write_text(f"{SECRET}\n", encoding="utf-8")
        (out / "secret-bag-info.txt").write_text(f"Payload-Oxum: {SECRET}\nBagIt-Version: {SECRET}\n", encoding="utf-8")
    return out


def _files(root: Path, suffix: str | None = None) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()
                  and (suffix is None or p.name.endswith(suffix)))


def mutate_structure(rng: random.Random, root: Path) -> str:
    """Replace, delete or re-type a file of the folder: links out, links in, folders, pipes, empty files."""
    files = _files(root)
    if not files:
        return "no file"
    victim = rng.choice(files)
    rel = victim.relative_to(root).as_posix()
    outside = plant_outside(root.parent)
    op = rng.randrange(9)
    if op == 0:
        victim.unlink()
        return f"delete {rel}"
    if op == 1:
        victim.unlink()
        victim.symlink_to(outside / rng.choice(["secret.csv", "secret.json", "secret-grid.csv"]))
        return f"{rel} -> link out of the folder"
    if op == 2:
        victim.unlink()
        victim.symlink_to(rng.choice(["/etc/passwd", "/dev/zero", "/dev/null", "/proc/self/environ", "/nonexistent"]))
        return f"{rel} -> absolute link"
    if op == 3:
        victim.unlink()
        victim.mkdir()
        return f"{rel} is a folder"
    if op == 4:
        victim.unlink()
        os.mkfifo(victim)
        return f"{rel} is a named pipe"
    if op == 5:
        victim.unlink()
        victim.symlink_to(victim.name)
        return f"{rel} -> itself (link loop)"
    if op == 6:
        other = rng.choice(files)
        victim.unlink()
        victim.symlink_to(os.path.relpath(other, victim.parent))
        return f"{rel} -> link inside to {other.relative_to(root).as_posix()}"
    if op == 7:
        folder = victim.parent
        if folder != root:
            import shutil

            shutil.rmtree(folder)
            folder.symlink_to(outside, target_is_directory=True)
            return f"{folder.relative_to(root).as_posix()}/ -> folder link out"
        victim.write_bytes(b"")
        return f"{rel} emptied"
    for name, target in (("link-out.csv", "secret.csv"), ("link-out.json", "secret.json")):
        if not os.path.lexists(root / name):
            (root / name).symlink_to(outside / target)
    victim.write_bytes(b"")
    return f"{rel} emptied; link-out.* planted"


def _plain(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def campaign_mutation(rng: random.Random, root: Path) -> str:
    """One mutation of a campaign folder, weighted towards the grid and the protocol."""
    try:
        return _campaign_mutation(rng, root)
    except (OSError, ValueError, RecursionError, LookupError) as exc:  # an earlier mutation left something odd
        return f"mutation skipped ({type(exc).__name__})"


def _campaign_mutation(rng: random.Random, root: Path) -> str:
    r = rng.random()
    if r < 0.30 and _plain(root / GRID):
        return "grid: " + mutate_csv_file(rng, root / GRID)
    if r < 0.50 and _plain(root / "protocol.json"):
        return "protocol: " + mutate_json_file(rng, root / "protocol.json", PROTOCOL_HOT)
    if r < 0.58:
        m = _files(root / "measurements", ".json") if (root / "measurements").is_dir() else []
        if m:
            target = rng.choice(m)
            return f"{target.name}: " + mutate_json_file(rng, target)
    if r < 0.72:
        p = _files(root / "predictions", ".csv") if (root / "predictions").is_dir() else []
        if p:
            target = rng.choice(p)
            return f"{target.relative_to(root).as_posix()}: " + mutate_csv_file(rng, target)
    if r < 0.85:
        name = rng.choice(["expected-ids.csv", "reference.csv", "tarifs-forfaits.csv"])
        if _plain(root / name):
            return f"{name}: " + mutate_csv_file(rng, root / name)
    return "structure: " + mutate_structure(rng, root)


def mutate_campaign(rng: random.Random, root: Path) -> list[str]:
    """One to three mutations of a campaign copy."""
    return [campaign_mutation(rng, root) for _ in range(rng.choice([1, 1, 1, 2, 3]))]


# ----------------------------------------------------------------------------------------------- bundles


MANIFEST_LINES = ["../../etc/passwd", "/etc/passwd", "data/../../x", "data/decision.json", "data/%0A", "data/%25",
                  "data/inputs/../../../../etc/passwd", "data/\x00", "data/ ", "", "data", "data/",
                  "tagmanifest-sha256.txt"]


def _mutate_manifest_text(rng: random.Random, path: Path) -> str:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    op = rng.randrange(5)
    digest = rng.choice(["0" * 64, "z" * 64, "", "00", hashlib.sha256(b"").hexdigest(), "A" * 128])
    if op == 0 or not lines:
        lines.append(f"{digest}  {rng.choice(MANIFEST_LINES)}")
    elif op == 1:
        i = rng.randrange(len(lines))
        lines[i] = f"{digest}  {(lines[i].split(maxsplit=1) or [''])[-1]}"
    elif op == 2:
        i = rng.randrange(len(lines))
        lines[i] = (lines[i].split(maxsplit=1) or [""])[0] + "  " + rng.choice(MANIFEST_LINES)
    elif op == 3:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(["", " ", "onlyone", "a b c d", "\t\t"]))
    else:
        lines = lines + lines
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return f"manifest lines op {op}"


def mutate_bundle(rng: random.Random, root: Path, resign: Callable[[Path], None] | None = None) -> str:
    """One mutation of a bundle folder; `resign` re-signs MANIFEST.json afterwards (to reach deeper checks)."""
    try:
        return _mutate_bundle(rng, root, resign)
    except (OSError, ValueError, RecursionError, LookupError) as exc:  # an earlier mutation left something odd
        return f"mutation skipped ({type(exc).__name__})"


def _mutate_bundle(rng: random.Random, root: Path, resign: Callable[[Path], None] | None) -> str:
    files = _files(root)
    op = rng.randrange(12)
    if op == 0 and files:
        f = rng.choice(files)
        data, what = mutate_bytes(rng, f.read_bytes())
        f.write_bytes(data)
        return f"{f.relative_to(root).as_posix()}: {what}"
    if op in (1, 2) and (root / "MANIFEST.json").is_file():
        what = "MANIFEST.json: " + mutate_json_file(rng, root / "MANIFEST.json")
        if resign is not None and rng.random() < 0.7:
            resign(root)
            what += " (re-signed)"
        return what
    if op == 3:
        name = rng.choice(["manifest-sha256.txt", "manifest-sha512.txt", "tagmanifest-sha256.txt"])
        if (root / name).is_file():
            return f"{name}: " + _mutate_manifest_text(rng, root / name)
    if op == 4 and (root / "bag-info.txt").is_file():
        value = rng.choice(["abc", "-1.-1", "1.1.1", "9" * 400 + ".1", "", "0.0", ".", "\x00"])
        text = (root / "bag-info.txt").read_text(encoding="utf-8")
        lines = [ln if not ln.startswith("Payload-Oxum") else f"Payload-Oxum: {value}" for ln in text.splitlines()]
        if rng.random() < 0.3:
            lines.append(" continuation without label")
        (root / "bag-info.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return f"Payload-Oxum={value!r}"
    if op == 5:
        target = root / rng.choice(["signer.pem", "MANIFEST.json.sig"])
        junk = rng.choice([b"", b"\x00" * 72, b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                           bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))), b"0" * 1_000_000])
        target.write_bytes(junk)
        return f"{target.name} replaced ({len(junk)} bytes)"
    if op == 6:
        pdf = root / "data" / "decision-note.pdf"
        if pdf.is_file():
            data = pdf.read_bytes()
            i = data.rfind(b"/ByteRange [")
            k = rng.randrange(3)
            if k == 0 and i >= 0:
                j = data.index(b"]", i)
                nums = rng.choice([b"0 0 0 0", b"-1 5 7 9", b"0 99999999999 0 1", b"0 1 2", b"a b c d"])
                data = data[:i + 12] + nums.ljust(j - i - 12)[: max(j - i - 12, len(nums))] + data[j:]
            elif k == 1:
                data = data + b"\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R /Size -5 >>\n%%EOF\n"
            else:
                data = data[: rng.randrange(len(data))]
            pdf.write_bytes(data)
            return f"PDF op {k}"
    if op == 7:
        outside = plant_outside(root.parent)
        victim = rng.choice(files) if files else root / "data" / "x"
        victim.unlink(missing_ok=True)
        victim.symlink_to(rng.choice([str(outside / "secret.json"), str(outside / "secret-bag-info.txt"),
                                      "/etc/passwd", "/dev/zero", victim.name]))
        return f"{victim.relative_to(root).as_posix()} -> link"
    if op == 8:
        kind = rng.randrange(4)
        target = root / rng.choice(["data/extra.bin", "extra.txt", "data/inputs/new/deep.csv", "data/\udcff.csv"])
        target.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(target):
            return f"{target.relative_to(root).as_posix()!r} already there"
        if kind == 0:
            os.mkfifo(target)
        elif kind == 1:
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(b"added")
        return f"added {'fifo dir file file'.split()[kind]} {target.relative_to(root).as_posix()!r}"
    if op == 9 and files:
        f = rng.choice(files)
        f.unlink()
        return f"deleted {f.relative_to(root).as_posix()}"
    if op == 10 and (root / "bagit.txt").is_file():
        (root / "bagit.txt").write_bytes(rng.choice([b"", b"BagIt-Version: 0.97\n", b"\xff\xfe",
                                                     b"BagIt-Version: 1.0"]))
        return "bagit.txt changed"
    if (root / "MANIFEST.json").is_file():
        doc = json.loads((root / "MANIFEST.json").read_bytes())
        choice = rng.randrange(5)
        if choice == 0:
            doc["signer"] = None
        elif choice == 1:
            doc["signed"] = not doc["signed"]
        elif choice == 2 and doc["files"]:
            doc["files"][0]["path"] = rng.choice(["data/../../../etc/passwd", "data/inputs/../../MANIFEST.json",
                                                  "data/" + "x" * 300, "data/\u0000"])
        elif choice == 3 and doc["files"]:
            doc["files"][0]["bytes"] = rng.choice([-1, 2**70, 0])
        else:
            doc["files"] = doc["files"] * 2
        (root / "MANIFEST.json").write_bytes(json.dumps(doc, indent=2).encode())
        if resign is not None:
            resign(root)
        return f"MANIFEST.json semantic change {choice} (re-signed)"
    return "no-op"


# ----------------------------------------------------------------------------------------------- zips


def zip_folder(rng: random.Random, root: Path, target: Path) -> str:
    """Zip a bundle folder with random (legal) choices: top folder or not, folder entries, stored or deflated."""
    top = rng.choice(["bundle/", "", "a/b/"])
    method = rng.choice([zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
    with zipfile.ZipFile(target, "w", compression=method) as zf:
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() or not (path.is_file() or path.is_dir()) or not rel.isascii() and \
                    rel.encode("utf-8", "surrogateescape") != rel.encode("utf-8", "replace"):
                continue  # a zip name is text: a non-UTF-8 file name cannot go in
            if path.is_dir():
                if rng.random() < 0.3:
                    zf.writestr(top + rel + "/", b"")
                continue
            zf.write(path, top + rel)
    return f"zipped top={top!r} method={method}"


def _patch(data: bytearray, offset: int, fmt: str, value: int) -> None:
    if 0 <= offset and offset + struct.calcsize(fmt) <= len(data):
        struct.pack_into(fmt, data, offset, value)


def mutate_zip(rng: random.Random, path: Path) -> str:
    """Damage a zip: header fields (sizes, method, flags, attributes), bytes, or hostile entries appended."""
    data = bytearray(path.read_bytes())
    op = rng.randrange(8)
    central = [i for i in range(len(data)) if data.startswith(b"PK\x01\x02", i)] if op <= 3 else []
    local = [i for i in range(len(data)) if data.startswith(b"PK\x03\x04", i)] if op <= 3 else []
    if op == 0 and central:
        c = rng.choice(central)
        field, fmt, value = rng.choice([(10, "<H", rng.choice([99, 12, 14, 1])), (8, "<H", 1), (8, "<H", 0x41),
                                        (24, "<I", rng.choice([0xFFFFFFFF, 0, 1 << 31])), (20, "<I", 1),
                                        (38, "<I", rng.choice([0o120777 << 16, 0o010644 << 16, 0o020644 << 16])),
                                        (16, "<I", 0xDEADBEEF), (42, "<I", 0xFFFFFFF0), (28, "<H", 0xFFFF)])
        _patch(data, c + field, fmt, value)
        what = f"central header +{field} = {value}"
    elif op == 1 and local:
        c = rng.choice(local)
        field, fmt, value = rng.choice([(8, "<H", 99), (6, "<H", 1), (14, "<I", 0), (18, "<I", 0xFFFFFFFF),
                                        (22, "<I", 0), (26, "<H", 0xFFFF), (28, "<H", 500)])
        _patch(data, c + field, fmt, value)
        what = f"local header +{field} = {value}"
    elif op in (2, 3) and data:
        k = rng.randint(1, 8)
        for _ in range(k):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        what = f"{k} bits flipped"
    elif op == 4:
        data = data[: rng.randrange(len(data) + 1)]
        what = "truncated"
    elif op == 5:
        data = bytearray(rng.choice([b"MZ" + b"\x00" * 100, b"PK\x05\x06" + b"\x00" * 18, b"junk"])) + data
        what = "prefixed"
    else:
        path.write_bytes(bytes(data))
        with zipfile.ZipFile(path, "a") as zf:
            kind = rng.randrange(7)
            names = [i.filename for i in zf.infolist()]
            if kind == 0 and names:
                with _quiet():
                    zf.writestr(rng.choice(names), b"duplicate")
            elif kind == 1:
                zf.writestr(rng.choice(["../../escape.txt", "/abs.txt", "C:x.txt", "a/../../b", "x\\..\\y"]), b"x")
            elif kind == 2:
                info = zipfile.ZipInfo(rng.choice(["bundle/data/link", "link"]))
                info.external_attr = (0o120777) << 16
                zf.writestr(info, b"/etc/passwd")
            elif kind == 3 and names:
                zf.writestr(names[0] + "/child", b"under a file")
            elif kind == 4:
                zf.writestr(rng.choice(["bundle/data/zeros", "zeros"]), b"\0" * (3 * 2**20), zipfile.ZIP_DEFLATED)
            elif kind == 5:
                for i in range(rng.choice([10, 2000])):
                    zf.writestr(f"bundle/data/many/{i}", b"")
            else:
                zf.writestr(rng.choice(["", ".", "./", "bundle/./x", "\u00e9\u0301", "a\x00b"]) or "x", b"odd")
        return f"entry added (kind {kind})"
    path.write_bytes(bytes(data))
    return what


class _quiet:
    def __enter__(self) -> None:
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc: Any) -> None:
        self._w.__exit__(*exc)
