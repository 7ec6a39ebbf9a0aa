#!/bin/bash
D=${D:-.devcarry-bw2}
B=$D/gpuscope
NV=$($B list | awk '/NVIDIA/{print $1; exit}')
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/clk.txt 2>&1 &
SMI=$!
{ time $B run --device $NV --probes latency,bandwidth --out $OUT/gpu3 ; } > $OUT/gpu3.log 2>&1
{ time $B run --device $NV --probes bandwidth --out $OUT/gpu4 ; } > $OUT/gpu4.log 2>&1
kill $SMI
