"""The note's gettext catalogues: every message of the templates and code in each language, none stale, all compiled."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from generator.cli.options import NOTE_LANGUAGES
from generator.render.view.i18n import DEFAULT_LANGUAGE, LANGUAGES

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "generator" / "render" / "locale"
TRANSLATED = sorted(set(LANGUAGES) - {DEFAULT_LANGUAGE})
PLACEHOLDER = re.compile(r"%\((\w+)\)s|\{(\w+)\}")


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The messages `pybabel extract` finds now, with the project's mapping (babel.cfg), as docs/languages.md says."""
    pot = tmp_path_factory.mktemp("pot") / "messages.pot"
    pybabel = Path(sys.executable).parent / "pybabel"
    subprocess.run([str(pybabel), "extract", "-F", "babel.cfg", "-o", str(pot), "--no-location", "--omit-header",
                    "."], cwd=ROOT, check=True, capture_output=True)
    with pot.open("rb") as handle:
        return read_po(handle)


def _po(language: str) -> Catalog:
    with (LOCALE / language / "LC_MESSAGES" / "messages.po").open("rb") as handle:
        return read_po(handle, locale=language)


def _key(value: object) -> object:
    return tuple(value) if isinstance(value, list | tuple) else value


def _ids(catalog: Catalog) -> set[str]:
    return {m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id}


def test_the_cli_offers_the_languages_the_note_has() -> None:
    assert set(NOTE_LANGUAGES) == set(LANGUAGES)


def test_extraction_finds_the_templates_words(extracted: Catalog) -> None:
    ids = _ids(extracted)
    assert "Question as registered:" in ids and "yes" in ids and "warm run" in ids  # template, filter, chart word
    assert len(ids) > 150


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_catalogue_has_every_message_and_no_stale_one(language: str, extracted: Catalog) -> None:
    catalog = _po(language)
    missing = _ids(extracted) - _ids(catalog)
    stale = (_ids(catalog) - _ids(extracted)) | {m.id for m in catalog.obsolete.values()}
    assert not missing, f"{language}: messages without a translation entry (run pybabel update): {sorted(missing)}"
    assert not stale, f"{language}: stale messages no template or code uses: {sorted(stale)}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_is_translated_with_its_placeholders(language: str) -> None:
    for message in _po(language):
        if not message.id:
            continue
        ids = [message.id] if isinstance(message.id, str) else list(message.id)
        strings = [message.string] if isinstance(message.string, str) else list(message.string or ())
        assert all(strings) and not message.fuzzy, f"{language}: {ids[0]!r} is not translated"
        wanted = {a or b for a, b in PLACEHOLDER.findall(ids[-1])}
        for text in strings:
            found = {a or b for a, b in PLACEHOLDER.findall(text)}
            # a singular may leave out the count ("one lot"); nothing else may be missing or added
            assert found <= wanted and wanted - found <= {"num"}, f"{language}: {ids[0]!r} -> {text!r}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_compiled_catalogue_is_the_current_one(language: str) -> None:
    mo = LOCALE / language / "LC_MESSAGES" / "messages.mo"
    assert mo.is_file(), f"{mo} is missing: `pip install .` compiles it (setup.py), or run pybabel compile"
    with mo.open("rb") as handle:
        compiled = {_key(m.id): _key(m.string) for m in read_mo(handle) if m.id}
    source = {_key(m.id): _key(m.string) for m in _po(language) if m.id}
    assert compiled == source, f"{mo} is older than its .po: reinstall (`pip install .`) or run pybabel compile"


def test_plural_forms_follow_each_language() -> None:
    assert _po("de").plural_expr == "(n != 1)"
    assert _po("fr").plural_expr == "(n > 1)"
    assert _po("zh").num_plurals == 1
