"""The decision note's structure counted from its bytes before any parser reads it: objects, references, object streams.

pyHanko's cost grows with what the note holds: a note of a few megabytes listing one form field a million times
(the AcroForm's /Fields or a page's /Annots) cost `verify` 20 s of processor time and 1.5 GiB before the time
limit refused it, and a million empty objects 10 s (docs/performance.md). So the parent counts, in one pass of
regular expressions over the bytes and each object stream inflated, before the child process starts:

- objects: the rows of the cross-reference tables and the entries each cross-reference stream declares (what a
  parser learns of), or the `obj` headers and the objects each object stream declares, whichever is more;
- references: every `R` token, in the file and in each object stream inflated (an array of a million
  references is a million of them, wherever it is and however the references are spaced or commented);
- the object streams' inflated bytes (a few kilobytes of deflate can hide a hundred megabytes of references).

A name is matched plain or #-escaped (`/Obj#53tm` is `/ObjStm` to a parser). What cannot be counted from the
bytes is refused rather than guessed: an encrypted note, an object stream with another filter than FlateDecode
or with filter parameters, an object count that is not a direct number. gpu-audit's notes (WeasyPrint's
object streams, pyHanko's signing update) hold a few thousand of each (docs/performance.md).
"""

from __future__ import annotations

import bisect
import io
import re
import zlib
from dataclasses import dataclass
from typing import Any

from generator.core.limits import Limits, limit_message

_WS = rb"[\x00\t\n\x0c\r ]"
_REGULAR = rb"[^\x00\t\n\x0c\r ()<>\[\]{}/%]"  # a character that continues a token


def _name(word: str) -> bytes:
    """A pattern of the PDF name /word, each character plain or #-escaped, as a whole token."""
    chars = [b"(?:%s|#%s)" % (re.escape(c.encode()), b"".join(b"[%s%s]" % (d.upper().encode(), d.lower().encode())
                                                              for d in f"{ord(c):02x}")) for c in word]
    return b"/" + b"".join(chars) + b"(?!" + _REGULAR + b")"


_SPACES = (b"\x00", b"\t", b"\n", b"\x0c", b"\r", b" ")
_OBJ = re.compile(_WS + b"obj(?!" + _REGULAR + b")")  # an object's header (`endobj` has no whitespace before obj)
_STREAM = re.compile(rb">>" + _WS + rb"*stream[\x00\t\x0c ]*(?:\r\n|\r|\n)?")
_ENCRYPT = re.compile(_name("Encrypt"))
_XREF_TYPE = re.compile(_name("XRef"))
_FIRST = re.compile(_name("First"))
_DECODE_PARMS = re.compile(_name("DecodeParms"))
_FILTER_KEY = re.compile(_name("Filter"))
_FILTER = re.compile(_name("Filter") + _WS + rb"*(\[?)" + _WS + rb"*(/" + _REGULAR + rb"*)" + _WS + rb"*(\]?)")
_FLATE = re.compile(b"^" + _name("FlateDecode") + b"$")
_LENGTH = re.compile(_name("Length") + _WS + rb"*(\d+)(?:" + _WS + rb"+(\d+)" + _WS + rb"+R)?(?!" + _REGULAR + b")")
_COUNT = re.compile(_name("N") + _WS + rb"*(\d+)(?!" + _WS + rb"+\d+" + _WS + rb"+R)(?!" + _REGULAR + b")")
_INDEX = re.compile(_name("Index") + _WS + rb"*\[([\d\x00\t\n\x0c\r ]*)\]")
_SIZE = re.compile(_name("Size") + _WS + rb"*(\d+)(?!" + _WS + rb"+\d+" + _WS + rb"+R)(?!" + _REGULAR + b")")
_ENDSTREAM = re.compile(_WS + rb"*endstream")
_INT_OBJ = re.compile(_WS + b"obj" + _WS + rb"*(\d+)" + _WS + rb"*endobj")
_OBJ_NUMBER = re.compile(rb"(?<![0-9])(\d{1,10})" + _WS + rb"+(\d{1,5})" + _WS + b"$")


@dataclass
class NoteCounts:
    """What the note's bytes hold: objects, references and inflated object-stream bytes."""

    objects: int = 0
    references: int = 0
    inflated: int = 0


class Uncountable(Exception):
    """A structure whose size the bytes do not show (the message says which)."""


