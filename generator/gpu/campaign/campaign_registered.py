"""What the protocol registers, held against the files before anything runs: the corpus's revision and size, the
model's and tokenizer's revisions. Each mistake is one line naming the protocol's fields (JSON pointers) and the
value to set; a placeholder (a value that names no checksum) is what `campaign prepare` fills in."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.errors import UsageError
from generator.core.revisions import is_immutable
from generator.core.system.safefiles import sha256_file
from generator.gpu.campaign.corpus_folder import FORM, CorpusFolder

# The form `campaign run` registered before content fingerprints: `<name>@sha256:<16 hex>`, the start of the texts
# file's SHA-256 (inputs/h200-campaign and inputs/minilm-campaign carry it); still accepted when it matches.
_TEXTS_SHA = re.compile(r".*@sha256:([0-9a-f]{16})", re.ASCII | re.DOTALL)
_CARRIED = re.compile(r"content-sha256:(.*)\Z", re.IGNORECASE | re.DOTALL)  # as audit's corpusprint
_DIGITS = re.compile(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{64}", re.ASCII)
REVISIONS = ("model_revision", "tokenizer_revision")


@dataclass(frozen=True)
class Mistake:
    """A registered value the files contradict: where it is written, what it holds, and the value to set."""

    what: str  # the files the value is about, in words
    pointers: tuple[str, ...]
    written: tuple[Any, ...]  # the values at those pointers, as the protocol holds them
    value: Any  # the value to set
    placeholder: bool  # the protocol holds no checksum there: `campaign prepare` may fill it in

    def line(self) -> str:
        """One line: the files' value, the fields and what they hold, the value to set."""
        held = ", ".join(f"{p} {json.dumps(w, ensure_ascii=False)}" for p, w in zip(self.pointers, self.written,
                                                                                   strict=True))
        kind = "a placeholder, no checksum" if self.placeholder else "not these files'"
        fields = "it" if len(self.pointers) == 1 else "each"
        return (f"{self.what} is {json.dumps(self.value, ensure_ascii=False)}; the protocol registers {held} "
                f"({kind}): set {fields} to {json.dumps(self.value, ensure_ascii=False)} before the runs")


def corpus_accepts(registered: str, fingerprint: str, texts_file: Path) -> bool | None:
    """Whether a registered revision names this corpus: its content fingerprint (all 64 hex digits or the first
    16, a name and `@` before it optional, as `check` reads it), or the older `<name>@sha256:<16 hex>` of the texts
    file. None: it names no checksum (a placeholder)."""
    carried = _CARRIED.search(registered)
    if carried is not None:
        digits = carried.group(1)
        return bool(_DIGITS.fullmatch(digits)) and fingerprint.removeprefix(FORM).startswith(digits.lower())
    old = _TEXTS_SHA.fullmatch(registered)
    if old is not None:
        return sha256_file(texts_file).startswith(old.group(1))
    return None


def corpus_mistakes(protocol: dict[str, Any], corpus: CorpusFolder, folder: Path) -> list[Mistake]:
    """/corpus/revision and each experiment's fixed.corpus_revision name this corpus (one value), and /corpus/size
    counts its expected IDs."""
    fingerprint = corpus.fingerprint
    fields = [("/corpus/revision", protocol["corpus"]["revision"])] + [
        (f"/experiments/{i}/fixed/corpus_revision", exp.get("fixed", {}).get("corpus_revision"))
        for i, exp in enumerate(protocol["experiments"])]
    # one value everywhere: the first that names this corpus, else its fingerprint
    target = next((v for _, v in fields if isinstance(v, str) and corpus_accepts(v, fingerprint, corpus.texts_file)),
                  fingerprint)
    wrong = [(p, v) for p, v in fields if v != target]
    out = []
    if wrong:
        placeholder = all(not isinstance(v, str) or corpus_accepts(v, fingerprint, corpus.texts_file) is None
                          for _, v in wrong)
        out.append(Mistake(f"the content fingerprint of {folder} (its expected IDs and reference labels)",
                           tuple(p for p, _ in wrong), tuple(v for _, v in wrong), target, placeholder))
    size = protocol["corpus"].get("size")
    if size != len(corpus.ids):
        out.append(Mistake(f"the number of texts in {corpus.texts_file}", ("/corpus/size",), (size,), len(corpus.ids),
                           placeholder=not isinstance(size, int)))
    return out


def model_revisions(spec: str, context: int) -> tuple[str, str] | None:
    """The revisions `campaign run` will record for `--model` at this context, read from its files before it is
    loaded; None for a factory `module:function`, whose object says its revisions only once built on the device."""
    path = Path(spec)
    if path.is_dir():
        from generator.gpu.models import hfmodel  # noqa: PLC0415 - hashes only; transformers is not imported

        return hfmodel.model_revision(path), hfmodel.tokenizer_revision(path)
    if path.is_file():
        from generator.gpu.models import textclf  # noqa: PLC0415

        return "sha256:" + sha256_file(path), textclf.saved_tokenizer_revision(path, context)
    from generator.gpu.models.loading import EntryPoint, load_model  # noqa: PLC0415 - imports the module only

    model = load_model(spec, "cpu", "float32", context) if ":" in spec and _is_batch_function(spec) else None
    return (model.revision, model.tokenizer_revision) if isinstance(model, EntryPoint) else None


