"""Text from a file or an archive made safe to print on a terminal: what it holds is shown, never applied.

A name (a file, a zip entry, a certificate subject) comes from whoever made the bundle or the campaign. Printed
raw, a carriage return or an ANSI escape sequence in it can overwrite the lines above ("OK ... trusted" over the
real FAILED lines), a bidirectional control can reorder what follows, and an invisible character can make one
name read as another. `escape_terminal` shows every such character as `<U+001B>`, the notation the findings
already use for invisible characters (generator.audit.load.textsafety), so a reader sees one spelling everywhere.
Standard library only: `verify` imports it.
"""

from __future__ import annotations

import unicodedata

# Unicode's controls (Cc: C0 with tab and line breaks, since a name is one line, DEL, C1), format characters
# (Cf: bidirectional controls, zero-width characters, the soft hyphen, tags such as U+E0001, the interlinear
# annotation marks U+FFF9-U+FFFB), private-use characters (Co: their glyph is whatever a font makes of them),
# lone surrogates (Cs: an undecodable file name, which no UTF-8 stream can print) and the line and paragraph
# separators (Zl, Zp).
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})
# Characters of other categories that print as nothing or as blank space where a letter is expected: the
# combining grapheme joiner (U+034F), the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the Khmer inherent
# vowels (U+17B4, U+17B5), the Mongolian variation selectors and vowel separator (U+180B-U+180F), the braille
# blank (U+2800) and the variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF).
_INVISIBLE = frozenset({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), 0x2800, 0x3164,
                        *range(0xFE00, 0xFE10), 0xFFA0, *range(0xE0100, 0xE01F0)})


def unsafe(char: str) -> bool:
    """Whether one character is shown as `<U+XXXX>` by `escape_terminal`."""
    return ord(char) in _INVISIBLE or unicodedata.category(char) in _UNSAFE_CATEGORIES


def escape_terminal(text: str) -> str:
    """`text` with every control, reordering, invisible or unprintable character shown as `<U+XXXX>`.

    The result holds only printable characters, is one line, and escaping it again changes nothing.
    """
    return "".join(f"<U+{ord(c):04X}>" if unsafe(c) else c for c in text)


def columns(char: str) -> int:
    """The terminal columns a character takes at most: two for East Asian wide and fullwidth ones."""
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def quoted_words(text: str, limit: int) -> tuple[str, str]:
    """`text` escaped, cut to `limit` terminal columns and between double quotes; and a note of the cut ("" if none).

    For a certificate's own words: once quoted and cut short enough to fit the line that shows them, a wrapped
    remainder can never start a line of its own ("OK: ... trusted"). A double quote inside is shown as
    `<U+0022>`, so the quote cannot be closed early.
    """
    shown: list[str] = []
    width = 0
    for char in text:
        piece = escape_terminal(char).replace('"', "<U+0022>")
        width += len(piece) if piece != char else columns(char)
        if width > limit:
            return '"' + "".join(shown) + '…"', f"cut: {len(text)} characters in all"
        shown.append(piece)
    return '"' + "".join(shown) + '"', ""


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 warning`, `2 warnings`: a count and its noun, singular for exactly one (`plural`: when not noun + s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
