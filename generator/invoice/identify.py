"""Which committed package an invoice line bills, read the ways providers write it: article ID, GPU slug, or name.

In this order (issue #35): the seller's item ID matched against the provider's article IDs the protocol
registered for each package (decision.json's experiments[].package.article_ids); the seller's item ID as the
GPU slug, its duration in the item attribute `duration_days` (gpu-audit's own convention) or the text; the item's
name or description naming the GPU (its slug or the tariffs' model name) and the duration in one of the note's
four languages ("7 days", "7 Tage", "7 jours", "7 天"), the GPU named exactly: "RTX 4090 D" or "B200 NVL" is
another model. A line the ways identify differently is reported, never guessed; a line none of them identifies
names no package.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from generator.invoice.document import InvoiceLine

# A duration: a whole number of days in English, German, French or Chinese, with a space, a hyphen or nothing
# between ("7 days", "7-day", "7 Tage", "7-Tage-Paket", "7 Tagen", "7 jours", "7天"); never part of a longer number.
DURATION = re.compile(r"(?<![\d.,])(\d{1,4})\s*[-\u2010\u2011]?\s*(?:(?:days?|tagen?|tage|jours?)(?![a-z])|天)",
                      re.IGNORECASE)
WORD = re.compile(r"[0-9a-z]+")
# A word that, right after a GPU's name, makes it another model at another price (a variant): "RTX 4090 D",
# "RTX 4090 Laptop", "RTX 4090 Ti", "B200 NVL", "H100 SXM5". Such a line names no committed GPU, unless the
# word is part of the tariffs' model name itself. A French "d'" ("RTX 4090 d'une semaine") is no variant.
VARIANT = re.compile(r"d|ti|super|laptop|mobile|notebook|max|maxq|ultra|ada|nvl\d*|sxm\d*|pcie\d*")
ELISION = ("'", "\u2019")

BY_ARTICLE = "article ID"
BY_SLUG = "GPU slug"
BY_TEXT = "name"


@dataclass(frozen=True)
class Known:
    """A committed package as lines may name it: its GPU slug and model name, days, and the provider's article
    IDs registered for it."""

    gpu: str
    days: int
    model_name: str | None
    article_ids: tuple[str, ...]


@dataclass(frozen=True)
class Identity:
    """What a line bills: the GPU and the days (None where no way tells), the ways that told them, and what
    the ways disagree on (empty when they agree)."""

    gpu: str | None
    days: int | None
    ways: tuple[str, ...]
    conflict: str = ""

    @property
    def complete(self) -> bool:
        return self.gpu is not None and self.days is not None


def _words(text: str) -> list[str]:
    return WORD.findall(text.casefold())


def _spans(words: list[str], name: str) -> list[tuple[int, int]]:
    """Where `name` (a slug or a model name) stands in `words`: its words in a row, written apart or together
    ("rtx-4090", "RTX 4090", "RTX4090"), never inside a longer word ("gb200" does not name "b200")."""
    joined = "".join(_words(name))
    found = []
    for start in range(len(words)):
        text = ""
        for end in range(start, len(words)):
            text += words[end]
            if text == joined:
                found.append((start, end + 1))
            if len(text) >= len(joined) or not joined.startswith(text):
                break
    return found


def _named(text: str, known: Iterable[Known]) -> tuple[set[str], list[str]]:
    """The committed GPUs that `text` names by slug or model name, and the variants it names instead (as
    written: "RTX 4090 D"); a name inside a longer one that is also named ("rtx 4090" inside "rtx 4090 d")
    counts for the longer one only."""
    folded = text.casefold()
    source = text if len(folded) == len(text) else folded  # where the words' offsets point to
    found = list(WORD.finditer(folded))
    words = [m.group() for m in found]
    spans, variants = [], []
    for k in known:
        own = set(_words(k.model_name or "")) | set(_words(k.gpu))
        for span in (span for name in (k.gpu, k.model_name) if name for span in _spans(words, name)):
            after = words[span[1]] if span[1] < len(words) else ""
            elided = after == "d" and folded[found[span[1]].end():found[span[1]].end() + 1] in ELISION
            if after and VARIANT.fullmatch(after) and after not in own and not elided:
                variants.append(((span[0], span[1] + 1), source[found[span[0]].start():found[span[1]].end()]))
            else:
                spans.append((span, k.gpu))
    kept = {gpu for (a, b), gpu in spans
            if not any(c <= a and b <= d and (d - c) > (b - a) and other != gpu for (c, d), other in spans)}
    # A variant the committed packages themselves name ("RTX 4090 D" committed as such) is that GPU's name.
    shown = [text for (a, b), text in variants if not any(c <= a and b <= d for (c, d), _ in spans)]
    return kept, list(dict.fromkeys(shown))


def named_days(text: str) -> set[int]:
    """The durations `text` states, in days."""
    return {int(m.group(1)) for m in DURATION.finditer(text)}


def _only(values: set[str]) -> str | None:
    return next(iter(values)) if len(values) == 1 else None


def _only_days(values: set[int]) -> int | None:
    return next(iter(values)) if len(values) == 1 else None


def _by_seller_id(line: InvoiceLine, known: list[Known]) -> list[tuple[str, str | None, int | None]]:
    """What the seller's item ID tells: as a registered article ID (GPU and days; the GPU alone when the ID is
    registered for several durations), else as a committed GPU's slug, or as any slug when the line carries
    gpu-audit's attribute `duration_days`."""
    seller = (line.seller_id or "").strip()
    if not seller:
        return []
    articles = [k for k in known if seller.casefold() in {a.casefold() for a in k.article_ids}]
    if articles:
        gpu = _only({k.gpu for k in articles})
        return [(BY_ARTICLE, gpu, _only_days({k.days for k in articles}) if gpu is not None else None)]
    slug = next((k.gpu for k in known if seller.casefold() == k.gpu.casefold()), None)
    if slug is None and line.days is None:
        return []
    return [(BY_SLUG, slug or seller, line.days)]


