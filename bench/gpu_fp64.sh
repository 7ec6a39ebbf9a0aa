#!/usr/bin/env bash
# Why fp64 FMA read 92% of peak, in one call on the GPU machine: the compute
# probe's fp64 fma under each diagnostic kernel form and launch shape
# (GPUSCOPE_COMPUTE_FMA_FORM / _PLAN), the PTX the driver built (for ptxas and
# nvdisasm off-line), the same PTX timed through the CUDA driver API, the CUDA
# reference kernels, and one full compute + oplatency run to record.
# Usage: bench/gpu_fp64.sh OUTDIR DIR   (DIR holds gpuscope, libOpenCL.so.1,
# cuda_fma.cu, cuda_ptx_time.cu, sass_dfma_operands.py). Prints a table; OUTDIR/fp64.tgz has the rest.
set -uo pipefail
out=${1:?usage: bench/gpu_fp64.sh OUTDIR DIR}
dir=${2:?usage: bench/gpu_fp64.sh OUTDIR DIR}
bin=$dir/gpuscope
w=/tmp/fp64w
mkdir -p "$out" "$w/dump" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
"$bin" list > "$w/list.txt" 2>&1
gpu=${GPU:-}; [ -n "$gpu" ] || gpu=$(awk '/NVIDIA/ {print $1; exit}' "$w/list.txt")
echo "gpu=$gpu"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 250 > "$w/smi.csv" 2>/dev/null &
smi=$!
# CUDA builds run on the CPU beside the OpenCL runs.
( nvcc -O3 -arch=sm_90 "$dir/cuda_fma.cu" -o "$w/cuda_fma" && nvcc -O3 -arch=sm_90 -cubin "$dir/cuda_fma.cu" -o "$w/cuda_fma.cubin" \
  && nvcc -O3 -arch=sm_90 "$dir/cuda_ptx_time.cu" -lcuda -o "$w/cuda_ptx_time" ) > "$w/nvcc.log" 2>&1 &
nvccpid=$!

# one(name, env...): the probe's fp64 fma once; prints name, TFLOP/s, spread.
one() {
  local name=$1; shift
  env GPUSCOPE_COMPUTE_ONLY=fp64.fma "$@" timeout 30 "$bin" run --device "$gpu" --probes compute --out "$w/r_$name" > "$w/r_$name.txt" 2>&1
  local rc=$?
  local g
  g=$(awk '/compute fp64 +fma +x1/ {print $5; exit}' "$w/r_$name.txt")
  local sp
  sp=$(awk '/compute fp64 +fma +x1/ {gsub(/[()]/, "", $8); print $8; exit}' "$w/r_$name.txt")
  printf "%-26s %-60s %8s TFLOP/s  spread %s rc %s %s\n" "$name" "$*" "$(awk -v g="${g:-0}" 'BEGIN {printf "%.2f", 2 * g / 1000}')" "$sp" "$rc" \
    "$(grep -m1 -i 'unsupported\|error' "$w/r_$name.txt" | cut -c1-150)"
}
mkdir -p "$w/dump/byval" "$w/dump/buffer" "$w/dump/verbose"
one byval GPUSCOPE_COMPUTE_DUMP="$w/dump/byval"
one buffer_old GPUSCOPE_COMPUTE_FMA_FORM=5 GPUSCOPE_COMPUTE_DUMP="$w/dump/buffer"
one byval_again
one byval_verbose GPUSCOPE_COMPUTE_CLOPTS=-cl-nv-verbose GPUSCOPE_COMPUTE_DUMP="$w/dump/verbose"
one ptx_vab GPUSCOPE_COMPUTE_FMA_FORM=1
one ptx_avb GPUSCOPE_COMPUTE_FMA_FORM=2
one ptx_block4 GPUSCOPE_COMPUTE_FMA_FORM=3
one xs_then_ys GPUSCOPE_COMPUTE_FMA_FORM=4
one buffer_old_again GPUSCOPE_COMPUTE_FMA_FORM=5
for p in chains=2,unroll=128 chains=4,unroll=64 chains=6,unroll=40 chains=12,unroll=20 chains=16,unroll=16 \
         local=128 local=512 local=1024 items_per_cu=1024 items_per_cu=4096; do
  one "byval_$p" GPUSCOPE_COMPUTE_PLAN="$p"
done
one buffer_chains6 GPUSCOPE_COMPUTE_FMA_FORM=5 GPUSCOPE_COMPUTE_PLAN=chains=6,unroll=40
one buffer_chains16 GPUSCOPE_COMPUTE_FMA_FORM=5 GPUSCOPE_COMPUTE_PLAN=chains=16,unroll=16

# The whole compute and oplatency probes with the new kernels, to record.
start=$(date +%s.%N)
timeout 60 "$bin" run --device "$gpu" --probes compute,oplatency --out "$w/full" > "$w/full.txt" 2>&1
echo "full compute,oplatency: exit $? in $(awk "BEGIN {print $(date +%s.%N) - $start}") s"
grep -E "compute (fp32|fp64) +(fma|mad)|compute fp16 +fma|compute int32 +mad" "$w/full.txt"

wait $nvccpid
tail -3 "$w/nvcc.log"
if [ -x "$w/cuda_fma" ]; then
  echo "--- CUDA reference"; timeout 30 "$w/cuda_fma"; timeout 30 "$w/cuda_fma" sweep; timeout 30 "$w/cuda_fma" sustained
fi
if [ -x "$w/cuda_ptx_time" ]; then
  echo "--- the driver's PTX timed through the CUDA driver API (JIT), and through this ptxas"
  for d in byval buffer; do
    p="$w/dump/$d/fp64.fma.x1.ptx"
    [ -f "$p" ] || continue
    timeout 20 "$w/cuda_ptx_time" "$p" 8 32
    ptxas -arch=sm_90 -v "$p" -o "$w/dump/$d/fp64.cubin" > "$w/dump/$d/ptxas.txt" 2>&1 && timeout 20 "$w/cuda_ptx_time" "$w/dump/$d/fp64.cubin" 8 32
    cuobjdump -sass "$w/dump/$d/fp64.cubin" > "$w/dump/$d/fp64.sass" 2>&1
    echo "$d: DFMA $(grep -c DFMA "$w/dump/$d/fp64.sass") of which with a uniform-register operand $(grep DFMA "$w/dump/$d/fp64.sass" | grep -c UR)"
  done
fi
cuobjdump -sass "$w/cuda_fma.cubin" > "$w/cuda_fma.sass" 2>&1
python3 "$dir/sass_dfma_operands.py" "$w/cuda_fma.sass" "$w"/dump/*/fp64.sass 2>&1
kill $smi 2>/dev/null
awk -F', ' 'NR > 1 {n++; c += $2; if ($3 + 0 > p) p = $3 + 0} END {printf "smi: %d samples, mean SM clock %.0f MHz, peak power %.0f W\n", n, c / n, p}' "$w/smi.csv"
cp "$w/full/results.json" "$out/compute_full.json" 2>/dev/null
cp "$w/r_byval/results.json" "$out/fp64_byval.json" 2>/dev/null
cp "$w/r_buffer_old/results.json" "$out/fp64_buffer.json" 2>/dev/null
tar czf "$out/fp64.tgz" -C /tmp fp64w 2>/dev/null
ls -la "$out"