def _is_batch_function(spec: str) -> bool:
    import importlib  # noqa: PLC0415
    import inspect  # noqa: PLC0415

    module, _, func = spec.partition(":")
    try:
        params = inspect.signature(getattr(importlib.import_module(module), func)).parameters
    except (ImportError, AttributeError, TypeError, ValueError):
        return True  # load_model says what is wrong with it
    return not (params and set(params) <= {"device", "dtype", "context"})


def model_mistakes(protocol: dict[str, Any], spec: str) -> list[Mistake]:
    """Each experiment's fixed model_revision and tokenizer_revision are the ones `--model`'s files have (at the
    experiment's context; not checked where context is the declared variable and the tokenizer names it)."""
    found: dict[str, list[tuple[str, Any, str]]] = {k: [] for k in REVISIONS}
    for i, exp in enumerate(protocol["experiments"]):
        fixed = exp.get("fixed", {})
        series = exp.get("variable") == "context"  # the reference classifier's tokenizer revision names its context
        computed = model_revisions(spec, int(exp["variants"][0]["value"] if series else fixed.get("context")))
        if computed is None:
            return []
        for key, value in zip(REVISIONS, computed, strict=True):
            if not is_immutable(key, value) and not protocol.get("synthetic_data"):
                raise UsageError(f"the model {spec} says its {key} is {json.dumps(value)}, which is no immutable "
                                 "revision (`check` refuses it): give it a revision attribute sha256:<64 hex> of its "
                                 "weights, or let it default to its module's SHA-256")
            if fixed.get(key) != value and not (key == "tokenizer_revision" and series and Path(spec).is_file()):
                found[key].append((f"/experiments/{i}/fixed/{key}", fixed.get(key), value))
    out = []
    for key, wrong in found.items():
        if wrong:
            placeholder = all(not isinstance(w, str) or not is_immutable(key, w) for _, w, _ in wrong)
            what = "the model's revision" if key == "model_revision" else "the tokenizer's revision"
            out.append(Mistake(f"{what} ({spec})", tuple(p for p, _, _ in wrong), tuple(w for _, w, _ in wrong),
                               wrong[0][2], placeholder))
    return out


def refuse(mistakes: list[Mistake]) -> None:
    """Exit 2 before any work, saying each mistake (the CLI prints the error as one line)."""
    if mistakes:
        raise UsageError("; ".join(m.line() for m in mistakes) + ".")


def set_pointer(document: dict[str, Any], pointer: str, value: Any) -> None:
    """Set the value at a JSON pointer of the protocol (its parents exist: the mistakes name fields read there)."""
    *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]
    node: Any = document
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[last] = value


def registration_mistakes(raw: bytes, corpus: CorpusFolder, folder: Path,
                          model: str) -> tuple[dict[str, Any] | None, list[Mistake]]:
    """The protocol read, and every value it registers that the corpus's and (given) the model's files contradict;
    (None, []) for a protocol too broken to compare, which make_plan then names."""
    try:
        protocol = json.loads(raw.decode("utf-8-sig"))
        return protocol, corpus_mistakes(protocol, corpus, folder) + (model_mistakes(protocol, model) if model else [])
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None, []


def unfillable(protocol: dict[str, Any]) -> list[str]:
    """`campaign prepare` without --model: the model and tokenizer revisions that are placeholders, one line each."""
    out = []
    for i, exp in enumerate(protocol["experiments"]):
        for key in REVISIONS:
            value = exp.get("fixed", {}).get(key)
            if not (isinstance(value, str) and is_immutable(key, value)) and not protocol.get("synthetic_data"):
                out.append(f"/experiments/{i}/fixed/{key} {json.dumps(value, ensure_ascii=False)} is a placeholder: "
                           "give --model MODEL to register its files' revision there, or write it")
    return out


def filled(raw: bytes, corpus: CorpusFolder, folder: Path, model: str) -> tuple[bytes, list[Mistake]]:
    """The protocol with its placeholders set to the files' values (the corpus's fingerprint and size, and with
    `model` its revisions), and what was set; a checksum that is not the files' is refused. The bytes are the
    file's own when nothing is set."""
    protocol, mistakes = registration_mistakes(raw, corpus, folder, model)
    if protocol is None:
        return raw, []
    refuse([m for m in mistakes if not m.placeholder])
    if not model:
        missing = unfillable(protocol)
        if missing:
            raise UsageError("; ".join(missing))
    for m in mistakes:
        for pointer in m.pointers:
            set_pointer(protocol, pointer, m.value)
    if not mistakes:
        return raw, []
    return (json.dumps(protocol, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), mistakes
