"""The `gpu-audit campaign` command: train the reference classifier and run a registered protocol."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.cli.seal import add_seal_options
from generator.core.errors import OutputExistsError, UsageError
from generator.core.termtext import counted

if TYPE_CHECKING:  # the GPU side is imported only when a command needs it
    from generator.gpu.campaign.campaign_inputs import CampaignConfig


def _learning_rates(text: str) -> list[float]:
    """--lrs: comma-separated positive finite numbers, checked before any work (a bad one is a usage error)."""
    import math

    rates = []
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        try:
            rate = float(item)
        except ValueError:
            rate = math.nan
        if not (math.isfinite(rate) and rate > 0):
            raise UsageError(f"--lrs: {item!r} is not a positive learning rate; give numbers such as 0.003,0.01,0.03")
        rates.append(rate)
    if not rates:
        raise UsageError("--lrs: give at least one learning rate, such as 0.003,0.01,0.03")
    return rates


def _cmd_train(args: argparse.Namespace) -> int:
    lrs = _learning_rates(args.lrs)
    from generator.core.system.safefiles import write_new_file
    from generator.gpu.models import textclf  # noqa: PLC0415 - needs torch

    out = Path(args.out_dir)
    if out.exists() or out.is_symlink():
        raise OutputExistsError(f"{out} already exists; choose a new folder (nothing is overwritten)")
    if not out.parent.is_dir():
        raise UsageError(f"the folder of {out} does not exist; create it first")
    blob, report = textclf.train(Path(args.train), Path(args.tune), seed=args.seed, lrs=lrs, epochs=args.epochs,
                                 buckets=args.buckets, dim=args.dim, context=args.context, limit=args.limit)
    out.mkdir()
    digest = textclf.save(blob, out / "model.pt")
    report["model_file"] = "model.pt"
    report["model_sha256"] = digest
    write_new_file(out / "tuning.json", (json.dumps(report, indent=2) + "\n").encode("utf-8"), what="tuning report")
    print(f"chosen: lr {report['chosen']['lr']}, {counted(int(report['chosen']['epochs']), 'epoch')}; tune macro-F1 "
          f"(fp32, batch 1) {report['tune_macro_f1_fp32_batch1']}, bootstrap sd "
          f"{report['tune_macro_f1_bootstrap']['sd']}")
    print(f"wrote {out / 'model.pt'} (sha256 {digest}) and {out / 'tuning.json'}")
    return 0


def _config(args: argparse.Namespace) -> CampaignConfig:
    from generator.gpu.campaign import campaign_run  # noqa: PLC0415

    return campaign_run.CampaignConfig(
        protocol=Path(args.protocol), model=args.model, corpus=Path(args.corpus[0]), device=args.device,
        out=Path(args.out), allow_cpu_for_tests=args.allow_cpu_for_tests,
        further_corpora=tuple(Path(c) for c in args.corpus[1:]))


NOT_SEALED = ("warning: the protocol is not sealed: `check` will call its registration \"declared, not sealed\" "
              "(registered_at is the protocol's word, and anyone could have changed the protocol, its threshold or "
              "its ID files after the runs). Seal it before the runs: give --key KEY.pem --cert CERT.pem --tsa URL "
              "here, or ")


def _sealing(args: argparse.Namespace) -> Any:
    """The seal of the run, checked before any work: the sealed folder the protocol lies in (each sealed file
    unchanged), or with --key a sealer; neither, a warning."""
    import sys

    from generator.cli import seal
    from generator.gpu.campaign.sealed_source import sealed_source

    sealer = seal.campaign_sealer(args)
    source = sealed_source(Path(args.protocol))
    if source is not None:
        print(f"sealed registration {source.root / 'registration.json'}: its {counted(len(source.files), 'file')} "
              "unchanged since sealed (size and SHA-256); its signature and token are verified by `check`, not here")
    elif sealer is None:
        print(NOT_SEALED + seal.WORKSTATION, file=sys.stderr)
    return source, sealer


def _cmd_run(args: argparse.Namespace) -> int:
    from generator.gpu.campaign import campaign_run  # noqa: PLC0415

    source, sealer = _sealing(args)
    result = campaign_run.run_campaign(_config(args), source=source, seal=sealer)
    print(_machine(result.environment))
    print(f"{'experiment/variant':<24} {'phase':<5} {'run':>3} {'outcome':<8} {'seconds':>10} {'quality':>9} "
          f"{'accepted':<8} {'peak_alloc':>12} {'peak_resv':>12}")
    for row in result.rows:
        print(f"{row['experiment_id'] + '/' + row['variant_id']:<24} {row['phase']:<5} {row['run_index']:>3} "
              f"{row['_outcome']:<8} {_blank(row['elapsed_seconds']):>10} {_blank(row['quality_value']):>9} "
              f"{str(row['corpus_accepted']).lower():<8} {_blank(row['peak_allocated_bytes']):>12} "
              f"{_blank(row['peak_reserved_bytes']):>12}")
    print(f"ran {result.started_at} to {result.ended_at} (UTC; every phase's started_at and ended_at are in the "
          "measurement JSON, and check proves them against the registration and the window)")
    print(f"wrote {result.out}; audit it with: gpu-audit check {result.out}")
    return 1 if result.failed_attempts else 0


def _machine(env: dict[str, Any]) -> str:
    """The summary's first line, in words: the GPU, torch, the runtime and the driver, or what is absent."""
    if not env.get("gpu_name"):
        return f"CPU (test run), no GPU driver, torch {env.get('torch_version') or 'unknown'}"
    runtime = " ".join(str(env[k]) for k in ("runtime", "runtime_version") if env.get(k)) or "runtime not reported"
    driver = f"driver {env['driver_version']}" if env.get("driver_version") else "driver version not read"
    return f"{env['gpu_name']} ({env['device']}), torch {env.get('torch_version') or 'unknown'}, {runtime}, {driver}"


