"""Text from a file or an archive made safe to print on a terminal: what it holds is shown, never applied.

A name (a file, a zip entry, a certificate subject) comes from whoever made the bundle or the campaign. Printed
raw, a carriage return or an ANSI escape sequence in it can overwrite the lines above ("OK ... trusted" over the
real FAILED lines), and a bidirectional control can reorder what follows. `escape_terminal` shows every such
character as `<U+001B>`, the notation the findings already use for invisible characters (generator.audit.textsafety),
so a reader sees one spelling everywhere. Standard library only: `verify` imports it.
"""

from __future__ import annotations

import re

# C0 controls (tab and line breaks included: a name is one line), DEL, C1 controls; the bidirectional
# controls and zero-width characters (U+061C, U+200B-U+200F, U+202A-U+202E, U+2060-U+2064, U+2066-U+2069,
# U+FEFF); the line and paragraph separators; and lone surrogates (an undecodable file name), which no
# UTF-8 stream can print.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
                     "\ud800-\udfff]")


def _tag(match: re.Match[str]) -> str:
    return f"<U+{ord(match.group(0)):04X}>"


def escape_terminal(text: str) -> str:
    """`text` with every control, reordering, invisible or unprintable character shown as `<U+XXXX>`.

    The result holds only printable characters, is one line, and escaping it again changes nothing.
    """
    return _UNSAFE.sub(_tag, text)
