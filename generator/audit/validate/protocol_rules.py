"""Rules on protocol.json that need more than its schema: the paths it names, its window times, its classes, its
measurement links, its rentals and resume variants, its quality direction, each experiment's run order and variants,
and its model and tokenizer revisions (immutable)."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime

from generator.audit.load import names, rentals
from generator.audit.load.campaign import DEFAULT_FILES, PROTOCOL_FILE, CampaignFolder, template_example
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.load import CampaignInputs
from generator.audit.load.textsafety import FORMULA, FORMULA_FIX, FORMULA_RULE, formula_like, visible
from generator.core import instants
from generator.core.errors import UsageError
from generator.core.metrics import METRICS
from generator.core.revisions import IMMUTABLE, MOVING

FILE_ROLES = {"expected_ids": "expected IDs", "reference": "reference", "raw_results": "raw results",
              "tariffs": "tariffs"}
PATH_RULE = "paths stay inside the campaign folder"
E = Severity.ERROR
_NO_WAY_OUT = "without '..', an absolute start or a link out of the folder"


def check_paths(protocol: Protocol, file: str, folder: CampaignFolder, out: list[Finding]) -> None:
    """Every path the protocol names stays in the folder; one that leaves it is one finding, at its field.

    The loader then skips the file without a second finding, and the grid rows of a template that leaves the
    folder get none: the fix is in the protocol, not in the rows.
    """
    def outside(field: str, what: str, value: str, fix: str) -> None:
        out.append(make_finding("path-outside-campaign", Severity.ERROR, file, f"{what} leaves the campaign folder",
                                field=field, value=value, rule=PATH_RULE, fix=fix))

    for key, role in FILE_ROLES.items():
        rel = protocol.files.as_map()[key]
        if folder.resolve(rel) is None:
            outside(f"/files/{key}", f"{role} path {rel!r}", rel,
                    f"write files.{key} relative to the campaign folder (such as {DEFAULT_FILES[key]!r}), "
                    + _NO_WAY_OUT)
    pattern = protocol.files.predictions
    example = template_example(pattern)
    if folder.resolve(example) is None:
        outside("/files/predictions", f"the prediction file template {pattern!r} (a run's file would be {example!r})",
                pattern, f"write files.predictions relative to the campaign folder (such as "
                         f"{DEFAULT_FILES['predictions']!r}), " + _NO_WAY_OUT)
    for i, exp in enumerate(protocol.experiments):
        for j, variant in enumerate(exp.variants):
            linked = variant.measurement
            if linked and folder.resolve(linked) is None:
                outside(f"/experiments/{i}/variants/{j}/measurement", f"measurement path {linked!r}", linked,
                        "name the variant's measurement JSON relative to the campaign folder (such as "
                        f"'measurements/{exp.id}-{variant.id}.json'), " + _NO_WAY_OUT)
    for field, what, rel in protocol.id_files():
        if folder.resolve(rel) is None:
            outside(field, f"{what} path {rel!r}", rel,
                    f"name the {what} CSV relative to the campaign folder, " + _NO_WAY_OUT)


def check_local_time(where: str, value: str, tz: str, file: str, out: list[Finding]) -> None:
    """A window time in the spring gap or the autumn overlap of its zone: its hours would be 1 h off, silently."""
    issue = instants.local_time_issue(value, tz)
    if issue is None:
        return
    if issue.kind == "nonexistent":
        out.append(make_finding("window-time-nonexistent", Severity.ERROR, file,
                                f"{value} does not exist in {tz}: the clocks jump from {issue.utc_offsets[0]} to "
                                f"{issue.utc_offsets[1]} across it (it would be read as {issue.read_as})", field=where,
                                value=value, rule=f"a local time that exists in {tz}",
                                fix=f"write a time outside the daylight-saving gap, such as {issue.read_as}"))
    else:
        out.append(make_finding("window-time-ambiguous", Severity.ERROR, file,
                                f"{value} occurs twice in {tz} (offsets {issue.utc_offsets[0]} and "
                                f"{issue.utc_offsets[1]}: {issue.read_as}); the window's hours would be 1 h off",
                                field=where, value=value,
                                rule=f"a local time that occurs once in {tz}",
                                fix=f"write the offset that is meant ({value}{issue.utc_offsets[0]} or "
                                    f"{value}{issue.utc_offsets[1]}), a time outside the repeated hour, or the "
                                    "window in UTC (timezone UTC)"))


def check_classes(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """A class a spreadsheet would run as a formula: one warning here, where every label cell repeats it."""
    for i, name in enumerate(protocol.classes):
        if formula_like(name):
            out.append(make_finding(FORMULA, Severity.WARNING, file,
                                    f"class {visible(name)[:60]!r} starts with {name[0]!r}: a spreadsheet opening "
                                    "a reference or prediction file would run its labels as formulas",
                                    field=f"/classes/{i}", value=name, rule=FORMULA_RULE, fix=FORMULA_FIX))


def check_measurement_links(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """Each variant links its measurement: a configuration that can be the answer, or that the answer is compared
    with, rests on measured runs.

    A variant without one has no dated runs, no measured durations and no memory, outcome or GPU evidence to
    contradict its grid rows: every claim it makes could have been typed by hand. It is an error on that
    configuration, whether or not its neighbours were measured.
    """
    variants = [(i, j, exp, v) for i, exp in enumerate(protocol.experiments) for j, v in enumerate(exp.variants)]
    measured = sum(1 for _, _, _, v in variants if v.measurement)
    for i, j, exp, v in variants:
        if not v.measurement:
            beside = ("while the campaign's other variants do" if measured else
                      "and no variant of the campaign does")
            out.append(make_finding("measurement-not-linked", Severity.ERROR, file,
                                    f"variant {exp.id}/{v.id} links no measurement JSON ({beside}): its runs' "
                                    "times, durations, memory and environment rest on the grid alone",
                                    field=f"/experiments/{i}/variants/{j}/measurement",
                                    rule="every configuration that can be the answer, or that it is compared "
                                         "with, rests on a measurement of its own runs, with dated phases",
                                    fix=f"measure {exp.id}/{v.id} with `gpu-audit campaign run` or `gpu-audit "
                                        "measure run`, which date every phase, and name the file in the variant's "
                                        "`measurement` field; the Lab's `mesure_memoire.py measure` output is not "
                                        "enough (it measures its synthetic MLP and dates no phase)"))


def check_rentals(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """Each rental once (a shared one at its entry in `rentals`): one that lists its consecutive periods and also
    gives duration_days names the first period there; its article IDs, if any, are one per package; and a rental
    of `rentals` is named by an experiment (generator.audit.load.rentals)."""
    for where, rental, users in rentals.listed_rentals(protocol):
        who = f"the rental {rental.id!r}" if rental.id is not None else f"experiment {users[0].id!r}"
        written = rental.written_duration_days
        if len(rental.periods) > 1 and written is not None and written != rental.periods[0]:
            out.append(make_finding(
                "rental-periods-mismatch", Severity.ERROR, file, f"{who} rents the periods "
                f"{rental.label} days but gives duration_days {written}", field=f"{where}/duration_days",
                claimed=written, recomputed=rental.periods[0],
                rule="duration_days is the first of the periods; the committed package is all of them",
                fix=f"write duration_days {rental.periods[0]}, or leave it out and keep periods"))
        articles = rental.article_ids
        if articles is not None and len(articles) != len(rental.periods):
            out.append(make_finding(
                "rental-article-ids-mismatch", Severity.ERROR, file, f"{who} rents "
                f"{len(rental.periods)} package(s) ({rental.label} days) but lists {len(articles)} article ID(s)",
                field=f"{where}/article_ids", claimed=len(articles), recomputed=len(rental.periods),
                rule="the provider's article IDs name the packages one by one, in order",
                fix=f"list {len(rental.periods)} article ID(s), one per package in order, or leave article_ids out"))
    out.extend(rentals.use_findings(protocol))


_RESUME_RULE = ("a resume setting is a variant of its own, resuming the interrupted attempts of another variant of "
                "its experiment, with that variant's value")


def check_resumes(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """A resume variant resumes another variant of its experiment, one that is not itself a resume variant, and
    declares its value: it is that variant with its resume setting."""
    for i, exp in enumerate(protocol.experiments):
        plain = {v.id: v for v in exp.variants if v.resume is None}
        for j, v in enumerate(exp.variants):
            if v.resume is None:
                continue
            of = plain.get(v.resume.of)
            if of is not None:
                if v.value != of.value:
                    out.append(make_finding(
                        "resume-of-invalid", Severity.ERROR, file,
                        f"variant {exp.id}/{v.id} resumes variant {of.id}, but declares {exp.variable} {v.value!r} "
                        f"where {of.id} declares {of.value!r}: a resumption continues the same configuration",
                        field=f"/experiments/{i}/variants/{j}/value", claimed=v.value, recomputed=of.value,
                        rule=_RESUME_RULE,
                        fix=f"declare {of.id}'s value ({of.value!r}) for {v.id}; another value is a variant of "
                            "its own, run from the start"))
                continue
            why = ("is itself a resume variant" if v.resume.of in {w.id for w in exp.variants}
                   else f"is no variant of experiment {exp.id!r}")
            out.append(make_finding(
                "resume-of-invalid", Severity.ERROR, file,
                f"variant {exp.id}/{v.id} resumes variant {v.resume.of!r}, which {why}",
                field=f"/experiments/{i}/variants/{j}/resume/of", value=v.resume.of, rule=_RESUME_RULE,
                fix=f"name in resume.of the variant whose interrupted attempts {v.id} resumes (one of: "
                    f"{', '.join(sorted(plain)) or 'none'})"))


def check_direction(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """The registered direction is the metric's own (generator.core.metrics): a score registered lower_is_better
    would reject every run that does well (and accept one that does badly), silently; the protocol is refused."""
    quality = protocol.quality
    own = METRICS.get(quality.metric)
    if own is None or quality.direction == own.direction:
        return
    out.append(make_finding(
        "quality-direction-contradicts-metric", Severity.ERROR, file,
        f"quality.direction is {quality.direction}, but {own.name} ({quality.metric}) is "
        f"{own.direction.replace('_', ' ')} ({own.high:g} is every text right): every run that does well would be "
        "rejected", field="/quality/direction", claimed=quality.direction, recomputed=own.direction,
        rule="the registered direction is the metric's own, as gpu-audit's registry of metrics gives it",
        fix=f'write "direction": "{own.direction}" in protocol.json\'s quality, with the threshold as the lowest '
            "acceptable value"))


def check_run_order(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """Every experiment registers its run order: without one, runs blocked by variant (b1 b1 ... b4 ... b8) could
    not be told from rotated ones, and drift in time could favour a variant unseen."""
    for i, exp in enumerate(protocol.experiments):
        if exp.order is not None:
            continue
        out.append(make_finding(
            "run-order-missing", Severity.ERROR, file, f"experiment {exp.id!r} registers no run order (its order "
            "field is absent): nothing says which order its warm runs were to follow, so none can be checked",
            field=f"/experiments/{i}/order",
            rule="each experiment registers its run order before the runs: rotated, or drawn with its sequence",
            fix=f'register "order": "rotated" in experiment {exp.id!r} (1-4-8, 4-8-1, 8-1-4, ...), or the order '
                'that was followed ("drawn" with its drawn_sequence); an order chosen after the runs is no order: '
                "measure again after registering it if the runs followed none"))


_REVISION_FIX = ("write the 40-hex commit the files were downloaded at (the Hub snapshot folder's name), "
                 "sha256:<64 hex> of the weights file, or sha256sum:<64 hex> of the `sha256sum` listing of its files "
                 "(what `gpu-audit campaign run` writes), in protocol.json, the grid and the measurements alike; "
                 "`gpu-audit campaign prepare PROTOCOL --corpus CORPUS --model MODEL` writes the model's own into a "
                 "new registration")


def check_revisions(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """Each experiment's model and tokenizer revisions are immutable: a moving name (main, latest, v1) is an error
    wherever it is written; a synthetic campaign (synthetic_data true) may name its stand-ins, never by a moving
    name, since nothing else it writes is a measurement of a real model."""
    for i, exp in enumerate(protocol.experiments):
        for key, pattern in IMMUTABLE.items():  # one rule with `campaign run` (core.revisions)
            value: str = getattr(exp.fixed, key)
            moving = MOVING.fullmatch(value.strip()) is not None
            if pattern.fullmatch(value) or (protocol.synthetic_data and not moving and value.strip()):
                continue
            why = ("a name that moves: the files it points at change without the name changing" if moving else
                   "not an immutable revision: nothing proves which files it names")
            out.append(make_finding(
                "revision-not-immutable", Severity.ERROR, file, f"experiment {exp.id!r} registers fixed.{key} "
                f"{visible(value)!r}, {why}", field=f"/experiments/{i}/fixed/{key}", value=value,
                rule="a model or tokenizer revision is immutable: a 40-hex commit, sha256:<64 hex>, sha256sum:<64 "
                     "hex>, or the forms `campaign run` writes",
                fix=_REVISION_FIX))


def check_experiments(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """Experiment and variant ids unique, variants that differ, one registered corpus."""
    seen_experiments: set[str] = set()
    for i, exp in enumerate(protocol.experiments):
        where = f"/experiments/{i}"
        if exp.id in seen_experiments:
            out.append(make_finding("duplicate-experiment", E, file, f"experiment id {exp.id!r} is declared twice",
                                    field=f"{where}/id", value=exp.id, fix="give each experiment its own id"))
        seen_experiments.add(exp.id)
        ids = [v.id for v in exp.variants]
        values = [v.value for v in exp.variants if v.resume is None]  # a resume variant repeats its variant's
        for dup in sorted({v for v in ids if ids.count(v) > 1}):
            out.append(make_finding("duplicate-variant", E, file, f"variant id {dup!r} is declared twice",
                                    field=f"{where}/variants", value=dup, fix="give each variant its own id"))
        if len({_variant_key(exp.variable, v) for v in values}) != len(values):
            out.append(make_finding("duplicate-variant-value", E, file,
                                    f"two variants share a value of the declared variable {exp.variable!r}",
                                    field=f"{where}/variants", value=values, fix="each variant changes the variable"))
        if exp.fixed.corpus_revision != protocol.corpus.revision:
            out.append(make_finding("corpus-revision-mismatch", E, file,
                                    "the experiment's fixed corpus_revision differs from corpus.revision",
                                    field=f"{where}/fixed/corpus_revision", value=exp.fixed.corpus_revision,
                                    rule="one registered corpus", fix="use the corpus revision registered above"))


def _variant_key(variable: str, value: object) -> str:
    """A variant's value as its runs are told apart: an input order as its measurement is compared (case and
    spacing aside), any other value as written."""
    return " ".join(str(value).split()).casefold() if variable == "input_order" else str(value)


def check_times(protocol: Protocol, file: str, out: list[Finding]) -> None:
    """Registration, window and deadline are real moments of a real zone, the window's end after its start."""
    if instants.parse_utc(protocol.registered_at) is None:
        out.append(make_finding("window-out-of-range", E, file,
                                f"registered_at {protocol.registered_at!r} is not a real date and time",
                                field="/registered_at", value=protocol.registered_at,
                                rule="ISO 8601 with offset", fix="write it as YYYY-MM-DDTHH:MM:SS+HH:MM"))
    window = protocol.window
    try:
        zoneinfo.ZoneInfo(window.timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        out.append(make_finding("unknown-timezone", E, file, f"{window.timezone!r} is not an IANA time zone",
                                field="/window/timezone", value=window.timezone, rule="IANA time zone database",
                                fix="use a name such as Europe/Paris or UTC"))
        return
    placed: dict[str, datetime] = {}
    for where, value in (("/window/start", window.start), ("/window/end", window.end),
                         ("/deadline", protocol.deadline)):
        try:
            moment = (instants.deadline_instant if where == "/deadline" else instants.parse_local)(value,
                                                                                                 window.timezone)
            placed[where] = moment.astimezone(UTC)
        except (UsageError, OverflowError):
            out.append(make_finding("window-out-of-range", E, file,
                                    f"{value!r} cannot be placed on the timeline of {window.timezone}",
                                    field=where, value=value,
                                    rule="a real local date-time", fix="write a real date as YYYY-MM-DDTHH:MM"))
        else:
            check_local_time(where, value, window.timezone, file, out)
    start, end = placed.get("/window/start"), placed.get("/window/end")
    if start is not None and end is not None and end <= start:  # instants: text would misorder offsets
        out.append(make_finding("empty-window", E, file, "the campaign window ends before it starts",
                                field="/window/end", value=window.end, fix="correct the window's start and end"))


def paths(inputs: CampaignInputs) -> list[Finding]:
    """The paths protocol.json names stay in the folder (`check_paths`), and each can be copied into the bundle
    (names.check_names, which does not repeat a path already found leaving the folder)."""
    out: list[Finding] = []
    if inputs.protocol is not None:
        check_paths(inputs.protocol, PROTOCOL_FILE, inputs.folder, out)
        names.check_names(inputs.protocol, PROTOCOL_FILE, out)  # names the bundle's manifests could not carry back
    return out
