#!/usr/bin/env bash
# The whole default run on the GPU machine, twice, timed, plus a quick run of
# every probe on the machine's CPU through PoCL's single-threaded driver.
# Usage: bench/gpu_full.sh OUTDIR [gpuscope binary]
# Writes OUTDIR/{full1,full2,pocl}.json, OUTDIR/report1.{html,md}, OUTDIR/log.txt, OUTDIR/smi.csv.
set -uo pipefail
out=${1:?usage: bench/gpu_full.sh OUTDIR [binary]}
bin=${2:-build/release/gpuscope}
mkdir -p "$out" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
log=$out/log.txt
"$bin" list | tee -a "$log"
# Platform order differs between machines: pick the devices by what they are.
gpu=$("$bin" list | awk '/NVIDIA/ {print $1; exit}')
cpu=$("$bin" list | awk '$2 == "cpu" {print $1; exit}')
echo "gpu=$gpu cpu=$cpu" | tee -a "$log"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 500 > "$out/smi.csv" 2>/dev/null &
smi=$!
for i in 1 2; do
  start=$(date +%s.%N)
  "$bin" run -q --device "$gpu" --out "/tmp/full$i" > "/tmp/full$i.txt" 2>&1
  echo "full run $i: exit $? in $(awk "BEGIN {print $(date +%s.%N) - $start}") s" | tee -a "$log"
  cp "/tmp/full$i/results.json" "$out/full$i.json"
  [ "$i" = 1 ] && cp /tmp/full1/report.html "$out/report1.html" && cp /tmp/full1/report.md "$out/report1.md"
  cat "/tmp/full$i.txt" >> "$log"
done
kill $smi 2>/dev/null
start=$(date +%s.%N)
POCL_DEVICES=basic "$bin" run -q --quick --device "$cpu" --out /tmp/pocl > /tmp/pocl.txt 2>&1
echo "pocl quick run: exit $? in $(awk "BEGIN {print $(date +%s.%N) - $start}") s" | tee -a "$log"
cp /tmp/pocl/results.json "$out/pocl.json"
cat /tmp/pocl.txt >> "$log"
python3 - "$out" <<'PY' 2>/dev/null | tee -a "$log"
import json, sys
r = json.load(open(sys.argv[1] + "/full1.json"))
for name, p in r["run"]["probes"].items(): print(f"{name:12s} {p['wall_s']:6.1f} s")
for s in r.get("skipped", []): print("skipped", s["probe"], s["reason"][:200])
PY