def _blank(value: Any) -> Any:
    """An unmeasured cell of the summary table: empty, never 0."""
    return "" if value is None else value


def _cmd_prepare(args: argparse.Namespace) -> int:
    from generator.gpu.campaign import campaign_run  # noqa: PLC0415

    out = Path(args.out)
    files, filled = campaign_run.prepare_campaign(campaign_run.CampaignConfig(
        protocol=Path(args.protocol), model=args.model or "", corpus=Path(args.corpus[0]), device="", out=out,
        further_corpora=tuple(Path(c) for c in args.corpus[1:])))
    print(f"wrote {out}: {', '.join(files)}")
    for mistake in filled:  # the placeholders set: the registration is what protocol.json now says
        print(f"{out / 'protocol.json'}: set {', '.join(mistake.pointers)} to "
              f"{json.dumps(mistake.value, ensure_ascii=False)} ({mistake.what})")
    corpora = " ".join(f"--corpus {c}" for c in args.corpus)  # the folders given, in the order run needs them
    print(f"seal it here: gpu-audit register {out} --key KEY.pem --cert CERT.pem --tsa URL; then carry it, the "
          f"model and the {'corpora' if len(args.corpus) > 1 else 'corpus'} to the GPU machine and run: python3 -m "
          f"generator campaign run {out / 'protocol.json'} --model {args.model or 'MODEL'} {corpora} --device cuda:0 "
          "--out CAMPAIGN_DIR")
    return 0


def _cmd_cold(args: argparse.Namespace) -> int:
    from generator.gpu.campaign import campaign_run  # noqa: PLC0415

    campaign_run.cold_run_child(_config(args), args.experiment, args.variant, args.run_index, Path(args.predictions),
                                Path(args.result), Path(args.skip) if args.skip else None)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("protocol", metavar="PROTOCOL", help="the registered protocol.json (copied into the campaign)")
    p.add_argument("--model", required=True, metavar="MODEL",
                   help="a Hugging Face model directory (sequence classification, or sentence embedding with "
                        "gpu-audit-head.pt; loaded offline), a reference-classifier .pt file (from `campaign train`), "
                        "or module:function (a batch function: texts in, labels out); see docs/gpu.md")
    p.add_argument("--corpus", required=True, metavar="CORPUS", action="append",
                   help="folder with eval.jsonl or eval.csv (id, text) and eval-reference.csv (id,label), "
                        "expected-ids.csv (id) optional (docs/gpu.md); repeated for a protocol whose work is several "
                        "corpora: the protocol's corpus first, then one per entry of its corpora, in their order")
    p.add_argument("--device", required=True, metavar="DEVICE", help="explicit GPU device cuda:N")
    p.add_argument("--out", required=True, metavar="CAMPAIGN_DIR",
                   help="the campaign folder to create (must not exist)")
    p.add_argument("--allow-cpu-for-tests", action="store_true",
                   help="TEST ONLY: with --device cpu, run on the CPU and mark every row as a CPU test run "
                        "(never a GPU measurement)")


