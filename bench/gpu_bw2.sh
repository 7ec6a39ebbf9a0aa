#!/bin/bash
# Issue 3, DRAM write/copy: the bandwidth probe (with its grid-stride stream
# series) after the latency probe, then alone, with the SM/memory clocks and
# power logged every 100 ms; then the CUDA cross-check (bench/cuda_stream_bw.cu).
# Run on the GPU machine from the repository root with the binaries in $D.
D=${D:-.devcarry-bw2}
B=$D/gpuscope
NV=$($B list | awk '/NVIDIA/{print $1; exit}')
{ $B list; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv; } > $OUT/smi.txt 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/clk.txt 2>&1 &
SMI=$!
{ time $B run --device $NV --probes latency,bandwidth --out $OUT/gpu1 ; } > $OUT/gpu1.log 2>&1
{ time $B run --device $NV --probes bandwidth --out $OUT/gpu2 ; } > $OUT/gpu2.log 2>&1
{ time $D/cuda_stream_bw ; } > $OUT/cuda.txt 2>&1
kill $SMI
ls -la $OUT/*
