#!/usr/bin/env python3
"""Operand sources of every DFMA in `cuobjdump -sass` listings, per function.

Counts, per kernel: DFMAs; those with an operand from a uniform register (URn)
or the constant bank (c[..]); and those reading all three operands from vector
register pairs with no .reuse flag (the ones that lose an issue cycle on
Hopper, README "Arithmetic"). Usage: sass_dfma_operands.py FILE.sass ...
(cuobjdump needs nvdisasm on PATH; both are on PyPI as nvidia-cuda-cuobjdump
and nvidia-cuda-nvdisasm.)
"""
import re
import sys

for path in sys.argv[1:]:
    fn = None
    stats = {}
    for line in open(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            fn = m.group(1)
            stats[fn] = [0, 0, 0]
            continue
        m = re.search(r"\bDFMA (\S+), (.*?) ;", line)
        if m and fn:
            ops = [o.strip() for o in m.group(2).split(",")]
            s = stats[fn]
            s[0] += 1
            if any(o.startswith("UR") or o.startswith("c[") for o in ops):
                s[1] += 1
            elif not any(".reuse" in o for o in ops):
                s[2] += 1
    for fn, (n, uniform, bare) in stats.items():
        if n:
            print(f"{path:14s} {fn:48s} DFMA {n:4d}  uniform/const operand {uniform:4d}  "
                  f"3 vector pairs, no reuse {bare:4d} ({100 * bare / n:.1f}%)")
