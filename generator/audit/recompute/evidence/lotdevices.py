"""A run over several GPUs of a lot: each GPU listed once, a share per GPU in every pass, none idle, never summed."""

from __future__ import annotations

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc, Phase
from generator.audit.recompute.decision.model import DeviceUse
from generator.audit.recompute.evidence.memory import invariant_findings

E = Severity.ERROR
PASSES = ("cold_forward", "warmup", "warm_forward")
PEAKS = ("peak_allocated_bytes", "peak_reserved_bytes")
_SHARE_FIX = "keep each GPU's share as the runner wrote it; a pass that ran on fewer GPUs is measured again"


def _listed(doc: MeasurementDoc, file: str) -> list[Finding]:
    """environment.devices: as many as devices_used, each GPU once (by device and by UUID)."""
    env = doc.environment
    out: list[Finding] = []
    if env.devices and env.devices_used != len(env.devices):
        out.append(make_finding("lot-devices-count", E, file, f"environment.devices lists {len(env.devices)} GPUs, "
                                f"devices_used says {env.devices_used}", field="/environment/devices_used",
                                claimed=env.devices_used, recomputed=len(env.devices),
                                rule="devices_used counts the GPUs listed in environment.devices",
                                fix="report the GPUs the program used, each once"))
    for key in ("device", "gpu_uuid"):
        values = [getattr(d, key) for d in env.devices if getattr(d, key) is not None]
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            out.append(make_finding("lot-device-twice", E, file, f"environment.devices names {key} {twice[0]} more "
                                    "than once: one GPU counted as two", field="/environment/devices",
                                    claimed=twice[0], rule="each GPU of the run is listed once",
                                    fix="list each GPU the program used once, with the UUID the runtime reports"))
    return out


def _pass_findings(doc: MeasurementDoc, index: int, phase: Phase, file: str) -> list[Finding]:
    """One pass of a run over several GPUs: a share per listed GPU in order, every one at work, peaks not summed."""
    where = f"/phases/{index}"
    devices = [d.device for d in doc.environment.devices]
    shares = [s.device for s in phase.shares]
    if shares != devices:
        return [make_finding("lot-share-missing", E, file,
                             f"{phase.phase} lists shares for {', '.join(shares) or 'no GPU'} "
                             f"where the run used {', '.join(devices)}", field=f"{where}/devices", claimed=shares,
                             recomputed=devices, rule="a pass over several GPUs records each GPU's share",
                             fix=_SHARE_FIX)]
    out: list[Finding] = []
    for k, share in enumerate(phase.shares):
        if phase.status == "ok" and (share.completed == 0 or share.status != "ok"):
            out.append(make_finding("lot-device-idle", E, file, f"{share.device} classified {share.completed} of "
                                    f"{share.texts} texts in {phase.phase}"
                                    + (f" {phase.repeat}" if phase.repeat else "")
                                    + ": the GPU did not work in this pass", field=f"{where}/devices/{k}/completed",
                                    claimed=share.completed, recomputed=share.texts,
                                    rule="every GPU of the run works in every pass (a lot's GPUs are all paid for)",
                                    fix=_SHARE_FIX))
    for key in PEAKS:
        readings = [s.counter(key) for s in phase.shares]
        known = [r for r in readings if r is not None]
        if known and phase.counter(key) is not None and phase.counter(key) != max(known):
            out.append(make_finding("lot-peak-mismatch", E, file, f"{phase.phase} {key} {phase.counter(key)} is not "
                                    f"the highest of its GPUs' readings ({max(known)})", field=f"{where}/{key}",
                                    claimed=phase.counter(key), recomputed=max(known),
                                    rule="with several GPUs a pass's memory is its highest GPU's, never a sum",
                                    fix="write the highest per-GPU reading; each GPU's stays in its share"))
    return out


def check_devices(doc: MeasurementDoc, file: str) -> list[Finding]:
    """The findings of a measurement that ran over several GPUs (none for a file without environment.devices)."""
    if not doc.environment.devices:
        return []
    out = _listed(doc, file)
    for i, phase in enumerate(doc.phases):
        if phase.phase in PASSES and (phase.status == "ok" or phase.shares):
            out.extend(_pass_findings(doc, i, phase, file))
        for k, share in enumerate(phase.shares):
            out.extend(invariant_findings(share, file, None, f"/phases/{i}/devices/{k}/"))
    return out


def device_uses(doc: MeasurementDoc) -> tuple[DeviceUse, ...] | None:
    """Each GPU of a run over several, over its timed passes (cold and warm): the texts of its share, its highest
    peaks, and whether it worked in every pass; None for a run on one GPU."""
    if not doc.environment.devices:
        return None
    timed = [p for p in doc.phases if p.phase in ("cold_forward", "warm_forward") and p.status == "ok"]
    out = []
    for k, device in enumerate(doc.environment.devices):
        shares = [p.shares[k] for p in timed if len(p.shares) > k and p.shares[k].device == device.device]
        peaks = {key: max((r for r in (s.counter(key) for s in shares) if r is not None), default=None)
                 for key in PEAKS}
        out.append(DeviceUse(device.device, device.gpu_name, device.gpu_uuid,
                             max((s.texts for s in shares), default=0), len(shares),
                             bool(timed) and len(shares) == len(timed) and all(s.completed > 0 for s in shares),
                             _bytes(peaks["peak_allocated_bytes"]), _bytes(peaks["peak_reserved_bytes"])))
    return tuple(out)


def _bytes(value: float | None) -> int | None:
    return None if value is None else int(value)
