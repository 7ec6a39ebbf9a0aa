#!/usr/bin/env bash
# The latency probe on the GPU machine (see README: "Validating on a GPU").
# Registers NVIDIA's OpenCL driver, records the machine, runs the probe
# twice (timed, for repeatability) and the CUDA reference chase.
# Usage: bench/gpu_latency.sh OUTDIR [gpuscope binary]
set -uo pipefail
out=${1:?usage: bench/gpu_latency.sh OUTDIR [binary]}
bin=${2:-build/release/gpuscope}
mkdir -p "$out" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv | tee "$out/nvidia-smi.txt"
"$bin" list | tee "$out/list.txt"
for i in 1 2; do
  /usr/bin/time -f "latency run $i: %e s wall" "$bin" run --probes latency --out "$out/run$i" 2>&1 | tail -30
done
if command -v nvcc >/dev/null; then
  nvcc -O3 -arch=sm_90 bench/cuda_chase.cu -o /tmp/cuda_chase && /tmp/cuda_chase | tee "$out/cuda_chase.txt"
fi