def _add_prepare(csub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `gpu-audit campaign prepare`."""
    pr = csub.add_parser(
        "prepare", help="write a campaign folder's registered files, for `gpu-audit register` to seal before the runs",
        description="Write OUT_DIR with what `campaign run` writes before its first phase and nothing else: "
        "protocol.json (PROTOCOL byte for byte, or with its placeholders set: the corpus's content fingerprint and "
        "size, and with --model the model's and tokenizer's revisions), the expected IDs and reference from CORPUS, "
        "the published tariffs and the subgroups' ID files. Seal it with `gpu-audit register OUT_DIR --key ... "
        "--cert ... --tsa URL` on the workstation, then run `campaign run OUT_DIR/protocol.json` on the GPU "
        "machine, which checks every "
        "sealed file and carries the seal into the campaign. Needs no GPU. A registered value that is not the files' "
        "is refused (exit 2) with the value to set.")
    pr.add_argument("protocol", metavar="PROTOCOL", help="the protocol.json to register")
    pr.add_argument("--corpus", required=True, metavar="CORPUS", action="append",
                    help="folder with eval.jsonl or eval.csv (id, text) and eval-reference.csv (id,label), "
                         "expected-ids.csv (id) optional (docs/gpu.md); repeated for several corpora: the protocol's "
                         "corpus first, then those of its corpora in their order")
    pr.add_argument("--model", metavar="MODEL",
                    help="the model `campaign run` will be given: its model and tokenizer revisions are written where "
                         "PROTOCOL holds a placeholder (a value that names no checksum)")
    pr.add_argument("--out", required=True, metavar="OUT_DIR", help="the folder to create (must not exist)")
    pr.set_defaults(handler=_cmd_prepare)


def _add_cold(csub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the internal `gpu-audit campaign _cold-run`."""
    c = csub.add_parser("_cold-run", help=argparse.SUPPRESS,
                        description="Internal: the cold run of one variant, in the fresh process `run` starts.")
    _common(c)
    c.add_argument("--experiment", required=True)
    c.add_argument("--variant", required=True)
    c.add_argument("--run-index", required=True, type=int)
    c.add_argument("--predictions", required=True)
    c.add_argument("--skip", help="a resumption: the interrupted attempt's prediction file (those texts are done)")
    c.add_argument("--result", required=True)
    c.set_defaults(handler=_cmd_cold)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `gpu-audit campaign` and its subcommands train, run and prepare."""
    p = sub.add_parser(
        "campaign", help="train the reference classifier, or run a registered protocol and write the campaign folder",
        description="Run the protocol for real: `train` fits the shipped reference classifier on the training "
        "split (tuned on the tuning split); `run` performs the registered warm-up, warm runs in rotated order "
        "and cold runs in fresh processes on one GPU (or data-parallel over a lot's GPUs), and writes a campaign "
        "folder that `gpu-audit check` audits. "
        "Exit 0 success, 1 an attempt failed (kept in the grid), 2 usage or environment error.")
    csub = p.add_subparsers(dest="campaign_command", metavar="SUBCOMMAND", required=True)

    r = csub.add_parser(
        "run", help="run the registered series on one GPU, or a lot's GPUs, and write the campaign folder",
        description="For each experiment of PROTOCOL (declared variable: batch, precision, context, seed or "
        "gpu_count): a "
        "cold run per variant in a fresh process (when registered), the registered warm-up, then the registered "
        "warm runs in the registered order (rotated, or drawn: drawn_sequence). "
        "Each run reads the corpus, tokenises, transfers, infers and materialises the predictions on "
        "the host between two device synchronisations; with gpu_count 2 or more, each pass is sharded over that many "
        "GPUs from --device on (torch.distributed; the labels gathered in input order). Writes protocol.json, "
        "expected-ids.csv, reference.csv, "
        "tarifs-forfaits.csv (published prices only), resultats-bruts.csv, one measurement JSON per variant "
        "and one prediction file per attempt; failures are kept (an out-of-memory batch is never retried "
        "smaller). Needs only the standard library, torch and numpy (transformers for a model "
        "directory). Without a GPU it exits 2 and writes nothing. The registration's seal: with --key (and --tsa) "
        "it seals the registered files as `gpu-audit register` does, before the first phase, and waits for the "
        "window (needs pyHanko); a PROTOCOL in a sealed folder (`campaign prepare`, then `register`) has every "
        "sealed file checked by size and SHA-256 before anything runs (its signature and token are `check`'s) and "
        "its seal carried into the campaign; neither, a warning that the registration is only declared.")
    _common(r)
    add_seal_options(r)
    r.set_defaults(handler=_cmd_run)

    _add_prepare(csub)

    _add_cold(csub)

    t = csub.add_parser(
        "train", help="train the reference classifier on the training split, tuned on the tuning split (CPU)",
        description="Seeded, deterministic training of the hashed uni+bigram bag classifier: learning rates and "
        "epochs are chosen by macro-F1 on the tuning split only; writes OUT_DIR/model.pt and tuning.json "
        "(the tuning grid, the fp32 batch-1 tune macro-F1 and its bootstrap spread).")
    t.add_argument("--train", required=True, metavar="TRAIN_JSONL", help="training split (id, text, label)")
    t.add_argument("--tune", required=True, metavar="TUNE_JSONL", help="tuning split (id, text, label)")
    t.add_argument("--out-dir", required=True, metavar="OUT_DIR", help="folder to create (must not exist)")
    t.add_argument("--seed", type=int, default=20261129, help="seed (default 20261129)")
    t.add_argument("--lrs", default="0.003,0.01,0.03", help="comma-separated Adam learning rates to try")
    t.add_argument("--epochs", type=int, default=12, help="maximum epochs per learning rate (default 12)")
    t.add_argument("--buckets", type=int, default=16384, help="hash buckets (default 16384)")
    t.add_argument("--dim", type=int, default=48, help="embedding width (default 48)")
    t.add_argument("--context", type=int, default=512, help="words kept per text (default 512)")
    t.add_argument("--limit", type=int, default=None, help="use only the first N records of each split (tests)")
    t.set_defaults(handler=_cmd_train)
