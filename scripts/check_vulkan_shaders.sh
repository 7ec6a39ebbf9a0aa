#!/usr/bin/env bash
# Compiles every GLSL shader under src/kernels/vulkan for every entry and
# parameter set its probe asks for, with glslangValidator (Debian
# glslang-tools) and the preamble src/kernels/vulkan/README.md states, once
# with every device capability present and once with the optional ones
# absent (where a build must then fail with its reason, the script checks
# that it does). Needs no Vulkan device. Exit status 1 on any unexpected
# result, with the compiler's log.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v glslangValidator >/dev/null || { echo "glslangValidator not found (apt-get install glslang-tools)"; exit 2; }
dir=src/kernels/vulkan
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 builds=0

preamble() {  # $1: 1 = every capability, 0 = none of the optional ones
  cat <<PRE
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_EXT_buffer_reference : enable
#extension GL_EXT_buffer_reference2 : enable
#extension GL_ARB_shader_clock : enable
#extension GL_EXT_shader_realtime_clock : enable
PRE
  for cap in HAS_BUFFER_ADDRESS HAS_INT64 HAS_FLOAT64 HAS_FLOAT16 HAS_INT8 HAS_INT16 HAS_SUBGROUP_CLOCK HAS_DEVICE_CLOCK; do
    echo "#define $cap $1"
  done
}

# build EXPECT CAPS FAMILY ENTRY [NAME=VALUE ...]; EXPECT: ok or fail
build() {
  local expect=$1 caps=$2 family=$3 entry=$4
  shift 4
  local src="$tmp/shader.comp"
  { preamble "$caps"; echo "#define ENTRY_$entry 1"
    for d in "$@"; do echo "#define ${d%%=*} ${d#*=}"; done
    cat "$dir/$family.comp"; } >"$src"
  builds=$((builds + 1))
  if log=$(glslangValidator -V --target-env vulkan1.2 -o "$tmp/shader.spv" "$src" 2>&1); then got=ok; else got=fail; fi
  if [ "$got" != "$expect" ]; then
    failures=$((failures + 1))
    echo "UNEXPECTED ($got, wanted $expect): $family/$entry caps=$caps $*"
    echo "$log" | grep -E "ERROR|error" | head -5
  fi
}

for caps in 1 0; do
  for chains in 8; do
    build ok $caps divergence DIVERGE CHAINS=$chains
    build ok $caps divergence DIVERGE CHAINS=$chains REQUIRED_SUBGROUP_SIZE=32
    build ok $caps divergence PARTITION CHAINS=$chains
  done
  for regs in 1 2 4 8 16 32 48 64 96 128; do
    for scratch in 0 1; do build ok $caps occupancy OCCUPANCY REGS=$regs SCRATCH=$scratch; done
  done
  for body in 64 128 192 1024 4096 8192 16320 32704; do build ok $caps icache BODY BODY=$body; done
  build ok $caps scheduling RESIDENT
  build ok $caps sustain FMA_LOAD NV_PTX=0
  build fail $caps sustain FMA_LOAD NV_PTX=1
  for e in LINK CHASE PAIR_CHASE BANDWIDTH; do
    build ok $caps texture $e IMAGE_2D=0 WIDTH_LOG2=0
    build ok $caps texture $e IMAGE_2D=1 WIDTH_LOG2=12
  done
  build ok $caps lbm LBM_STEP MODE=0
  for e in PING_PONG_GLOBAL PING_PONG_LOCAL ADD_THROUGHPUT; do build ok $caps atomics $e USE_64=0; done
done
# What needs a capability builds with it and fails without it.
for e in PING_PONG_GLOBAL PING_PONG_LOCAL ADD_THROUGHPUT; do build ok 1 atomics $e USE_64=1; done
for mode in 1 2; do
  build ok 1 lbm LBM_STEP MODE=$mode
  build fail 0 lbm LBM_STEP MODE=$mode
done