def identify(line: InvoiceLine, known: list[Known]) -> Identity:
    """The package `line` bills, by the three ways in order; ways that tell different GPUs or days are a
    conflict, named."""
    told = _by_seller_id(line, known)
    text = f"{line.name} {line.description}"
    (gpus, variants), days = _named(text, known), named_days(text)
    gpu = told[0][1] if told and told[0][1] is not None else None if variants else _only(gpus)
    day = told[0][2] if told and told[0][2] is not None else _only_days(days)
    ways = [way for way, _, _ in told] + ([BY_TEXT] if gpus or days else [])
    conflicts = []
    if told and told[0][0] == BY_ARTICLE and line.days is not None and line.days != told[0][2]:
        conflicts.append(f"its attribute duration_days states {line.days} days")
    if told and gpus and told[0][1] is not None and told[0][1] not in gpus:
        conflicts.append(f"its name or description names {', '.join(sorted(gpus))}")
    if told and variants and told[0][1] is not None:
        conflicts.append(f"its name or description names {', '.join(variants)}, a variant of the GPU (another "
                         "model)")
    if told and days and told[0][2] is not None and told[0][2] not in days:
        conflicts.append(f"its name or description states {' and '.join(f'{d} days' for d in sorted(days))}")
    if conflicts:
        way, g, d = told[0]
        conflicts.insert(0, f"its {way} {line.seller_id} tells {g}" + (f", {d} days" if d is not None else ""))
    return Identity(gpu, day, tuple(ways), "; ".join(conflicts))


def unidentified_reason(line: InvoiceLine, known: list[Known]) -> str:
    """Why no committed package is named: what each way found on the line, in the reader's terms."""
    text = f"{line.name} {line.description}"
    (gpus, variants), days = _named(text, known), named_days(text)
    registered = sorted({a for k in known for a in k.article_ids})
    article = (f"its seller's item ID {line.seller_id} is none of the provider's article IDs the protocol registers "
               f"({', '.join(registered)})" if line.seller_id and registered else
               f"its seller's item ID {line.seller_id} is no article ID the protocol registers (it registers none)"
               if line.seller_id else "it gives no seller's item ID")
    slug = "" if not line.seller_id else f", nor the slug of a committed GPU ({', '.join(k.gpu for k in known)})"
    said = ("its name and description name no committed GPU (slug or model name)" if not gpus else
            f"its name and description name several GPUs ({', '.join(sorted(gpus))})" if len(gpus) > 1 else
            f"its name and description name {next(iter(gpus))}")
    said += (" and no package duration (such as 7 days, 7 Tage, 7 jours, 7 天)" if not days else
             f" and several durations ({', '.join(str(d) for d in sorted(days))} days)" if len(days) > 1 else
             f" and {next(iter(days))} days")
    if variants:
        said += (f"; it names {', '.join(variants)}, a variant of a committed GPU: another model, which a line names "
                 "only when the tariffs list it")
    return f"{article}{slug}; {said}"
