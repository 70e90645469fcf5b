"""Edges of identifying an invoice line (generator.invoice.identify): a name in another case, a variant, two ways."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from generator.invoice.document import InvoiceLine
from generator.invoice.identify import (
    BY_ARTICLE,
    BY_SLUG,
    BY_TEXT,
    Identity,
    Known,
    _named,
    identify,
    named_days,
    unidentified_reason,
)

RTX = Known("rtx-4090", 7, "GeForce RTX 4090", ("IGPU-4090-7D",))
B200 = Known("b200", 7, None, ("IGPU-B200-7D",))
KNOWN = [RTX, B200]


def line(name: str = "", seller_id: str | None = None, days: int | None = None, description: str = "") -> InvoiceLine:
    return InvoiceLine(position=1, line_id="1", seller_id=seller_id, name=name, days=days, quantity=None, unit="C62",
                       unit_price=None, total=None, description=description)


def told(identity: Identity) -> tuple[str | None, int | None, tuple[str, ...]]:
    return identity.gpu, identity.days, identity.ways


def test_what_is_known_and_identified_is_a_frozen_value_complete_with_a_gpu_and_days() -> None:
    for value, name in ((RTX, "gpu"), (Identity("b200", 7, ()), "days")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, None)
    assert len({RTX, RTX, Identity("b200", 7, ())}) == 2
    assert [Identity(g, d, ()).complete for g, d in (("b200", 7), (None, 7), ("b200", None), (None, None))] == \
        [True, False, False, False]


@pytest.mark.parametrize(("text", "expected"), [
    ("GeForce RTX 4090, 7 days", ("rtx-4090", 7)), ("RTX 4090 package 7 days", ("rtx-4090", 7)),
    ("RTX4090 7 Tage", ("rtx-4090", 7)), ("rtx-4090 7 jours", ("rtx-4090", 7)), ("7 days, RTX 4090", ("rtx-4090", 7)),
    ("RTX 4090 d'une semaine, 7 jours", ("rtx-4090", 7)), ("RTX 4090 d\u2019une semaine, 7 jours", ("rtx-4090", 7)),
    ("RTX 4090 D, 7 days", (None, 7)), ("RTX 4090 D' 7 days", ("rtx-4090", 7)), ("RTX 4090 Ti 7 days", (None, 7)),
    ("GeForce RTX 4090 SUPER 7 days", (None, 7)), ("GB200 7 days", (None, 7)),
    ("B200 7 days or 30 days", ("b200", None)),
    ("B200 and RTX 4090, 7 days", (None, 7)), ("RTX 40 90 7 days", ("rtx-4090", 7)), ("7 days", (None, 7)),
    ("B200", ("b200", None))],
    ids=["model-name", "words-apart", "words-together", "slug", "name-last", "french-elision", "french-elision-2019",
         "variant-d", "d-apostrophe-after-space", "variant-ti", "variant-after-model-name", "inside-a-longer-word",
         "two-durations", "two-gpus", "split-otherwise-too", "days-only", "gpu-only"])
def test_a_line_is_identified_by_its_name_only_when_it_names_one_gpu_exactly(
        text: str, expected: tuple[str | None, int | None]) -> None:
    identity = identify(line(text), KNOWN)
    assert (identity.gpu, identity.days) == expected
    assert identity.ways == (BY_TEXT,) and identity.conflict == ""


@pytest.mark.parametrize(("text", "gpus", "variants"), [
    ("RTX 4090 D, 7 days", {"rtx-4090-d"}, []),
    ("RTX 4090, 7 days", {"rtx-4090"}, []),
    ("Paket GeForce RTX 4090 Ti, 7 days", set(), ["RTX 4090 Ti", "GeForce RTX 4090 Ti"]),
    ("RTX 4090 D und B200, 7 days", {"b200"}, ["RTX 4090 D"]),
    ("Großrechner RTX 4090 Ti, 7 Tage", set(), ["rtx 4090 ti"])],
    ids=["variant-committed", "shorter-named", "variant-as-written", "variant-beside-another-gpu",
         "text-longer-folded"])
def test_a_variant_is_shown_as_written_unless_a_committed_gpu_is_named_so(text: str, gpus: set[str],
                                                                       variants: list[str]) -> None:
    d = Known("rtx-4090-d", 7, "GeForce RTX 4090 D", ())
    assert _named(text, [RTX, d, B200] if "D," in text else KNOWN) == (gpus, variants)


@pytest.mark.parametrize(("known", "text", "gpus", "variants"), [
    ([Known("rtx-4090", 7, None, ()), Known("rtx-4090-pro", 7, None, ())], "RTX 4090 Pro, 7 days", {"rtx-4090-pro"},
     []),
    ([Known("rtx-4090", 7, None, ()), Known("geforce-rtx-4090", 7, None, ())], "GeForce RTX 4090 7 days",
     {"geforce-rtx-4090"}, []),
    ([Known("rtx-4090", 7, None, ()), Known("gpu-x", 7, "RTX 4090", ())], "Paket RTX 4090, 7 Tage",
     {"gpu-x", "rtx-4090"}, []),
    ([Known("rtx-4090", 7, None, ()), Known("gpu-x", 7, "RTX 4090", ())], "RTX 4090, 7 Tage", {"gpu-x", "rtx-4090"},
     []),
    ([Known("h100", 7, "NVIDIA H100 SXM5", ())], "H100 SXM5, 7 days", {"h100"}, []),
    ([Known("gpu-a", 7, "GeForce RTX 4090", ())], "GEFORCE RTX 4090, 7 days", {"gpu-a"}, []),
    ([Known("rtx-4090", 7, None, ()), Known("4090-d", 7, None, ())], "RTX 4090 D", {"4090-d"}, ["RTX 4090 D"]),
    ([Known("rtx-4090", 7, None, ()), Known("rtx", 7, None, ())], "RTX 4090 D", {"rtx"}, ["RTX 4090 D"])],
    ids=["longer-name-wins", "longer-name-wins-same-end", "same-name-two-gpus-not-first", "same-name-two-gpus",
         "variant-word-of-the-model-name", "model-name-in-capitals", "variant-overlapping-another-gpu",
         "variant-over-a-shorter-gpu"])
def test_a_name_inside_a_longer_one_counts_for_the_longer_and_the_same_name_for_both(
        known: list[Known], text: str, gpus: set[str], variants: list[str]) -> None:
    assert _named(text, known) == (gpus, variants)


@pytest.mark.parametrize(("text", "days"), [("7 days", {7}), ("30-Tage-Paket", {30}), ("3天", {3}),
                                            ("7 days, 30 days", {7, 30}), ("17 days", {17}), ("1.7 days", set())])
def test_the_durations_a_text_states(text: str, days: set[int]) -> None:
    assert named_days(text) == days


@pytest.mark.parametrize(("seller", "days", "name", "expected"), [
    ("IGPU-4090-7D", None, "", ("rtx-4090", 7, (BY_ARTICLE,))),
    ("igpu-4090-7d", None, "", ("rtx-4090", 7, (BY_ARTICLE,))),
    (" IGPU-B200-7D ", None, "", ("b200", 7, (BY_ARTICLE,))),
    ("RTX-4090", None, "package", ("rtx-4090", None, (BY_SLUG,))),
    (" rtx-4090 ", 7, "package", ("rtx-4090", 7, (BY_SLUG,))),
    ("h200", 7, "package", ("h200", 7, (BY_SLUG,))),
    ("h200", None, "package", (None, None, ())),
    ("", 7, "package", (None, None, ())),
    (None, 7, "B200 7 days", ("b200", 7, (BY_TEXT,))),
    ("b200", None, "B200 package", ("b200", None, (BY_SLUG, BY_TEXT))),
    ("b200", None, "package, 7 days", ("b200", 7, (BY_SLUG, BY_TEXT))),
    ("b200", 7, "B200 7 days", ("b200", 7, (BY_SLUG, BY_TEXT)))],
    ids=["article", "article-other-case", "article-spaced", "slug-other-case", "slug-spaced", "any-slug-with-days",
         "unknown-id-no-days", "empty-id", "name-only", "slug-and-name", "slug-and-days", "all-agree"])
def test_the_sellers_item_id_identifies_as_article_id_or_slug_in_any_case(
        seller: str | None, days: int | None, name: str, expected: tuple[Any, ...]) -> None:
    identity = identify(line(name, seller, days), KNOWN)
    assert told(identity) == expected and identity.conflict == ""


def test_an_article_id_registered_for_several_packages_tells_what_they_share() -> None:
    week, month = Known("b200", 7, None, ("IGPU-B200",)), Known("b200", 30, None, ("IGPU-B200",))
    assert told(identify(line("", "IGPU-B200"), [week, month])) == ("b200", None, (BY_ARTICLE,))
    assert told(identify(line("30 Tage", "IGPU-B200"), [week, month])) == ("b200", 30, (BY_ARTICLE, BY_TEXT))
    two = Known("h200", 7, None, ("IGPU-B200",))
    assert told(identify(line("B200, 7 days", "IGPU-B200"), [week, two])) == ("b200", 7, (BY_ARTICLE, BY_TEXT))


@pytest.mark.parametrize(("seller", "days", "name", "conflict"), [
    ("IGPU-4090-7D", 30, "", "its article ID IGPU-4090-7D tells rtx-4090, 7 days; its attribute duration_days states "
                             "30 days"),
    ("IGPU-4090-7D", None, "B200", "its article ID IGPU-4090-7D tells rtx-4090, 7 days; its name or description names "
                                   "b200"),
    ("IGPU-4090-7D", None, "RTX 4090 Ti", "its article ID IGPU-4090-7D tells rtx-4090, 7 days; its name or "
                                          "description names RTX 4090 Ti, a variant of the GPU (another model)"),
    ("IGPU-4090-7D", None, "3 days or 30 days", "its article ID IGPU-4090-7D tells rtx-4090, 7 days; its name or "
                                                "description states 3 days and 30 days"),
    ("b200", None, "RTX 4090 and H100", "its GPU slug b200 tells b200; its name or description names rtx-4090"),
    ("rtx-4090", None, "RTX 4090 Ti", "its GPU slug rtx-4090 tells rtx-4090; its name or description names RTX 4090 "
                                      "Ti, a variant of the GPU (another model)"),
    ("b200", 3, "B200, 7 days", "its GPU slug b200 tells b200, 3 days; its name or description states 7 days")],
    ids=["attribute-days", "name-gpu", "name-variant", "name-days", "slug-without-days", "slug-variant-without-days",
         "slug-with-days"])
def test_ways_that_disagree_are_a_conflict_naming_each(seller: str, days: int | None, name: str,
                                                       conflict: str) -> None:
    assert identify(line(name, seller, days), KNOWN).conflict == conflict


@pytest.mark.parametrize(("seller", "days", "name"), [
    ("IGPU-4090-7D", 7, "GeForce RTX 4090, 7 days"), ("b200", 7, "B200 7 days"), ("IGPU-4090-7D", None, "package"),
    ("h200", 7, "package 7 days"), ("h200", None, "7 days")],
    ids=["all-agree", "slug-agrees", "nothing-else", "unknown-gpu-and-days", "unknown-gpu-days-only"])
def test_ways_that_agree_or_tell_nothing_more_are_no_conflict(seller: str, days: int | None, name: str) -> None:
    assert identify(line(name, seller, days), KNOWN).conflict == ""


def test_an_article_id_for_several_gpus_tells_none_and_a_disagreeing_attribute_is_named_without_days() -> None:
    two = [Known("b200", 7, None, ("IGPU-X",)), Known("h200", 30, None, ("IGPU-X",))]
    identity = identify(line("H200 3 days", "IGPU-X", 7), two)
    assert told(identity) == ("h200", 3, (BY_ARTICLE, BY_TEXT))
    assert identity.conflict == "its article ID IGPU-X tells None; its attribute duration_days states 7 days"


@pytest.mark.parametrize(("seller", "name", "reason"), [
    (None, "package", "it gives no seller's item ID; its name and description name no committed GPU (slug or model "
                      "name) and no package duration (such as 7 days, 7 Tage, 7 jours, 7 天)"),
    ("X-1", "B200 and RTX 4090, 30 days", "its seller's item ID X-1 is none of the provider's article IDs the "
     "protocol registers (IGPU-4090-7D, IGPU-B200-7D), nor the slug of a committed GPU (rtx-4090, b200); its name "
     "and description name several GPUs (b200, rtx-4090) and 30 days"),
    ("X-1", "B200, 7 days, 30 days", "its seller's item ID X-1 is none of the provider's article IDs the protocol "
     "registers (IGPU-4090-7D, IGPU-B200-7D), nor the slug of a committed GPU (rtx-4090, b200); its name and "
     "description name b200 and several durations (7, 30 days)"),
    (None, "RTX 4090 D", "it gives no seller's item ID; its name and description name no committed GPU (slug or model "
     "name) and no package duration (such as 7 days, 7 Tage, 7 jours, 7 天); it names RTX 4090 D, a variant of a "
     "committed GPU: another model, which a line names only when the tariffs list it")],
    ids=["nothing", "two-gpus", "two-durations", "variant"])
def test_why_a_line_names_no_package_says_what_each_way_found(seller: str | None, name: str, reason: str) -> None:
    assert unidentified_reason(line(name, seller), KNOWN) == reason


def test_why_a_line_names_no_package_when_the_protocol_registers_no_article_id() -> None:
    bare = [Known("b200", 7, None, ())]
    assert unidentified_reason(line("7 days", "X-1"), bare) == (
        "its seller's item ID X-1 is no article ID the protocol registers (it registers none), nor the slug of a "
        "committed GPU (b200); its name and description name no committed GPU (slug or model name) and 7 days")
    assert unidentified_reason(line("B200"), bare).startswith("it gives no seller's item ID; its name and description "
                                                              "name b200 and no package duration")
