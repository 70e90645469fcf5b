"""The immutable forms of a model or tokenizer revision: the one rule that `check` judges a protocol by and that
`campaign run` applies before its first run, so that what the one accepts the other accepts too."""

from __future__ import annotations

import re

__all__ = ["IMMUTABLE", "MOVING", "is_immutable", "is_moving"]

# A 40-hex commit (the Hub's snapshot), the SHA-256 of one file or of the `sha256sum` listing of several (what
# `campaign run` writes: generator/gpu/models/hfmodel.files_revision), the reference classifier's tokenisation
# (generator/gpu/models/textclf.tokenizer_revision), and a model that tokenises itself (generator/gpu/models/loading.
# EntryPoint), whose model revision is then the one that pins it.
IMMUTABLE = {
    "model_revision": re.compile(r"[0-9a-f]{40}|sha256(?:sum)?:[0-9a-f]{64}", re.ASCII),
    "tokenizer_revision": re.compile(r"[0-9a-f]{40}|sha256(?:sum)?:[0-9a-f]{64}"
                                     r"|hashed-words-crc32-uni\+bigram-v1-b[0-9]+-c[0-9]+"
                                     r"|[A-Za-z_][\w.]*:[A-Za-z_]\w* \(tokenises itself\)",
                                     re.ASCII)}
# Names that move: a branch, a tag or a version number points at other weights tomorrow.
MOVING = re.compile(r"(?i)refs/.*|main|master|head|latest|trunk|dev(elop(ment)?)?|stable|nightly|default|release"
                    r"|current|tip|v[0-9]+(\.[0-9]+)*([-.+][a-z0-9.]+)?|[0-9]+(\.[0-9]+)+([-.+][a-z0-9.]+)?|[0-9]{1,4}",
                    re.ASCII)


def is_immutable(key: str, value: str) -> bool:
    """Whether `value` is an immutable form of the revision `key` (model_revision or tokenizer_revision)."""
    return IMMUTABLE[key].fullmatch(value) is not None


def is_moving(value: str) -> bool:
    """Whether `value` is a name that moves (main, latest, v1, ...)."""
    return MOVING.fullmatch(value.strip()) is not None
