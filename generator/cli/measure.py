"""The `gpu-audit measure` command: estimate weights, report the environment, measure the synthetic MLP."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from generator import __version__
from generator.core.termtext import counted
from generator.gpu.measure import environment, estimate, measure

MIB = 2**20

_MEMORY_NOTE = (
    "Counters cover only this process's PyTorch allocator on the chosen device, not the whole GPU, "
    "the driver or other processes. allocated is part of reserved: never add them; the two peaks may "
    "be reached at different moments: never subtract them. Times include Python overhead and "
    "synchronisation; they are not isolated kernel times."
)


def _fmt(value: Any) -> str:
    return "null" if value is None else str(value)


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / MIB:.2f}"


def _cmd_estimate(args: argparse.Namespace) -> int:
    parameters = estimate.parse_parameter_count(args.parameters)
    reserve = estimate.parse_reserve_gib(args.reserve_gib)
    est = estimate.estimate_weights(parameters, args.bits, reserve)
    if args.json:
        print(json.dumps(est.to_dict(), indent=2))
        return 0
    r2 = estimate.round2
    print(f"Weights: {est.parameters:,} parameters x {counted(est.bytes_per_parameter, 'byte')} per parameter "
          f"({est.bits} bits rounded up to whole bytes)")
    print(f"         = {est.weight_bytes:,} bytes = {r2(est.weight_gib)} GiB (1 GiB = 2**30 bytes) "
          f"= {r2(est.weight_gb)} GB (1 GB = 10**9 bytes)")
    if est.reserve_gib:
        print(f"Reserve: {est.reserve_gib} GiB, an assumption given on the command line, not a measurement")
        print(f"Total:   {r2(est.total_gib)} GiB = {r2(est.total_gb)} GB (weights + assumed reserve)")
    else:
        print("Reserve: none given (--reserve-gib); the total is the weights alone")
    print("Not included: " + ", ".join(est.not_included) + ".")
    print("This is arithmetic on the weights only: it does not predict whether a real model fits on a card.")
    return 0


def _print_environment(env: dict[str, Any]) -> None:
    gib = env.get("gpu_total_memory_bytes")
    memory = "null" if gib is None else f"{gib} bytes ({gib / estimate.GIB:.2f} GiB)"
    print(f"python:          {env['python_version']}")
    print(f"torch:           {_fmt(env['torch_version'])}")
    print(f"runtime:         {_fmt(env['runtime'])} {_fmt(env['runtime_version'])} (build version, not the driver)")
    print(f"driver:          {_fmt(env['driver_version'])} (read from nvidia-smi)")
    print(f"device:          {env['device']}")
    print(f"gpu available:   {str(env['gpu_available']).lower()}")
    if not env["gpu_available"]:
        print(f"reason:          {env['unavailable_reason']}")
    print(f"gpu name:        {_fmt(env['gpu_name'])}")
    print(f"gpu memory:      {memory}")
    print(f"visible devices: {_fmt(env['visible_device_count'])}")


def _cmd_environment(args: argparse.Namespace) -> int:
    output = Path(args.output) if args.output else None
    if output is not None:
        measure.check_new_output(output)
    env = environment.collect_environment(args.device)
    if output is not None:
        measure.write_new_json(output, {"tool": f"gpu-audit {__version__} measure environment",
                                        "environment": env})
    if args.json:
        print(json.dumps(env, indent=2))
    else:
        _print_environment(env)
    if output is not None:  # under --json stdout holds the one JSON object, so the note goes to stderr
        print(f"wrote {output}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    config = measure.RunConfig(device=args.device, batch=args.batch, context=args.context, width=args.width,
                               dtype=args.dtype, warmup=args.warmup, repeats=args.repeats, seed=args.seed)
    output = Path(args.output)
    measure.check_new_output(output)
    result = measure.run_measurement(config)
    measure.write_new_json(output, result.document)
    env = result.document["environment"]
    model = result.document["synthetic_model"]
    print(f"{env['gpu_name']} ({config.device}), torch {env['torch_version']}, "
          f"{env['runtime']} {env['runtime_version']}, driver {_fmt(env['driver_version'])}")
    print(f"model: {model['architecture']}, {model['parameter_count']:,} parameters, {config.dtype}, "
          f"input {model['input_shape']}")
    print(f"{'phase':<13} {'rep':>3} {'status':<6} {'seconds':>11} {'base_alloc':>11} {'base_resv':>11} "
          f"{'final_alloc':>11} {'final_resv':>11} {'peak_alloc':>11} {'peak_resv':>11}  (MiB)")
    for row in result.phases:
        seconds = "-" if row["elapsed_seconds"] is None else f"{row['elapsed_seconds']:.6f}"
        print(f"{row['phase']:<13} {_fmt(row['repeat']) if row['repeat'] else '':>3} {row['status']:<6} "
              f"{seconds:>11} {_mib(row['baseline_allocated_bytes']):>11} {_mib(row['baseline_reserved_bytes']):>11} "
              f"{_mib(row['final_allocated_bytes']):>11} {_mib(row['final_reserved_bytes']):>11} "
              f"{_mib(row['peak_allocated_bytes']):>11} {_mib(row['peak_reserved_bytes']):>11}")
        if row["error"]:
            print(f"  error: {row['error']}")
    summary = measure.warm_forward_summary(result.phases)
    if summary:
        print(f"warm_forward: median {summary['median_seconds']:.6f} s, min {summary['min_seconds']:.6f} s, "
              f"max {summary['max_seconds']:.6f} s over {counted(int(summary['count']), 'repeat')}")
    stamps = [t for row in result.phases for t in (row.get("started_at"), row.get("ended_at")) if t]
    if stamps:
        print(f"ran {min(stamps)} to {max(stamps)} (UTC; each phase's started_at and ended_at are in the file)")
    print(_MEMORY_NOTE)
    if result.failed:
        print(f"wrote {output}; a phase failed and the phases after it were not run")
        return 1
    print(f"wrote {output}")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `gpu-audit measure` and its subcommands estimate, environment and run."""
    p = sub.add_parser(
        "measure",
        help="estimate weight memory, report the GPU environment, or measure the Lab's synthetic MLP",
        description="The IteraGPU Lab's memory tools. `estimate` needs no GPU; `environment` is a diagnosis "
        "that may report an unavailable GPU; `run` measures on one GPU only and never falls back to the CPU. "
        "Exit 0 success, 1 a measured phase failed (file still written), 2 usage or environment error.",
    )
    msub = p.add_subparsers(dest="measure_command", metavar="SUBCOMMAND", required=True)

    e = msub.add_parser(
        "estimate",
        help="memory of the weights alone, from a parameter count and bits per parameter (no GPU)",
        description="Round the bits up to whole bytes per parameter, multiply, convert to GiB (2**30 bytes) "
        "and GB (10**9 bytes), and add an optional reserve that is an assumption, not a measurement. "
        "Activations, KV cache, quantisation metadata, gradients, optimiser state and libraries are not "
        "included; the result does not predict whether a real model fits.",
    )
    e.add_argument("--parameters", required=True, metavar="N", help="number of parameters, e.g. 7000000000 or 7e9")
    e.add_argument("--bits", required=True, type=int, metavar="B", help="bits per parameter, e.g. 16")
    e.add_argument("--reserve-gib", default="0", metavar="R",
                   help="an assumed reserve in GiB added to the weights (default 0)")
    e.add_argument("--json", action="store_true", help="print the estimate as JSON")
    e.set_defaults(handler=_cmd_estimate)

    v = msub.add_parser(
        "environment",
        help="report Python, PyTorch, runtime, driver and the GPU seen at a device (exit 0 even without GPU)",
        description="Report the Python and PyTorch versions, the CUDA/HIP build version, whether the device is "
        "an accessible GPU, its name and memory as the runtime reports them, the visible device count and "
        "the driver version read separately from nvidia-smi (amd-smi, then rocm-smi, under ROCm). No environment "
        "variables or personal data.",
    )
    v.add_argument("--device", default="cuda:0", help="explicit device cuda:N (default cuda:0)")
    v.add_argument("--output", metavar="FILE", help="also write the report as JSON to FILE (must not exist)")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.set_defaults(handler=_cmd_environment)

    r = msub.add_parser(
        "run",
        help="measure time and allocator memory of the synthetic Linear -> GELU -> Linear, phase by phase",
        description="Measure the synthetic MLP Linear(W, 4W) -> GELU -> Linear(4W, W) on inputs "
        "[batch, context, width] on one GPU, without autocast or gradients: phases model_load, inputs, "
        "cold_forward, warmup and one warm_forward per repeat. Writes a new JSON file (measurement schema); "
        "refuses an existing one. Without PyTorch or an accessible GPU: exit 2, no file, no CPU fallback. "
        "The synthetic MLP is not an LLM and not representative of any workload.",
    )
    r.add_argument("--device", required=True, help="explicit GPU device cuda:N, e.g. cuda:0")
    r.add_argument("--batch", required=True, type=int, help="batch size (>= 1)")
    r.add_argument("--context", required=True, type=int, help="positions per input (>= 1); no attention, no KV cache")
    r.add_argument("--width", required=True, type=int, help="width W of the MLP (>= 1); hidden layer is 4W")
    r.add_argument("--dtype", required=True, choices=measure.DTYPES, help="dtype of weights and inputs")
    r.add_argument("--warmup", required=True, type=int, help="warm-up passes, timed together (>= 0)")
    r.add_argument("--repeats", required=True, type=int, help="timed warm_forward passes (>= 1)")
    r.add_argument("--seed", type=int, default=0, help="seed for weights and inputs (default 0)")
    r.add_argument("--output", required=True, metavar="FILE.json", help="new JSON file to write (must not exist)")
    r.set_defaults(handler=_cmd_run)
