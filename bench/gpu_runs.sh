#!/usr/bin/env bash
# gpuscope runs on a GPU machine, recorded for tests/data and the closing
# notes: the machine, every device listed, each run's wall time, the clocks
# sampled beside the runs, and each run's results and reports.
#
# Usage: bench/gpu_runs.sh OUTDIR [--bin PATH] [--api opencl|vulkan|both]
#                          [--probes LIST] [--times N] [--timeout S] [--pocl] [--cuda FILE.cu]...
#                          [-- more `gpuscope run` arguments]
#   --bin      the gpuscope binary (default build/release/gpuscope)
#   --api      which API's GPU device to run (default opencl); both: each,
#              then OUTDIR/opencl_vs_vulkan.md (gpuscope compare)
#   --probes   a probe list for --probes (default: the whole default run)
#   --times    runs per API (default 1), for run-to-run spread
#   --timeout  seconds each gpuscope run may take before it is stopped (default: no limit)
#   --pocl     also a --quick run on the machine's CPU (PoCL's basic driver)
#   --cuda     build a CUDA reference under bench/ with nvcc and run it
# Vulkan needs a loader: set VULKAN_LOADER_DIR to a folder holding
# libvulkan.so.1 and, where the machine's own ICD file cannot start headless
# (NVIDIA's names libGLX_nvidia.so.0), an ICD json of your own (README,
# "Validating on a GPU").
# Writes OUTDIR/log.txt, OUTDIR/clocks.csv, OUTDIR/<api>_<i>/{results.json,
# report.md,report.html} and OUTDIR/<name>.txt for each CUDA reference.
set -uo pipefail
out=${1:?usage: bench/gpu_runs.sh OUTDIR [options]}
shift
bin=build/release/gpuscope api=opencl probes="" times=1 limit=0 pocl=0 cudas=() extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --api) api=$2; shift 2 ;;
    --probes) probes=$2; shift 2 ;;
    --times) times=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --pocl) pocl=1; shift ;;
    --cuda) cudas+=("$2"); shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "bench/gpu_runs.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case $api in opencl|vulkan|both) ;; *) echo "bench/gpu_runs.sh: --api is opencl, vulkan or both" >&2; exit 2 ;; esac

mkdir -p "$out" /etc/OpenCL/vendors
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
if [ -n "${VULKAN_LOADER_DIR:-}" ]; then
  export LD_LIBRARY_PATH="$VULKAN_LOADER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  icd=$(ls "$VULKAN_LOADER_DIR"/*.json 2>/dev/null | head -1)
  [ -n "$icd" ] && export VK_DRIVER_FILES="$icd"
fi
log=$out/log.txt
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total,power.limit --format=csv 2>&1
  "$bin" list --verbose
} >> "$log" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 100 > "$out/clocks.csv" 2>/dev/null &
smi=$!

# The first GPU device of an API, by `gpuscope list` (platform order differs between machines).
device_of() { "$bin" list | awk -v p="$1:" '$2 == "gpu" && index($1, p) == 1 { print $1; exit }'; }

apis=("$api")
[ "$api" = both ] && apis=(opencl vulkan)
for a in "${apis[@]}"; do
  dev=$(device_of "$a")
  if [ -z "$dev" ]; then echo "no $a GPU listed" | tee -a "$log"; continue; fi
  for i in $(seq 1 "$times"); do
    args=(run -q --device "$dev" --out "$out/${a}_$i")
    [ -n "$probes" ] && args+=(--probes "$probes")
    t0=$(now)
    timeout "$limit" "$bin" "${args[@]}" "${extra[@]}" > "$out/${a}_$i.txt" 2>&1
    echo "$a run $i on $dev: exit $? in $(since "$t0") s" | tee -a "$log"
  done
done
kill "$smi" 2>/dev/null

if [ "$api" = both ] && [ -f "$out/opencl_1/results.json" ] && [ -f "$out/vulkan_1/results.json" ]; then
  "$bin" compare "$out/opencl_1/results.json" "$out/vulkan_1/results.json" --format md \
    --out "$out/opencl_vs_vulkan.html" > "$out/opencl_vs_vulkan.md" 2>> "$log"
fi
if [ "$pocl" = 1 ]; then
  cpu=$("$bin" list | awk '$2 == "cpu" { print $1; exit }')
  t0=$(now)
  POCL_DEVICES=basic "$bin" run -q --quick --device "$cpu" --out "$out/pocl" > "$out/pocl.txt" 2>&1
  echo "pocl quick run on $cpu: exit $? in $(since "$t0") s" | tee -a "$log"
fi
for cu in "${cudas[@]}"; do
  name=$(basename "$cu" .cu)
  nvcc -O3 -arch=native "$cu" -o "/tmp/$name" >> "$log" 2>&1 && "/tmp/$name" > "$out/$name.txt" 2>&1
  echo "$name: exit $?" | tee -a "$log"
done