class _Streams:
    """The note's bytes with what finding a stream's end needs, each found in one pass."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.ends = [m.start() for m in re.finditer(b"endstream", data)]
        self._ints: dict[tuple[bytes, bytes], int] | None = None

    def number(self, num: bytes, gen: bytes) -> int:
        """The indirect object `num gen` when it is a number (the last one written), else -1."""
        if self._ints is None:  # once, and only for a note with an indirect /Length
            self._ints = {}
            for m in _INT_OBJ.finditer(self.data):
                header = _OBJ_NUMBER.search(self.data, max(0, m.start() - 18), m.start() + 1)
                if header is not None:
                    self._ints[header.group(1), header.group(2)] = int(m.group(1))
        return self._ints.get((num, gen), -1)

    def payload(self, head: bytes, start: int) -> bytes:
        """The stream's bytes: /Length of them (direct, or an indirect number), else up to `endstream`."""
        match = _LENGTH.search(head)
        length = -1
        if match and match.group(2) is None:
            length = int(match.group(1))
        elif match:
            length = self.number(match.group(1), match.group(2))
        if length < 0 or not _ENDSTREAM.match(self.data, start + length):
            where = bisect.bisect_left(self.ends, start)
            length = (self.ends[where] if where < len(self.ends) else len(self.data)) - start
        return self.data[start:start + length]


def _inflate(raw: bytes, budget: int) -> bytes:
    """`raw` inflated, at most `budget` + 1 bytes, and as far as it inflates when damaged."""
    inflate, out = zlib.decompressobj(), bytearray()
    for at in range(0, len(raw), 1 << 16):
        try:
            out += inflate.decompress(raw[at:at + (1 << 16)], budget + 1 - len(out))
        except zlib.error:
            break
        if len(out) > budget or inflate.unconsumed_tail:
            break
    return bytes(out)


def _object_stream(streams: _Streams, head: bytes, start: int, counts: NoteCounts, budget: int) -> bytes:
    """An object stream's inflated bytes, its declared object count added to `counts`."""
    count = _COUNT.search(head)
    if count is None:
        raise Uncountable("it holds an object stream whose object count (/N) is not a direct number")
    counts.objects += int(count.group(1))
    if _DECODE_PARMS.search(head):
        raise Uncountable("it holds an object stream with filter parameters (/DecodeParms)")
    raw = streams.payload(head, start)
    if not _FILTER_KEY.search(head):
        return raw
    filters = _FILTER.search(head)
    if filters is None or bool(filters.group(1)) != bool(filters.group(3)) or not _FLATE.match(filters.group(2)):
        raise Uncountable("it holds an object stream with another filter than one /FlateDecode")
    return _inflate(raw, budget - counts.inflated)


def _xref_entries(head: bytes) -> int:
    """The entries a cross-reference stream declares: its /Index pairs' counts, else its /Size."""
    index = _INDEX.search(head)
    if index is not None:
        numbers = [int(n) for n in index.group(1).split()]
        return sum(numbers[1::2])
    size = _SIZE.search(head)
    if size is None:
        raise Uncountable("it holds a cross-reference stream whose /Index or /Size is not direct numbers")
    return int(size.group(1))


def _plain_counts(data: bytes) -> NoteCounts:
    """What the bytes show without inflating anything: object headers or table rows, and references."""
    if _ENCRYPT.search(data):
        raise Uncountable("it is encrypted (/Encrypt)")
    rows = data.count(b" n") + data.count(b" f")  # a cross-reference row ends " n" or " f", then a space or EOL
    headers = data.count(b"obj") - data.count(b"endobj")  # exact: each `endobj` holds one `obj`
    return NoteCounts(objects=max(headers, rows), references=_count(data, b"R"))


def _count(data: bytes, word: bytes) -> int:
    """How often `word` follows a whitespace character (bytes.count's speed; a few words of text more at most)."""
    return sum(data.count(space + word) for space in _SPACES)


def _headers(data: bytes) -> list[int]:
    """Where each object's header (`N G obj`) ends, in order."""
    return [m.end() for m in _OBJ.finditer(data) if _OBJ_NUMBER.search(data, max(0, m.start() - 17), m.start() + 1)]


