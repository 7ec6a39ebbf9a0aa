#!/bin/bash
# The runs behind tests/data/h200/*bandwidth_local*.json: on the GPU machine, from the repository
# root, with the binary and libOpenCL.so.1 in .devcarry-bw/ and OUT set to an output folder.
# NVIDIA is opencl:0:0 there, PoCL opencl:1:0; nvidia-smi logs the clocks beside the runs.
B=.devcarry-bw/gpuscope
$B list > $OUT/smi.txt 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv >> $OUT/smi.txt 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 100 > $OUT/clk.txt 2>&1 &
SMI=$!
{ time $B run --device opencl:0:0 --probes latency,bandwidth,local --out $OUT/gpu1 ; } > $OUT/gpu1.log 2>&1
{ time $B run --device opencl:0:0 --probes bandwidth,local --out $OUT/gpu2 ; } > $OUT/gpu2.log 2>&1
kill $SMI
{ time POCL_DEVICES=basic $B run --device opencl:1:0 --quick --probes bandwidth,local --out $OUT/pocl ; } > $OUT/pocl.log 2>&1
ls -la $OUT/*
