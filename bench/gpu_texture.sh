#!/usr/bin/env bash
# The texture probe on the GPU machine: twice on the GPU with 1D buffer
# images (repeatability, wall time), once with 2D images, once --quick, and
# once --quick on the machine's CPU through PoCL's single-threaded driver.
# Results are copied flat into OUTDIR (the device tool returns few files).
# Usage: bench/gpu_texture.sh OUTDIR [gpuscope binary] [GPU device id]
# (default: the first device `gpuscope list` calls a gpu; platform order
# differs between machines)
set -uo pipefail
out=${1:?usage: bench/gpu_texture.sh OUTDIR [binary] [device]}
bin=${2:-build/release/gpuscope}
gpu=${3:-}
mkdir -p "$out" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
log="$out/log.txt"
{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv
  "$bin" list
  cpu=$("$bin" list | awk '$2 == "cpu" {print $1; exit}')
  [ -n "$gpu" ] || gpu=$("$bin" list | awk '$2 == "gpu" {print $1; exit}')
  echo "gpu: $gpu  cpu: $cpu"
  run() {  # name, env..., then gpuscope arguments after --
    local name=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    local t0=$(date +%s.%N)
    env "${envs[@]}" "$bin" run --quiet --probes texture --out "/tmp/tex_$name" "$@"
    echo "== $name: rc $? wall $(echo "$(date +%s.%N) $t0" | awk '{print $1 - $2}') s"
    cp "/tmp/tex_$name/results.json" "$out/$name.json"
  }
  run gpu_quick X=1 -- --quick --device "$gpu"
  # The first full run with progress lines, for diagnosis.
  t0=$(date +%s.%N)
  "$bin" run --probes texture --out /tmp/tex_gpu_run1 --device "$gpu" 2>&1 | tail -120
  echo "== gpu_run1: wall $(echo "$(date +%s.%N) $t0" | awk '{print $1 - $2}') s"
  cp /tmp/tex_gpu_run1/results.json "$out/gpu_run1.json"
  run gpu_run2 X=1 -- --device "$gpu"
  run gpu_2d GPUSCOPE_TEXTURE_2D=1 -- --device "$gpu"
  [ -n "$cpu" ] && run pocl_basic POCL_DEVICES=basic -- --device "$cpu"
} > "$log" 2>&1
tail -c 11000 "$log"
