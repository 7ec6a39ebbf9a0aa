#!/usr/bin/env bash
# Second validation pass on the GPU machine: the latency probe on the GPU
# (timed, twice) and on the machine's CPU through PoCL (pthread and basic
# drivers), so that recorded CPU curves with known /sys caches exist too.
set -uo pipefail
out=${1:?usage: bench/gpu_run2.sh OUTDIR}
bin=build/release/gpuscope
bash bench/gpu_latency.sh "$out" "$bin" >/dev/null 2>&1
grep -h "latency run" -r "$out" 2>/dev/null
for i in /sys/devices/system/cpu/cpu0/cache/index*; do echo "$(cat $i/level) $(cat $i/type) $(cat $i/size)"; done | tee "$out/sys_caches.txt"
lscpu | grep -E "Model name|^CPU\(s\)" | tee -a "$out/sys_caches.txt"
/usr/bin/time -f "pocl pthread: %e s" "$bin" run -q --probes latency --device opencl:0:0 --out "$out/pocl" | sed -n 4,12p
POCL_DEVICES=basic /usr/bin/time -f "pocl basic: %e s" "$bin" run -q --probes latency --device opencl:0:0 --out "$out/pocl_basic" | sed -n 4,12p
"$bin" analyze "$out/run1/results.json" | sed -n 1,14p