def _stream_counts(data: bytes, budget: int) -> NoteCounts:
    """What the object streams add (their objects and inflated references) and the entries the
    cross-reference streams declare; the object streams inflated at most `budget` bytes in all."""
    headers, streams = _headers(data), _Streams(data)
    counts, xref_entries, previous = NoteCounts(), 0, 0
    for match in _STREAM.finditer(data):
        where = bisect.bisect_right(headers, match.start())
        # a stream's dictionary follows its object's header, and the stream before it (bounding the text read)
        head = data[max(headers[where - 1] if where else 0, previous):match.start() + 2]
        previous = match.end()
        if _XREF_TYPE.search(head):
            xref_entries += _xref_entries(head)
        elif _FIRST.search(head):
            inflated = _object_stream(streams, head, match.end(), counts, budget)
            counts.inflated += len(inflated)
            counts.references += _count(inflated, b"R")
            if counts.inflated > budget:
                break
    counts.objects += len(headers)
    counts.objects = max(counts.objects, xref_entries)
    return counts


def count_note(data: bytes, budget: int) -> NoteCounts:
    """Everything `bounds_problem` counts, in full (for tests and measurements): objects, references, and the
    object streams' inflated bytes (at most `budget`)."""
    plain, more = _plain_counts(data), _stream_counts(data, budget)
    return NoteCounts(max(plain.objects, more.objects), plain.references + more.references, more.inflated)


def bounds_problem(data: bytes, limits: Limits) -> str | None:
    """Why the note is too large a structure to parse (the limit, its value and the value found), else None.

    The plain bytes are counted first, and only a note within the bounds there has its object streams inflated."""
    try:
        counts = _plain_counts(data)
        problem = _over(counts, limits)
        if problem is None:
            more = _stream_counts(data, limits.max_pdf_bytes)
            counts = NoteCounts(max(counts.objects, more.objects), counts.references + more.references, more.inflated)
            problem = _over(counts, limits)
    except Uncountable as exc:
        return f"not parsed: its objects and references cannot be counted from its bytes: {exc}"
    return problem


def _over(counts: NoteCounts, limits: Limits) -> str | None:
    if counts.inflated > limits.max_pdf_bytes:
        return "not parsed: " + limit_message("max_pdf_bytes", limits, f"its object streams inflated, over "
                                              f"{limits.max_pdf_bytes} bytes,")
    if counts.objects > limits.max_pdf_objects:
        return "not parsed: " + limit_message("max_pdf_objects", limits, f"its object count, {counts.objects},")
    if counts.references > limits.max_pdf_references:
        return "not parsed: " + limit_message("max_pdf_references", limits,
                                              f"its indirect references, {counts.references},")
    return None


def form_problem(pdf: bytes, limits: Limits) -> tuple[str, str] | None:
    """In the parser's child, before pyHanko reads the note: its form fields and annotations (the AcroForm's
    /Fields, their /Kids, each page's /Annots) counted by qpdf (pikepdf), which reads an array of a million in a
    tenth of a second where pyHanko spends a third of a millisecond on each. Past --max-pdf-fields, or unreadable
    to qpdf: the problem's code and message."""
    import pikepdf

    try:
        with pikepdf.open(io.BytesIO(pdf)) as doc:
            found, complete = _form_count(doc, limits.max_pdf_fields)
    except Exception as exc:  # noqa: BLE001 - pikepdf raises several types on a damaged file
        return "bad-pdf", f"the PDF cannot be read: qpdf: {type(exc).__name__}: {exc}"
    if found <= limits.max_pdf_fields:
        return None
    value = f"its form fields and annotations, {found}{'' if complete else ' or more'},"
    return "pdf-too-complex", "not parsed: " + limit_message("max_pdf_fields", limits, value)


def _form_count(doc: Any, bound: int) -> tuple[int, bool]:
    """The fields and annotations `doc` lists, and whether that is all of them: each array is counted whole
    before its items are looked at, and the walk stops past `bound` (a /Kids cycle counts again until then)."""
    import pikepdf

    def length(array: object) -> int:
        return len(array) if isinstance(array, pikepdf.Array) else 0

    found = sum(length(page.obj.get("/Annots")) for page in doc.pages)
    form = doc.Root.get("/AcroForm")
    pending = [form.get("/Fields")] if isinstance(form, pikepdf.Dictionary) else []
    while pending and found <= bound:
        array = pending.pop()
        found += length(array)
        if found <= bound and isinstance(array, pikepdf.Array):
            pending += [item.get("/Kids") for item in array if isinstance(item, pikepdf.Dictionary) and "/Kids" in item]
    return found, not pending