# compute: every (type, op, lanes) of compute.cpp's matrices, tp_ and lat_.
scalar() {
  case $1 in
    fp32) echo "SCALAR=float SCALAR_IS_F32=1 KIND_FLOAT=1" ;;
    fp64) echo "SCALAR=double SCALAR_IS_F64=1 KIND_FLOAT=1" ;;
    fp16) echo "SCALAR=float16_t SCALAR_IS_F16=1 KIND_FLOAT=1" ;;
    int32) echo "SCALAR=int SCALAR_IS_I32=1 KIND_INT=1" ;;
    int64) echo "SCALAR=int64_t SCALAR_IS_I64=1 KIND_INT=1" ;;
    int16) echo "SCALAR=int16_t SCALAR_IS_I16=1 KIND_INT=1" ;;
    int8) echo "SCALAR=int8_t SCALAR_IS_I8=1 KIND_INT=1" ;;
  esac
}
ops() { case $1 in add | mul | fma | mad | mix_*) echo "OPS_FAST=1" ;; *) echo "OPS_${1^^}=1" ;; esac; }
needs_cap() { case $1 in fp64 | fp16 | int64 | int16 | int8) return 0 ;; *) return 1 ;; esac; }
plan="CHAINS=8 UNROLL=32 LAT_UNROLL=64 UNROLL_SLOW=4 LAT_UNROLL_SLOW=16 HAS_PTX=0"
compute() {  # ENTRY TYPE OP VEC
  build ok 1 compute "$1" $(scalar "$2") VEC="$4" $(ops "$3") $plan
  if needs_cap "$2"; then build fail 0 compute "$1" $(scalar "$2") VEC="$4" $(ops "$3") $plan; fi
}
for e in "fp32 fma 1 4" "fp32 mad 1" "fp32 add 1 4" "fp32 mul 1" "fp64 fma 1" "fp64 add 1" "fp64 mul 1" \
  "fp16 fma 2" "fp16 add 2" "fp16 mul 2" "int32 mad 1" "int32 add 1 4" "int32 mul 1" "fp32 mix_fma_add 1" \
  "fp32 mix_fma_iadd 1" "fp32 native_sin 1" "fp32 native_exp 1" "fp32 native_sqrt 1" "fp32 rsqrt 1" \
  "int64 add 1" "int64 mul 1" "int16 add 1" "int8 add 1 4" "fp32 div 1" "fp32 sqrt 1" "fp32 exp 1" \
  "fp32 log 1" "fp32 sin 1" "fp32 native_divide 1" "fp32 native_rsqrt 1" "fp32 native_log 1" "int32 cvt 1" \
  "int32 div 1" "int64 mad 1" "int16 mul 1" "int8 mul 1" "fp64 div 1" "fp64 sqrt 1"; do
  set -- $e
  type=$1 op=$2
  shift 2
  for vec in "$@"; do compute "TP_${op^^}" $type $op $vec; done
done
for e in "fp32 fma" "fp32 add" "fp32 mul" "fp32 mad" "fp64 fma" "fp64 add" "fp16 fma" "fp16 add" "int32 add" \
  "int32 mul" "int32 mad" "int64 add" "int64 mul" "int16 add" "int16 mul" "int8 add" "int8 mul" "int32 cvt" \
  "fp32 div" "fp32 sqrt" "fp32 rsqrt" "fp32 exp" "fp32 log" "fp32 sin" "fp32 native_divide" "fp32 native_sqrt" \
  "fp32 native_rsqrt" "fp32 native_exp" "fp32 native_log" "fp32 native_sin" "int32 div" "fp64 mul" "fp64 div" \
  "fp64 sqrt"; do
  set -- $e
  compute "LAT_${2^^}" $1 $2 1
done
# Without a cycle counter the latency kernels store 0 cycles.
build ok 0 compute LAT_FMA $(scalar fp32) VEC=1 OPS_FAST=1 $plan
# Forms GLSL cannot express fail with their reason.
build fail 1 compute TP_FMA SCALAR=uint SCALAR_IS_U32=1 KIND_PTX_F16X2=1 VEC=1 OPS_FAST=1 $plan
build fail 1 compute LAT_EXP $(scalar fp64) VEC=1 OPS_EXP=1 $plan
build fail 1 compute TP_FMA $(scalar fp32) VEC=8 OPS_FAST=1 $plan

echo "$builds builds, $failures unexpected"
[ "$failures" -eq 0 ]
