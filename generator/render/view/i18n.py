"""The note's languages: Babel's compiled gettext catalogues, and numbers, money and dates in the reader's ways."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import SupportsInt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel import Locale
from babel.dates import format_skeleton
from babel.numbers import format_currency, format_decimal
from babel.support import NullTranslations, Translations

from generator.core.errors import EnvironmentProblemError, UsageError
from generator.core.money import usd_decimal
from generator.core.system.fontconfig import font_files
from generator.core.system.resources import locale_dir

# The note's languages, as protocol.json and --lang name them, with the CLDR locale whose conventions it uses.
LANGUAGES = {"en": "en_US", "de": "de_DE", "fr": "fr_FR", "zh": "zh_Hans_CN"}
DEFAULT_LANGUAGE = "en"
DOMAIN = "messages"
# The font families the note's style sheet names per language: each must be installed, or the PDF would show
# empty boxes where the glyphs are missing.
BASE_FONTS = ("DejaVu Sans", "DejaVu Sans Mono")
FONTS = {"en": BASE_FONTS, "de": BASE_FONTS, "fr": BASE_FONTS, "zh": ("Noto Sans CJK SC", *BASE_FONTS)}
FONT_PACKAGES = {"DejaVu Sans": "fonts-dejavu-core", "DejaVu Sans Mono": "fonts-dejavu-core",
                 "Noto Sans CJK SC": "fonts-noto-cjk"}
DASH = "\u2014"
MIB, GIB = 2**20, 2**30


def checked_language(language: str | None) -> str:
    """The language code to render in: the one given, else English; an unknown code is a usage error."""
    if language is None:
        return DEFAULT_LANGUAGE
    if language not in LANGUAGES:
        raise UsageError(f"the note's language {language!r} is not one of {', '.join(LANGUAGES)}; "
                         "choose one of them")
    return language


def translations(language: str) -> NullTranslations:
    """The compiled catalogue of the language (English is the catalogues' source and needs none).

    Babel returns an empty catalogue for a missing .mo without a word; a note in English under a German
    heading would be the result, so a missing catalogue is an error that says how to compile it.
    """
    if language == DEFAULT_LANGUAGE:
        return NullTranslations()
    mo = locale_dir() / language / "LC_MESSAGES" / f"{DOMAIN}.mo"
    if not mo.is_file():
        raise EnvironmentProblemError(
            f"the {language} catalogue of the note is not compiled ({mo} is missing); install gpu-audit with "
            "`pip install .`, which compiles the catalogues, or run `pybabel compile -d generator/render/locale` "
            "in the source tree")
    with mo.open("rb") as handle:
        return Translations(handle, domain=DOMAIN)


def require_fonts(language: str) -> None:
    """Refuse to render when a font the language needs is not installed (fontconfig's `fc-list` says)."""
    for family in FONTS[language]:
        found = font_files(family)
        if found is None:
            raise EnvironmentProblemError("fontconfig's fc-list is not installed, so the note's fonts cannot be "
                                          "checked; install fontconfig (Debian: apt-get install fontconfig)")
        if not found:
            raise EnvironmentProblemError(
                f"the font {family!r}, which the {language} note needs, is not installed; install it (Debian: "
                f"apt-get install {FONT_PACKAGES[family]}) and render again")


def chart_words(catalogue: NullTranslations) -> dict[str, str]:
    """The charts' words in the note's language (generator.render.page.charts.ENGLISH names the same keys)."""
    _ = catalogue.gettext
    return {"warm_run": _("warm run"), "cold_run": _("cold run"), "warm_median": _("median warm time"),
            "elapsed": _("elapsed seconds per complete run (timer scope as registered)"),
            "failed_runs": _("failed runs: %(num)s (no duration)"), "failed": _("failed"),
            "peak_reserved": _("peak reserved"), "peak_allocated": _("peak allocated (part of reserved)"),
            "load": _("load"), "inputs": _("inputs"), "cold": _("cold"), "warmup": _("warm-up"),
            "warm_max": _("warm (max of %(num)s)"), "download": _("download"), "install": _("install"),
            "compile": _("compile")}


def metric_names(catalogue: NullTranslations) -> dict[str, str]:
    """Each registered metric (generator.core.metrics) as a reader of the note's language says it."""
    _ = catalogue.gettext
    return {"accuracy": _("accuracy"), "macro_f1": _("macro-F1"), "micro_f1": _("micro-F1"),
            "weighted_f1": _("weighted-F1"), "macro_f1_declared": _("macro-F1 over the declared classes"),
            "balanced_accuracy": _("balanced accuracy"), "min_recall": _("minimum per-class recall"),
            "matthews_corrcoef": _("Matthews correlation"), "cohen_kappa": _("Cohen's kappa")}


def metric_name_in(catalogue: NullTranslations) -> Callable[[object], str]:
    """The template filter `metric_name`: a metric's slug as the reader's name; an unknown one as written."""
    names = metric_names(catalogue)
    return lambda slug: names.get(str(slug), str(slug))


def protocol_words(catalogue: NullTranslations) -> dict[str, dict[str, str]]:
    """The protocol's enumerated values (protocol.schema.json) as a reader of the note's language says them: each
    declared variable, each run order, and each step the timer covers."""
    _ = catalogue.gettext
    return {"declared_variable": {"batch": _("the batch size"), "precision": _("the precision"),
                                  "context": _("the context limit"), "gpu_model": _("the GPU model"),
                                  "gpu_count": _("the number of GPUs"), "seed": _("the seed"),
                                  "input_order": _("the input order")},
            "run_order": {"rotated": _("rotated"), "drawn": _("drawn in advance")},
            "timer_step": {"read_corpus": _("reading the corpus"), "tokenization": _("tokenization"),
                           "transfer": _("transfer to the GPU"), "inference": _("inference"),
                           "materialize_predictions": _("the predictions brought back to the host"),
                           "evaluation": _("scoring"), "write_results": _("writing the results")}}


def protocol_filters(catalogue: NullTranslations) -> dict[str, Callable[[object], str]]:
    """The template filters `declared_variable`, `run_order` and `timer_step`: an enumerated value in words; None
    as a dash, and a value the schema does not know as written."""
    def wording(names: dict[str, str]) -> Callable[[object], str]:
        return lambda value: DASH if value is None else names.get(str(value), str(value))

    return {name: wording(names) for name, names in protocol_words(catalogue).items()}


def chart_fonts(language: str) -> list[str]:
    """The font families the charts draw with, in fallback order."""
    return ["DejaVu Sans", "Noto Sans CJK SC"] if language == "zh" else ["DejaVu Sans"]


@dataclass(frozen=True)
class Punctuation:
    """A full stop, the separators of a list (semicolon, comma), the parentheses of an aside and the colon that
    ends a label (the space after it is the template's), as the language writes them between words."""

    stop: str
    semi: str
    comma: str
    open: str
    close: str
    colon: str = ":"


LATIN_PUNCTUATION = Punctuation(stop=".", semi="; ", comma=", ", open=" (", close=")")
FRENCH_PUNCTUATION = Punctuation(stop=".", semi="; ", comma=", ", open=" (", close=")", colon="\u00a0:")
CHINESE_PUNCTUATION = Punctuation(stop="。", semi="；", comma="，", open="（", close="）", colon="：")


@dataclass(frozen=True)
class Formats:
    """The template filters of one language: each returns plain text (autoescaped), exact where it must be."""

    language: str

    @property
    def punctuation(self) -> Punctuation:
        """The marks that join translated pieces into a sentence: full-width in Chinese; in French, a colon after
        a no-break space."""
        return {"zh": CHINESE_PUNCTUATION, "fr": FRENCH_PUNCTUATION}.get(self.language, LATIN_PUNCTUATION)

    @property
    def locale(self) -> Locale:
        return Locale.parse(LANGUAGES[self.language])

    def usd(self, cents: object) -> str:
        """Cents (an integer, or a decimal string of cents such as '6903.33') as the reader writes US dollars:
        '2.071,00 USD' in German. Exact: the amount is a Decimal from the cents, never a float."""
        if cents is None:
            return DASH
        amount = usd_decimal(cents if isinstance(cents, str) else _int(cents))  # half up, as the terminal rounds
        pattern = self.locale.currency_formats["standard"].pattern.split(";")[0]
        if pattern.startswith("\u00a4"):
            pattern = "\u00a4\u00a4\u00a0" + pattern[1:]  # 'USD 2,071.00', never 'USD2,071.00'
        else:
            pattern = pattern.replace("\u00a4", "\u00a4\u00a4")
        return format_currency(amount, "USD", format=pattern, locale=self.locale, currency_digits=False)

    def number(self, value: object, digits: int = 0) -> str:
        """A number with the reader's separators and a fixed number of decimals; None as a dash."""
        if value is None:
            return DASH
        pattern = "#,##0" + ("." + "0" * digits if digits else "")
        return format_decimal(Decimal(str(value)), format=pattern, locale=self.locale, decimal_quantization=True)

    def count(self, value: object) -> str:
        """An integer with the reader's grouping; None as a dash."""
        return DASH if value is None else self.number(_int(value))

    def seconds(self, value: object) -> str:
        """Seconds with three decimals and the unit; None as a dash (not recorded)."""
        return DASH if value is None else f"{self.number(value, 3)}\u00a0s"

    def metric(self, value: object) -> str:
        """A metric value with four decimals; None as a dash."""
        return self.number(value, 4)

    def memory(self, value: object) -> str:
        """Bytes in the unit that keeps differences visible: MiB below 1 GiB, else GiB, two decimals."""
        if value is None:
            return DASH
        size = _int(value)
        if size < GIB:
            return f"{self.number(Decimal(size) / MIB, 2)}\u00a0MiB"
        return f"{self.number(Decimal(size) / GIB, 2)}\u00a0GiB"

    def nbytes(self, value: object) -> str:
        """Exact bytes with the reader's grouping; None as a dash."""
        return DASH if value is None else f"{self.count(value)}\u00a0B"

    def moment(self, value: object, timezone: str | None = None) -> str:
        """An ISO date-time (with or without offset) in the reader's form, in the given zone when it has one."""
        if value is None:
            return DASH
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        zone = _zone(timezone)
        if zone is None and when.tzinfo is not None:
            zone, timezone = ZoneInfo("UTC"), "UTC"  # a moment without the window's zone: said in UTC
        if when.tzinfo is None and zone is not None:
            when = when.replace(tzinfo=zone)  # a wall-clock time of the campaign window
        elif when.tzinfo is not None and zone is not None:
            when = when.astimezone(zone)
        joined = str(self.locale.datetime_formats["medium"])  # how the locale joins a date and a time: '{1}, {0}'
        text = joined.replace("{1}", format_skeleton("yMMMd", when, locale=self.locale)).replace(
            "{0}", format_skeleton("Hm", when, locale=self.locale))  # 24-hour, as the protocol writes times
        return f"{text} ({timezone})" if zone is not None else text

    def day(self, value: object) -> str:
        """An ISO date (a catalogue's snapshot date, say) in the reader's form: '24. Sept. 2026' in German; a text
        that is not an ISO date is shown as written."""
        if value is None:
            return DASH
        try:
            when = date.fromisoformat(str(value))
        except ValueError:
            return str(value)
        return format_skeleton("yMMMd", when, locale=self.locale)

    def filters(self) -> dict[str, Callable[[object], str]]:
        """The filters by name, for the Jinja2 environment."""
        return {"usd": self.usd, "number": self.number, "count": self.count, "seconds": self.seconds,
                "metric": self.metric, "memory": self.memory, "nbytes": self.nbytes, "moment": self.moment,
                "day": self.day}


def _int(value: object) -> int:
    """int() of what a filter is given: a number or its text (anything else is a TypeError, as int() says)."""
    if isinstance(value, str | SupportsInt):
        return int(value)
    raise TypeError(f"int() argument must be a string or a number, not {type(value).__name__!r}")


def _zone(name: str | None) -> ZoneInfo | None:
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None  # the window's zone was checked by the audit; a note never fails on it
