#!/usr/bin/env python3
"""Recovery benchmark: does gpuscope recover simulated GPUs it was never tuned on?

Draws GPUs from a wide generator (seeded, reproducible), adds every sim
preset, runs gpuscope's whole default probe set on each through the sim
(`gpuscope run --device sim:FILE.json`), and sets every finding beside what
the description put in. Per finding family it prints how many were within
tolerance, wrong, confidently wrong (confidence >= 0.8 yet outside
tolerance), and missing (with or without a reason in results.json's
"unfound"), then the worst cases and a calibration table (confidence bucket
against fraction within tolerance). Then the closed loop's model.json field
by field against the description (judge_model): the model fields table.

    bench/recovery_benchmark.py [--gpuscope build/release/gpuscope] [--count 300]
        [--seed0 1] [--jobs 2] [--out DIR] [--quick] [--presets NAME,... | --no-presets]
        [--loop fit|replay|none] [--reuse] [--reanalyze] [--json FILE] [--check]

--loop says how the findings are held (docs/closed-loop.md): the whole loop
(fit, the default), the replay without the fit, or the readers alone; with
--reuse --reanalyze the stored runs are analysed again so, which gives the
before-and-after tables from one set of runs.

Tolerances (the issue's): sizes 10% (TLB reach 25%), latencies 5%,
bandwidths and rates 10%, counts and flags exact.

--check exits 1 when any finding is confidently wrong or any missing finding
has no reason (the CI subset: tests/sim/recovery_benchmark_test.cpp).

The wide generator (draw()) covers: sectored lines (128 B lines filled in 32
or 64 B sectors); non-power-of-two capacities and associativities (a 96 KiB
6-way L1); LRU, pseudo-LRU (power-of-two ways) and random replacement at
every level; inclusive and exclusive levels; fully and set-associative
(4-way) TLBs with 4, 16, 64 KiB and 2 MiB pages, reach sometimes below the
last cache's capacity; last levels up to 32 MiB (beyond the sharing sweep's
8 MiB per group); work-group limits per core of 1 to 32, sometimes below the
wave limit; maximum work-group sizes 64 to 1024; wave widths 4 to 128; noise
from quiet to phone-like; a matrix engine whose f16 and int8 shapes carry
drawn arithmetics (draw_matrix), read back by the matrix probe's numerics.
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import random
import re
import subprocess
import sys
import time

PRESETS = ["mali-g52", "adreno-530", "adreno-615", "adreno-320", "adreno-420", "adreno-730", "adreno-740",
           "mali-g710", "immortalis-g715"]
KIB, MIB = 1024, 1024 * 1024

# ---------------------------------------------------------------- generator


def draw_raster(seed, cores):
    """The graphics pipeline of GPU `seed` (docs/sim.md's raster section), from
    a stream of its own so that the rest of the draw stays as it was. Tile
    memories are the tile's pixels times a power of two, so that a pass past
    the knee fills them exactly."""
    rng = random.Random(seed * 104729 + 7)
    among = rng.choice
    w = among([8, 16, 16, 32, 32, 64])
    h = among([w, w, w // 2 if w > 8 else w, w * 2 if w < 64 else w])
    align = among([1, 1, 4])
    binning = rng.random() < 0.8
    rop8 = among([1, 2, 4])
    blend8 = among([rop8, rop8 / 2])
    point = among([1, 2, 4])
    trilinear = among([point / 2, point / 4])
    aniso = rng.random() < 0.8
    r = {
        "tile_width_px": w, "tile_height_px": h,
        "tile_memory_bytes": w * h * among([8, 16, 32, 64]),
        "tile_align_width_px": align, "tile_align_height_px": align,
        "tile_order": among(["row-major", "column-major", "serpentine", "morton", "hilbert"]),
        "fragment_order": among(["row-major", "row-major-quads", "morton"]),
        "binning": binning,
        "tiles_in_flight": among([1, min(2, cores), cores]),
        "pass_overhead_ns": round(5000 + 25000 * rng.random()),
        "tile_overhead_clocks": among([0, 16, 64, 256]),
        "hidden_surface_removal": binning and rng.random() < 0.3,
        "rops_per_core": among([1, 2, 4]),
        "rop_pixels_per_clock": {"rgba8": rop8, "rgba16f": among([rop8, rop8 / 2]),
                                 "rgba32f": among([rop8 / 2, rop8 / 4]), "depth32f": among([2, 4])},
        "rop_blend_pixels_per_clock": {"rgba8": blend8, "rgba16f": blend8 / 2, "rgba32f": blend8 / 4},
        "texture_units_per_core": among([1, 2, 4]),
        "texels_per_clock": {"point": point, "bilinear": among([point, point / 2]), "trilinear": trilinear,
                             **({"aniso": trilinear / 2} if aniso else {})},
        "max_anisotropy": 16 if aniso else 0,
        "transaction_elimination": rng.random() < 0.4,
        "pipeline_statistics": rng.random() < 0.7,
        "fragment_side_effects": rng.random() < 0.9,
        "sample_counts": among([[1, 4], [1, 2, 4, 8]]),
        "max_width": 8192, "max_height": 8192, "max_colour_attachments": among([4, 8]),
    }
    if rng.random() < 0.5:
        r["fb_compression"] = {"block_px": among([4, 8, 16, 32]), "read_saving": among([0.25, 0.5, 0.75])}
    return r


def draw_matrix(seed):
    """A matrix engine whose shapes carry drawn arithmetics (docs/sim.md,
    matrix.shapes[].arithmetic), from a generator of its own so that the rest
    of the description stays as drawn before. Only forms the analysis holds
    one of each (core/matrix_arithmetic.hpp, matrix_arithmetic_canonical):
    internal sums exact or narrower than the f32 result (which then takes the
    sum's rounding), blocks below k, no order for a block of one."""
    rng = random.Random(seed * 104729 + 7)
    among = rng.choice
    sum_bits = among([0, 0] + list(range(8, 24)))
    block = among([0, 1, 2, 4, 8])
    arith = {"products": among(["exact", "input"]), "sum_bits": sum_bits,
             "sum_rounding": among(["nearest-even", "toward-zero"]), "alignment": among(["exact", "truncate"]),
             "block": block, "order": "fused" if block == 1 else among(["fused", "pairwise"]),
             "result_rounding": among(["nearest-even", "toward-zero"]),
             "subnormal_inputs": rng.random() < 0.5, "subnormal_outputs": rng.random() < 0.5}
    if sum_bits:
        arith["result_rounding"] = arith["sum_rounding"]
    else:
        arith.update(sum_rounding="nearest-even", alignment="exact", block=0, order="fused")
    rate = among([256, 512, 1024])
    return {"shapes": [
        {"a": "f16", "b": "f16", "c": "f32", "m": 16, "n": 16, "k": 16, "macs_per_clock_per_core": rate,
         "latency_cycles": among([16, 32, 64]), "arithmetic": arith},
        {"a": "i8", "b": "i8", "c": "i32", "m": 16, "n": 16, "k": 32, "macs_per_clock_per_core": 2 * rate,
         "latency_cycles": among([16, 32, 64]), "arithmetic": {"integer_overflow": among(["wrap", "saturate"])}}]}


def draw(seed):
    """One GPU description, every parameter from `seed`."""
    rng = random.Random(seed * 7919 + 13)
    among = rng.choice

    def between(lo, hi):
        return lo + (hi - lo) * rng.random()

    wave = among([4, 8, 16, 32, 32, 64, 64, 128])
    lanes = wave if wave <= 32 else among([wave, wave // 2])
    units = among([1, 2, 3, 4])
    waves = among([4, 8, 12, 16, 24, 32, 48])
    # At most 64 waves to a work-group (the sim's cost of a launch grows
    # with its waves; real GPUs: 1024 / 16 on AMD, 1024 / 32 on NVIDIA).
    max_wg = min(max(among([64, 128, 256, 256, 512, 1024, 1024]), wave), 64 * wave)
    # A work-group the core cannot hold at once is no GPU: enough wave slots
    # for the largest group.
    while units * waves * wave < max_wg:
        waves *= 2
    groups = among([1, 2, 4, 8, 16, 32])
    cores = among([1, 2, 4, 6, 8, 12, 16])
    clock = 50 * round(between(300, 1500) / 50)

    # Caches on the load path: a per-core L1, a shared L2, sometimes an SLC.
    line1 = among([64, 128])
    sector1 = among([line1, line1, 32, 64]) if line1 == 128 else among([line1, 32])
    ways1 = among([4, 6, 8, 12, 16])
    l1_target = among([8, 12, 16, 24, 32, 48, 64, 96, 128]) * KIB
    l1 = max(1, round(l1_target / (line1 * ways1))) * line1 * ways1

    def replacement(ways):
        pick = among(["lru", "plru", "random"])
        return "lru" if pick == "plru" and ways & (ways - 1) else pick

    line2 = max(line1, among([64, 128]))
    ways2 = among([8, 12, 16, 16, 24, 32])
    l2_target = among([128 * KIB, 256 * KIB, 512 * KIB, 768 * KIB, 1 * MIB, 2 * MIB, 3 * MIB, 4 * MIB,
                       6 * MIB, 8 * MIB, 12 * MIB, 16 * MIB])
    l2_target = max(l2_target, 8 * l1)
    l2 = max(1, round(l2_target / (line2 * ways2))) * line2 * ways2
    lat1 = round(between(20, 120))
    lat2 = round(lat1 * between(1.7, 3.5))
    bpc1 = among([16, 32, 64, 128])
    bpc2 = among([32, 64, 128, 256])

    caches = []
    shared_texture = rng.random() < 0.6  # else a texture-only L1 beside a load/store L1
    caches.append({"name": "L1", "capacity_bytes": l1, "line_bytes": line1, "sector_bytes": sector1,
                   "associativity": ways1, "replacement": replacement(ways1), "hit_latency_ns": lat1,
                   "bytes_per_clock": bpc1, "path": "both" if shared_texture else "load_store",
                   "per_core": True})
    if not shared_texture:
        tex = among([4 * KIB, 8 * KIB, 16 * KIB])
        caches.append({"name": "texture", "capacity_bytes": tex, "line_bytes": 64, "associativity": 4,
                       "replacement": "lru", "hit_latency_ns": round(lat1 * between(0.8, 1.3)),
                       "bytes_per_clock": bpc1, "path": "texture", "per_core": True})
    # Exclusive only where it fits a hierarchy: a shared level behind a
    # load/store L1 on both paths' first level.
    l2_excl = shared_texture and rng.random() < 0.25
    caches.append({"name": "L2", "capacity_bytes": l2, "line_bytes": line2, "associativity": ways2,
                   "replacement": replacement(ways2), "hit_latency_ns": lat2, "bytes_per_clock": bpc2,
                   "path": "both", "per_core": False, "inclusion": "exclusive" if l2_excl else "inclusive"})
    last_cap, last_lat = l2, lat2
    if rng.random() < 0.25 and l2 <= 4 * MIB:
        ways3 = among([16, 32])
        l3 = max(1, round(l2 * among([4, 8]) / (line2 * ways3))) * line2 * ways3
        l3 = min(l3, 16 * MIB // (line2 * ways3) * (line2 * ways3))
        if l3 > l2:
            last_lat = round(lat2 * between(1.5, 2.2))
            caches.append({"name": "SLC", "capacity_bytes": l3, "line_bytes": line2, "associativity": ways3,
                           "replacement": replacement(ways3), "hit_latency_ns": last_lat,
                           "bytes_per_clock": among([32, 64]), "path": "both", "per_core": False})
            last_cap = l3
    dram_lat = round(last_lat * between(1.5, 2.5))
    last_gbps = caches[-1]["bytes_per_clock"] * clock / 1000
    dram_gbps = round(last_gbps * between(0.3, 0.7), 1)

    # TLB: its reach anywhere from below the last cache to far beyond it.
    page = among([4 * KIB, 16 * KIB, 64 * KIB, 2 * MIB])
    reach_target = among([0.25, 0.5, 2, 4, 8, 16]) * last_cap
    reach_target = min(max(reach_target, 1 * MIB), 128 * MIB)
    entries = max(16, min(1 << 20, round(reach_target / page)))
    tlb_ways = among([0, 0, 4])
    if tlb_ways:
        entries = max(tlb_ways, entries // tlb_ways * tlb_ways)
    tlb = {"entries": entries, "page_bytes": page, "associativity": tlb_ways,
           "replacement": among(["lru", "random"]), "miss_penalty_ns": round(between(60, 300))}

    local_on_chip = rng.random() < 0.6
    fma_per_lane = among([1, 2])
    sigma = among([0.002, 0.005, 0.01, 0.015, 0.02])
    return {
        "name": f"wide-{seed}",
        "core": {"shader_cores": cores, "units_per_core": units, "lanes_per_unit": lanes, "wave_width": wave,
                 "waves_per_unit": waves, "register_file_bytes_per_unit": waves * wave * 4 * 32,
                 "register_alloc_granularity": 4, "max_registers_per_item": 64, "clock_mhz": clock,
                 "workgroups_per_core": groups, "max_work_group_size": max_wg},
        "memory": {"caches": caches, "tlb": tlb,
                   "dram": {"latency_ns": dram_lat, "bandwidth_gbps": dram_gbps},
                   "global_mem_bytes": 2 << 30, "max_alloc_bytes": 512 << 20},
        "local_memory": {"bytes_per_work_group": among([16384, 32768, 49152, 65536]),
                         "location": "on_chip" if local_on_chip else "load_store_cache",
                         "latency_ns": round(lat1 * between(0.3, 0.8)) if local_on_chip else lat1,
                         "bytes_per_clock": among([16, 32, 64, 128]), "workgroups_per_core_with_local": 0},
        "rates": {"ops": [{"type": "float", "op": "fma", "per_clock_per_core": units * lanes * fma_per_lane},
                          {"type": "float", "op": "add", "per_clock_per_core": units * lanes * fma_per_lane}],
                  "dual_issue_fma_add": rng.random() < 0.5},
        "icache": {"capacity_bytes": among([8192, 16384, 32768]), "bytes_per_op": among([4, 6, 8]),
                   "base_code_bytes": 512, "miss_bytes_per_clock": among([4, 8])},
        # Image limits of current GPUs (2^27-pixel buffer images), so the
        # texture sweep can pass every cache.
        "images": {"max_buffer_pixels": 1 << 27, "max_2d_width": 16384, "max_2d_height": 16384},
        "host": {"link_bandwidth_gbps": round(between(1, 25), 1), "zero_copy": rng.random() < 0.5},
        "raster": draw_raster(seed, cores),
        "matrix": draw_matrix(seed),
        "noise": {"relative_sigma": sigma, "outlier_probability": among([0.0, 0.01, 0.02, 0.04]),
                  "outlier_max_relative": among([0.2, 0.3, 0.5]), "seed": seed},
    }


# ---------------------------------------------------------------- truth


def value(x):
    return x["value"] if isinstance(x, dict) else x


SIZE, LAT, RATE, EXACT, REACH = 0.10, 0.05, 0.10, 0.0, 0.25


def family_of(fid):
    parts = fid.split(".")
    return ".".join("L*" if (p.startswith("L") and p[1:].isdigit()) else p for p in parts)


def numerics_expectations(u, add):
    """What the matrix probe's numerics part should read of shape `u`'s
    arithmetic, as draw_matrix draws them (the canonical form's values)."""
    ar = u.get("arithmetic")
    if ar is None:
        return
    base = f"compute.matrix.{u['a']}x{u['b']}->{u.get('result', u['c'])}.{u['m']}x{u['n']}x{u['k']}.numerics."
    add(base + "matches_model", True, EXACT)
    if u["c"] in ("i32", "u32"):
        add(base + "integer_overflow", ar.get("integer_overflow", "wrap"), EXACT)
        return
    exact = ar["sum_bits"] == 0
    same = "every value gives the same results under the arithmetic found"
    add(base + "products", ar["products"], EXACT)
    add(base + "sum_bits", "exact" if exact else ar["sum_bits"], EXACT)
    add(base + "sum_rounding", ar["sum_rounding"], EXACT, same if exact else None)
    add(base + "alignment", ar["alignment"], EXACT, same if exact else None)
    add(base + "block", ar["block"] or u["k"], EXACT, same if exact else None)
    add(base + "order", ar["order"], EXACT, same if exact or ar["block"] == 1 else None)
    add(base + "result_rounding", ar["result_rounding"], EXACT, None if exact else same)
    add(base + "subnormal_inputs", ar["subnormal_inputs"], EXACT)
    add(base + "subnormal_outputs", ar["subnormal_outputs"], EXACT,
        None if ar["subnormal_inputs"] else "only a subnormal C reaches a subnormal f32 result, and it is flushed")
    add(base + "overflow", ar.get("overflow", "infinity"), EXACT, "f16 products cannot reach f32's overflow")


def expectations(d, series_ids):
    """(finding id, configured value, tolerance, why-unmeasurable or None) for
    every parameter of description `d` a default run should recover."""
    out = []

    def add(fid, configured, tol, na=None):
        out.append((fid, configured, tol, na))

    core, mem = d["core"], d["memory"]
    clock = value(core["clock_mhz"])
    cores = value(core["shader_cores"])
    caches = mem["caches"]
    tlb = mem.get("tlb")
    reach = value(tlb["entries"]) * value(tlb["page_bytes"]) if tlb else None

    def path_levels(path):
        skip = "texture" if path == "load" else "load_store"
        return [c for c in caches if c.get("path", "both") != skip]

    def effective(levels):
        """Per level: the footprint a dependent chase keeps hitting up to (an
        exclusive level adds the nearer levels' capacities)."""
        eff, total = [], 0
        for c in levels:
            cap = value(c["capacity_bytes"])
            total = total + cap if c.get("inclusion") == "exclusive" else cap
            eff.append(total)
        return eff

    loads = path_levels("load")
    eff = effective(loads)
    # A level whose capacity lies beyond the TLB's reach shows only through
    # translation misses; the staircase must still find it (the latency
    # probe's sweep reaches 4x the device's largest cache).
    add("memory.cache_levels", len(loads), EXACT)
    # Bandwidth: what loads served by a level get, so no more than any level
    # they pass on the way (a shared L2 read through per-core L1s of less
    # aggregate bandwidth delivers the L1s' rate).
    through = float("inf")
    for i, c in enumerate(loads, 1):
        add(f"memory.L{i}.capacity_bytes", eff[i - 1], SIZE)
        add(f"memory.L{i}.latency_ns", value(c["hit_latency_ns"]), LAT)
        # The same latency counted in the core's cycles (latency_ns times the
        # measured clock, itself judged as device.measured_clock_mhz).
        add(f"memory.L{i}.latency_cycles", value(c["hit_latency_ns"]) * clock / 1e3, LAT)
        bw = value(c["bytes_per_clock"]) * clock / 1e3 * (cores if c.get("per_core", False) else 1)
        through = min(through, bw)
        add(f"memory.L{i}.bandwidth_gbps", through, RATE)
        add(f"memory.L{i}.shared_by_cus", not c.get("per_core", False), EXACT,
            "one compute unit" if cores == 1 else None)
        add(f"memory.L{i}.fetch_bytes", value(c.get("sector_bytes", c["line_bytes"])), EXACT)
    add("memory.dram.latency_ns", value(mem["dram"]["latency_ns"]), LAT)
    add("memory.dram.latency_cycles", value(mem["dram"]["latency_ns"]) * clock / 1e3, LAT)
    add("memory.dram.bandwidth_gbps", min(through, value(mem["dram"]["bandwidth_gbps"])), RATE)
    if tlb:
        add("memory.tlb.reach_bytes", reach, REACH)
        add("memory.tlb.miss_penalty_ns", value(tlb["miss_penalty_ns"]), LAT)
    add("memory.line_bytes", value(loads[0]["line_bytes"]), EXACT)
    add("memory.coalescing.segment_bytes", value(loads[0].get("sector_bytes", loads[0]["line_bytes"])), EXACT)

    tex = path_levels("texture")
    teff = effective(tex)
    add("texture.cache_levels", len(tex), EXACT)
    for i, c in enumerate(tex, 1):
        add(f"texture.L{i}.capacity_bytes", teff[i - 1], SIZE)
        add(f"texture.L{i}.latency_ns", value(c["hit_latency_ns"]), LAT)
    add("texture.shares_l1", tex[0].get("path", "both") == "both", EXACT)

    lm = d.get("local_memory")
    if lm:
        add("local.latency_ns", value(lm["latency_ns"]), LAT)
        add("local.capacity_bytes", value(lm["bytes_per_work_group"]), SIZE)
        add("local.on_chip", lm["location"] == "on_chip", EXACT)

    wave = value(d.get("divergence_granularity", core["wave_width"]))
    add("exec.wave_width", wave, EXACT)
    max_wg = value(core["max_work_group_size"])
    group_waves = max_wg // value(core["wave_width"])
    add("exec.scheduler_partitions", value(core["units_per_core"]), EXACT,
        f"{group_waves} waves per work-group" if group_waves < 8 else None)
    # What a compute kernel can hold at once: the wave slots, or fewer where
    # the work-group limit binds for groups of the largest size.
    group = min(max_wg, 1024)
    group_w = math.ceil(group / value(core["wave_width"]))
    slots = value(core["waves_per_unit"]) * value(core["units_per_core"])
    add("exec.max_waves_per_cu", min(slots, value(core["workgroups_per_core"]) * group_w), EXACT)
    ic = d.get("icache")
    if ic:
        # Past the cache each wave streams its loop from the next level at
        # miss_bytes_per_clock a core (family_icache.cpp): that costs time
        # only where the stream brings fewer wave-instructions a clock than
        # the adds issue. Where it keeps up, overflowing the cache costs
        # nothing, and no timing can tell its size.
        fp32_add = next((value(o["per_clock_per_core"]) for o in d.get("rates", {}).get("ops", [])
                         if o["type"] == "float" and o["op"] == "add"), None)
        fetched = value(ic["miss_bytes_per_clock"]) / value(ic["bytes_per_op"])
        issued = fp32_add / value(core["wave_width"]) if fp32_add else None
        add("exec.icache_bytes", value(ic["capacity_bytes"]), SIZE,
            f"its misses stream {fetched:g} wave-instructions a clock, the adds issue {issued:g}: no overflow costs time"
            if issued is not None and fetched >= issued else None)
        add("exec.code_bytes_per_op", value(ic["bytes_per_op"]), LAT)
    types = {"char": "int8", "short": "int16", "int": "int32", "long": "int64",
             "half": "fp16", "float": "fp32", "double": "fp64"}
    rates = d.get("rates", {})
    for op in rates.get("ops", []):
        name = f"{types[op['type']]}.{op['op']}"
        add(f"compute.{name}.ops_per_clock_per_cu", value(op["per_clock_per_core"]), RATE,
            None if f"compute.{name}" in series_ids else "not in the compute matrix")
    add("compute.dual_issue.fp32_fma_add", bool(value(rates.get("dual_issue_fma_add", False))), EXACT)
    for u in d.get("matrix", {}).get("shapes", []):
        numerics_expectations(u, add)
    add("device.measured_clock_mhz", clock, RATE)
    add("sched.max_workgroups_per_cu", value(core["workgroups_per_core"]), EXACT)
    add("sched.one_workgroup_per_cu", value(core["workgroups_per_core"]) == 1, EXACT)
    host = d.get("host")
    if host:
        add("host.h2d_gbps", value(host["link_bandwidth_gbps"]), RATE)
        add("host.d2h_gbps", value(host["link_bandwidth_gbps"]), RATE)
        add("host.zero_copy", bool(value(host["zero_copy"])), EXACT)
    at = d.get("atomics")
    if at:
        add("atomics.global.latency_ns", value(at["global_latency_ns"]), LAT)
        add("atomics.local.latency_ns", value(at["local_latency_ns"]), LAT)
        add("atomics.global.add_throughput_gops", value(at["global_adds_per_clock"]) * clock / 1e3, RATE)
    la = d.get("launch")
    if la:
        add("launch.dispatch_us", value(la["dispatch_us"]), LAT)
        add("launch.back_to_back_us", value(la["back_to_back_us"]), LAT)
    ra = d.get("raster")
    if ra:
        # The raster probe's pass is one RGBA8 attachment (4 B per pixel),
        # at which every drawn tile fits its memory whole.
        traced = None if value(ra.get("fragment_side_effects", True)) else "no fragment side effects"
        add("graphics.tile.width_px", value(ra["tile_width_px"]), EXACT, traced)
        add("graphics.tile.height_px", value(ra["tile_height_px"]), EXACT, traced)
        add("graphics.tile.order", value(ra["tile_order"]), EXACT, traced)
        add("graphics.binning", bool(value(ra["binning"])), EXACT, traced)
        binning = bool(value(ra["binning"]))
        mem_bytes = value(ra.get("tile_memory_bytes", 0))
        add("graphics.tile.memory_bytes", mem_bytes, SIZE,
            traced or (None if mem_bytes else "the tile never shrinks")
            or (None if binning else "an immediate renderer holds no tile on chip"))
        per_clock = value(ra["rops_per_core"]) * cores * clock / 1e3
        # An immediate renderer writes every rectangle's pixels to memory
        # (and reads them back when blending) through the first shared cache
        # that holds the framebuffer, else DRAM: it fills no faster than that
        # memory takes the bytes. The rop probe's framebuffer on a GPU is
        # 1024 x 1024 px.
        bytes_per_px = {"rgba8": 4, "rgba16f": 8, "rgba32f": 16, "depth32f": 4}

        def fill_cap(fmt, blended):
            if binning:
                return float("inf")
            fb_bytes = 1024 * 1024 * bytes_per_px[fmt]
            gbps = value(mem["dram"]["bandwidth_gbps"])
            for c in loads:
                if not c.get("per_core", False) and value(c["capacity_bytes"]) >= fb_bytes:
                    gbps = value(c["bytes_per_clock"]) * clock / 1e3
                    break
            return gbps / (bytes_per_px[fmt] * (2 if blended else 1))

        for fmt, rate in ra["rop_pixels_per_clock"].items():
            add(f"graphics.rop.{fmt}.gpixels", min(value(rate) * per_clock, fill_cap(fmt, False)), RATE)
        blend = ra.get("rop_blend_pixels_per_clock", {})
        for fmt, rate in ra["rop_pixels_per_clock"].items():
            if fmt != "depth32f":
                add(f"graphics.rop.{fmt}.blend.gpixels",
                    min(value(blend.get(fmt, rate)) * per_clock, fill_cap(fmt, True)), RATE)
        # The texfill probe's fragments take 16 samples each and blend one
        # RGBA8 pixel: on an immediate renderer the framebuffer's memory may
        # bound the pass before the texture units do.
        units = value(ra["texture_units_per_core"]) * cores * clock / 1e3
        for flt, rate in ra["texels_per_clock"].items():
            add(f"graphics.texture.{flt}.gtexels", min(value(rate) * units, 16 * fill_cap("rgba8", True)), RATE)
        fc = ra.get("fb_compression")
        add("graphics.fb_compression.block_px", value(fc["block_px"]) if fc else 0, EXACT,
            None if fc else "no framebuffer compression")
        add("graphics.transaction_elimination", bool(value(ra.get("transaction_elimination", False))), EXACT)
    return out


# ---------------------------------------------------------------- scoring

# The probe whose series each finding is read from (a run with --probes
# expects only what its probes can give).
PROBE_OF = [("memory.L*.bandwidth", "bandwidth"), ("memory.dram.bandwidth", "bandwidth"),
            ("memory.L*.fetch", "geometry"), ("memory.L*.shared", "geometry"), ("memory.line", "geometry"),
            ("memory.tlb", "tlb"), ("memory.coalescing", "coalescing"), ("memory.", "latency"),
            ("texture.", "texture"), ("local.", "local"), ("exec.wave_width", "divergence"),
            ("exec.scheduler", "divergence"), ("exec.max_waves", "occupancy"), ("exec.", "icache"),
            ("compute.matrix.", "matrix"), ("compute.", "compute"), ("device.measured_clock", "clock"), ("sched.", "scheduling"),
            ("host.", "transfer"), ("atomics.", "atomics"), ("launch.", "launch"),
            ("graphics.tile.memory", "tilemem"), ("graphics.tile", "raster"), ("graphics.binning", "raster"),
            ("graphics.rop", "rop"), ("graphics.texture", "texfill"), ("graphics.fb_compression", "fbcompress"),
            ("graphics.transaction", "txelim")]


def probe_of(fid):
    fam = family_of(fid)
    for prefix, probe in PROBE_OF:
        if fam.startswith(prefix):
            return probe
    return None



def basis(x):
    return x.get("basis", "measured") if isinstance(x, dict) else "measured"


def judge_model(model, d, name):
    """Rows (gpu, field family, field, configured, found, basis, verdict, error)
    setting model.json beside the description the GPU was drawn from: the
    closed loop's model, field by field. Fields the model took as assumed are
    listed ("assumed") but not counted: nothing measured them."""
    rows = []

    def add(field, fam, configured, node, tol):
        if configured is None:
            return
        if node is None:
            rows.append((name, fam, field, configured, None, None, "missing", ""))
            return
        got, b = value(node), basis(node)
        if b == "assumed":
            rows.append((name, fam, field, configured, got, b, "assumed", ""))
            return
        if tol == 0:
            ok = got == configured
            err = 0.0 if ok else float("inf")
        else:
            err = abs(got / configured - 1) if configured else float("inf")
            ok = err <= tol
        rows.append((name, fam, field, configured, got, b, "ok" if ok else "wrong", err))

    mc, dc = model.get("core", {}), d["core"]
    add("core.shader_cores", "core.shader_cores", dc.get("shader_cores"), mc.get("shader_cores"), EXACT)
    add("core.wave_width", "core.wave_width", dc.get("wave_width"), mc.get("wave_width"), EXACT)
    add("core.clock_mhz", "core.clock_mhz", dc.get("clock_mhz"), mc.get("clock_mhz"), RATE)
    add("core.workgroups_per_core", "core.workgroups_per_core", dc.get("workgroups_per_core"),
        mc.get("workgroups_per_core"), EXACT)
    mm, dm = model.get("memory", {}), d["memory"]
    for path, fam in ((("load_store", "both"), "memory.load"), (("texture",), "memory.texture")):
        truth = [c for c in dm.get("caches", []) if c.get("path", "load_store") in path]
        found = [c for c in mm.get("caches", []) if value(c.get("path", "load_store")) in path]
        if fam == "memory.load":
            add(f"{fam}.levels", f"{fam}.levels", len(truth), {"value": len(found)}, EXACT)
        for k, c in enumerate(truth):
            m = found[k] if k < len(found) else None
            add(f"{fam}.L{k + 1}.capacity_bytes", f"{fam}.L*.capacity_bytes", c["capacity_bytes"],
                m and m.get("capacity_bytes"), SIZE)
            add(f"{fam}.L{k + 1}.hit_latency_ns", f"{fam}.L*.hit_latency_ns", c["hit_latency_ns"],
                m and m.get("hit_latency_ns"), LAT)
            # A shape the readers never measure is judged only where the fit set it.
            add(f"{fam}.L{k + 1}.replacement", f"{fam}.L*.replacement", c.get("replacement", "lru"),
                m and m.get("replacement"), EXACT)
    if "dram" in dm:
        add("memory.dram.latency_ns", "memory.dram.latency_ns", dm["dram"]["latency_ns"],
            mm.get("dram", {}).get("latency_ns"), LAT)
        add("memory.dram.bandwidth_gbps", "memory.dram.bandwidth_gbps", dm["dram"]["bandwidth_gbps"],
            mm.get("dram", {}).get("bandwidth_gbps"), RATE)
    if "tlb" in dm:
        t, mt = dm["tlb"], mm.get("tlb")
        reach = None
        if mt:
            reach = {"value": value(mt["entries"]) * value(mt["page_bytes"]),
                     "basis": "fitted" if "fitted" in (basis(mt["entries"]), basis(mt["page_bytes"]))
                     else basis(mt["entries"])}
        add("memory.tlb.reach_bytes", "memory.tlb.reach_bytes", t["entries"] * t["page_bytes"], reach, REACH)
        add("memory.tlb.miss_penalty_ns", "memory.tlb.miss_penalty_ns", t["miss_penalty_ns"],
            mt and mt.get("miss_penalty_ns"), LAT)
        add("memory.tlb.page_bytes", "memory.tlb.page_bytes", t["page_bytes"], mt and mt.get("page_bytes"), EXACT)
        add("memory.tlb.replacement", "memory.tlb.replacement", t.get("replacement", "lru"),
            mt and mt.get("replacement"), EXACT)
    if "local_memory" in d:
        lm, ml = d["local_memory"], model.get("local_memory", {})
        add("local.latency_ns", "local.latency_ns", lm.get("latency_ns"), ml.get("latency_ns"), LAT)
    return rows


def report_model(rows, drawn_names):
    """The model-field tables (drawn GPUs, presets)."""
    def table(select, title):
        fams = {}
        for r in rows:
            if select(r):
                c = fams.setdefault(r[1], {"ok": 0, "wrong": 0, "missing": 0, "assumed": 0, "fitted": 0})
                c[r[6]] += 1
                c["fitted"] += r[5] == "fitted"
        judged = {k: sum(c[k] for c in fams.values()) for k in ("ok", "wrong", "missing", "assumed", "fitted")}
        n = judged["ok"] + judged["wrong"] + judged["missing"]
        print(f"\n### Model fields, {title}: {n} judged, {100 * judged['ok'] / max(n, 1):.1f}% within tolerance "
              f"({judged['fitted']} fitted; {judged['assumed']} assumed, not judged)\n")
        print("| field | judged | within tolerance | wrong | missing | of them fitted | assumed |")
        print("|---|---|---|---|---|---|---|")
        for fam in sorted(fams):
            c = fams[fam]
            m = c["ok"] + c["wrong"] + c["missing"]
            print(f"| {fam} | {m} | {c['ok']} ({100 * c['ok'] / max(m, 1):.0f}%) | {c['wrong']} | {c['missing']} | "
                  f"{c['fitted']} | {c['assumed']} |")
        return judged, n

    table(lambda r: r[0] in drawn_names, f"drawn GPUs ({len(drawn_names)})")
    if {r[0] for r in rows} - drawn_names:
        table(lambda r: r[0] not in drawn_names, "presets")
    bad = [r for r in rows if r[6] == "wrong"]
    if bad:
        print("\n### Model fields outside tolerance\n")
        for r in sorted(bad, key=lambda r: r[2])[:40]:
            err = r[7]
            print(f"- {r[0]} `{r[2]}` ({r[5]}): configured {fmt(r[3])}, model {fmt(r[4])}"
                  f" ({'value' if err == float('inf') else f'{100 * err:.0f}% off'})")


def judge(results, name):
    """Rows (gpu, family, id, configured, found, confidence, verdict, reason)."""
    d = results["device"]["vendor_info"]["sim_description"]
    found = {f["id"]: f for f in results["findings"]}
    unfound = {u["id"]: u.get("reason", "") for u in results.get("unfound", [])}
    series_ids = {s["id"] for s in results["series"]}
    ran = set(results.get("run", {}).get("probes", {}))
    rows = []
    for fid, configured, tol, na in expectations(d, series_ids):
        fam = family_of(fid)
        if probe_of(fid) not in ran:
            continue
        if na:
            # Not counted: the description leaves nothing to measure. Kept
            # (with what was found, if anything) for the report's list.
            f = found.get(fid)
            rows.append((name, fam, fid, configured, f["value"] if f else None, f.get("confidence") if f else None,
                         "not-expected", na))
            continue
        f = found.get(fid)
        if f is None:
            reason = unfound.get(fid)
            # A latency in cycles is the latency in ns times the clock: where
            # the ns finding is missing, its reason is this one's.
            if not reason and fid.endswith(".latency_cycles") and fid.replace("_cycles", "_ns") not in found:
                ns_reason = unfound.get(fid.replace("_cycles", "_ns"))
                reason = f"{fid.replace('_cycles', '_ns')} missing: {ns_reason}" if ns_reason else None
            # A level past the count found: results.json says how many
            # levels it found (memory.cache_levels, itself judged), which is
            # the reason its level-n findings are absent.
            parts = fid.split(".")
            if not reason and len(parts) > 2 and parts[1][:1] == "L" and parts[1][1:].isdigit():
                count = found.get(f"{parts[0]}.cache_levels")
                if count is None or int(parts[1][1:]) > count["value"]:
                    reason = f"{parts[0]}.cache_levels found {count['value'] if count else 'none'}"

            rows.append((name, fam, fid, configured, None, None,
                         "missing" if reason else "missing-noreason", reason or ""))
            continue
        got, conf = f["value"], f.get("confidence", 0)
        if isinstance(configured, bool) or tol == 0:
            ok = got == configured or (isinstance(got, (int, float)) and not isinstance(got, bool)
                                       and not isinstance(configured, bool) and abs(got - configured) < 1e-9)
            err = 0.0 if ok else float("inf")
        else:
            err = abs(got / configured - 1) if configured else float("inf")
            ok = err <= tol
        verdict = "ok" if ok else ("confidently-wrong" if conf >= 0.8 else "wrong")
        rows.append((name, fam, fid, configured, got, conf, verdict, err))
    # Findings the description cannot back (a level that is not there).
    for fid, f in found.items():
        if fid.startswith(("memory.L", "texture.L")) and fid.split(".")[1][1:].isdigit():
            if fid not in {e[0] for e in expectations(d, series_ids)}:
                conf = f.get("confidence", 0)
                rows.append((name, family_of(fid), fid, None, f["value"], conf,
                             "confidently-wrong" if conf >= 0.8 else "wrong", "a level the GPU does not have"))
    return rows


DEFAULT_PROBES = "latency,bandwidth,local,texture,coalescing,tlb,geometry,transfer,launch,atomics,scheduling,clock," \
                 "compute,oplatency,matrix,divergence,occupancy,icache"


def finished(path, probes):
    """Whether results.json at `path` holds a run that got through every probe."""
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError):
        return None
    done = set(r.get("run", {}).get("probes", {}))
    return r if set((probes or DEFAULT_PROBES).split(",")) <= done else None


def load_model(folder):
    try:
        with open(os.path.join(folder, "model.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# How the findings are held, by --loop: gpuscope run's and gpuscope
# analyze's flags for it.
LOOP_RUN_FLAGS = {"fit": [], "replay": ["--no-fit"], "none": ["--no-replay"]}
LOOP_ANALYZE_FLAGS = {"fit": [], "replay": ["--replay", "--no-fit"], "none": ["--no-replay"]}


def run_one(job):
    gpuscope, out, name, device, quick, probes, reuse, budget_scale, loop = job
    if reuse:
        r = finished(os.path.join(out, "results.json"), probes)
        if r is not None and reuse == "reanalyze":
            # The stored series analysed afresh by this gpuscope (analysis
            # changes, without re-running the probes), in a folder per --loop.
            again = os.path.join(out, f"reanalysis-{loop}")
            p = subprocess.run([gpuscope, "analyze", os.path.join(out, "results.json"), "--out", again]
                               + LOOP_ANALYZE_FLAGS[loop],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            r = finished(os.path.join(again, "results.json"), probes) if p.returncode == 0 else None
            if r is None:
                return name, None, None, 0, f"analyze failed: {p.stderr[-300:]}"
            return name, r, load_model(again), sum(p["wall_s"] for p in r["run"]["probes"].values()), None
        if r is not None:
            return name, r, load_model(out), sum(p["wall_s"] for p in r["run"]["probes"].values()), None
    cmd = [gpuscope, "run", "--device", device, "--out", out, "--quiet"]
    if quick:
        cmd.append("--quick")
    # The probes whose findings are judged, not the whole default set (lbm
    # and sustain give nothing the description holds).
    cmd += ["--probes", probes or DEFAULT_PROBES]
    if budget_scale != 1:
        cmd += ["--budget-scale", str(budget_scale)]
    cmd += LOOP_RUN_FLAGS[loop]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    path = os.path.join(out, "results.json")
    if not os.path.exists(path):
        return name, None, None, wall, f"exit {p.returncode}: {p.stderr[-500:]}"
    with open(path) as f:
        return name, json.load(f), load_model(out), wall, None if p.returncode == 0 else f"exit {p.returncode}"


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def print_grouped(title, groups):
    """A section of (family, reason) -> GPUs, the largest groups first."""
    print(f"\n### {title}\n")
    for (fam, why), gpus in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:40]:
        print(f"- `{fam}` x{len(gpus)} ({', '.join(gpus[:4])}{', ...' if len(gpus) > 4 else ''}): {why}")


def report(rows, walls, failures, drawn_names):
    kinds = ["ok", "wrong", "confidently-wrong", "missing", "missing-noreason"]
    not_expected = [r for r in rows if r[6] == "not-expected"]
    rows = [r for r in rows if r[6] != "not-expected"]

    def table(select, title):
        fams = {}
        for r in rows:
            if select(r):
                fams.setdefault(r[1], {k: 0 for k in kinds})[r[6]] += 1
        tot = {k: sum(c[k] for c in fams.values()) for k in kinds}
        n = sum(tot.values())
        print(f"\n### {title}: {n} findings expected, "
              f"{100 * tot['ok'] / max(n, 1):.1f}% within tolerance, "
              f"{tot['confidently-wrong']} confidently wrong, "
              f"{tot['missing'] + tot['missing-noreason']} missing ({tot['missing-noreason']} without a reason)\n")
        print("| family | n | within tolerance | wrong | confidently wrong | missing (reason) | missing (none) |")
        print("|---|---|---|---|---|---|---|")
        for fam in sorted(fams):
            c = fams[fam]
            m = sum(c.values())
            print(f"| {fam} | {m} | {c['ok']} ({100 * c['ok'] / m:.0f}%) | {c['wrong']} | "
                  f"{c['confidently-wrong']} | {c['missing']} | {c['missing-noreason']} |")
        print(f"| **all** | {n} | {tot['ok']} ({100 * tot['ok'] / max(n, 1):.1f}%) | {tot['wrong']} | "
              f"{tot['confidently-wrong']} | {tot['missing']} | {tot['missing-noreason']} |")
        return tot, n

    tot_d, n_d = table(lambda r: r[0] in drawn_names, f"Drawn GPUs ({len(drawn_names)})")
    presets = {r[0] for r in rows} - drawn_names
    if presets:
        table(lambda r: r[0] not in drawn_names, f"Presets ({len(presets)})")

    print("\n### Calibration (every reported finding with a configured value)\n")
    print("| confidence | findings | within tolerance | fraction right |")
    print("|---|---|---|---|")
    edges = [0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001]
    for lo, hi in zip(edges, edges[1:]):
        sel = [r for r in rows if r[5] is not None and lo <= r[5] < hi]
        good = sum(r[6] == "ok" for r in sel)
        label = f"[{lo:.2f}, {min(hi, 1):.2f}{']' if hi > 1 else ')'}"
        print(f"| {label} | {len(sel)} | {good} | {good / len(sel):.3f} |" if sel else f"| {label} | 0 | 0 | - |")
    hi_sel = [r for r in rows if r[5] is not None and r[5] >= 0.8]
    if hi_sel:
        good = sum(r[6] == "ok" for r in hi_sel)
        print(f"| **>= 0.80** | {len(hi_sel)} | {good} | {good / len(hi_sel):.4f} |")

    print("\n### Worst cases\n")
    bad = [r for r in rows if r[6] in ("confidently-wrong", "wrong")]
    bad.sort(key=lambda r: (r[6] != "confidently-wrong", -(r[5] or 0)))
    for r in bad[:40]:
        err = r[7]
        err_s = err if isinstance(err, str) else ("value" if err == float("inf") else f"{100 * err:.0f}% off")
        print(f"- {r[0]} `{r[2]}`: configured {fmt(r[3])}, found {fmt(r[4])} at confidence {r[5]:.2f} ({err_s})")
    miss = [r for r in rows if r[6].startswith("missing")]
    by_fam = {}
    for r in miss:
        by_fam.setdefault((r[1], r[7][:90] if r[7] else "(no reason)"), []).append(r[0])
    if by_fam:
        print_grouped("Missing, by family and reason", by_fam)
    by_why = {}
    for r in not_expected:
        found = f", found {fmt(r[4])}" if r[4] is not None else ""
        by_why.setdefault((r[1], re.sub(r"\d+(\.\d+)?", "N", r[7])[:90]), []).append(r[0] + found)
    if by_why:
        print_grouped("Not expected (the description leaves nothing to measure), by family and reason", by_why)
    if failures:
        print("\n### Runs that failed\n")
        for name, why in failures:
            print(f"- {name}: {why}")
    print(f"\nRuns: {len(walls)}, {sum(walls):.0f} s of run time in all, longest {max(walls or [0]):.1f} s")
    return tot_d, n_d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpuscope", default="build/release/gpuscope")
    ap.add_argument("--count", type=int, default=40, help="drawn GPUs")
    ap.add_argument("--seed0", type=int, default=1, help="first seed")
    ap.add_argument("--seeds", default="", help="comma-separated seeds instead of --seed0/--count")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="/tmp/gpuscope-recovery")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budget-scale", type=float, default=1.0,
                    help="passed to gpuscope run: every probe's time budget times this")
    ap.add_argument("--probes", default="", help="comma-separated probes (default: the whole default set)")
    ap.add_argument("--no-presets", action="store_true")
    ap.add_argument("--presets", default="", help="comma-separated presets instead of all of them")
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("--reuse", action="store_true",
                    help="keep the runs under --out that finished (same seeds, same binary): resume or re-judge")
    ap.add_argument("--reanalyze", action="store_true",
                    help="with the runs under --out that finished, analyse their series afresh with --gpuscope")
    ap.add_argument("--loop", choices=["fit", "replay", "none"], default="fit",
                    help="how the findings are held (docs/closed-loop.md): fit, the whole loop (default); "
                         "replay, held to the readers' model's replay, no fit (--no-fit); none, the readers "
                         "alone (--no-replay). With --reanalyze: the stored runs analysed again so")
    ap.add_argument("--no-loop", action="store_const", dest="loop", const="none", help="--loop none")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 on any confidently wrong finding or missing finding without a reason")
    ap.add_argument("--print-description", type=int, help="print the description of this seed and exit")
    args = ap.parse_args()
    if args.print_description is not None:
        print(json.dumps(draw(args.print_description), indent=1))
        return 0
    os.makedirs(os.path.join(args.out, "descriptions"), exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",") if s] or list(range(args.seed0, args.seed0 + args.count))
    jobs, drawn = [], set()
    for seed in seeds:
        d = draw(seed)
        path = os.path.join(args.out, "descriptions", f"{d['name']}.json")
        with open(path, "w") as f:
            json.dump(d, f, indent=1)
        jobs.append((args.gpuscope, os.path.join(args.out, "runs", d["name"]), d["name"], f"sim:{path}", args.quick, args.probes, "reanalyze" if args.reanalyze else args.reuse, args.budget_scale, args.loop))
        drawn.add(d["name"])
    presets = [] if args.no_presets else [p for p in args.presets.split(",") if p] or PRESETS
    unknown = [p for p in presets if p not in PRESETS]
    if unknown:
        ap.error(f"unknown presets {unknown}; presets: {', '.join(PRESETS)}")
    for p in presets:
        jobs.append((args.gpuscope, os.path.join(args.out, "runs", p), p, f"sim:{p}", args.quick, args.probes, "reanalyze" if args.reanalyze else args.reuse, args.budget_scale, args.loop))
    t0 = time.monotonic()
    rows, model_rows, walls, failures = [], [], [], []
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for name, results, model, wall, err in pool.map(run_one, jobs):
            walls.append(wall)
            if err:
                failures.append((name, err))
            if results is not None:
                rows.extend(judge(results, name))
                if model is not None:
                    model_rows.extend(judge_model(model, results["device"]["vendor_info"]["sim_description"], name))
    print(f"## Recovery benchmark: {len(drawn)} drawn GPUs{f' (seeds {seeds[0]}..{seeds[-1]})' if seeds else ''}"
          f"{' + ' + str(len(presets)) + ' presets' if presets else ''}, "
          f"{'--quick' if args.quick else 'default budgets'}{f', --budget-scale {args.budget_scale:g}' if args.budget_scale != 1 else ''}, "
          f"{ {'fit': 'the whole loop (replay and fit)', 'replay': 'held to the replay, no fit', 'none': 'readers alone'}[args.loop]}, {args.jobs} jobs, "
          f"{time.monotonic() - t0:.0f} s wall")
    report(rows, walls, failures, drawn)
    report_model(model_rows, drawn)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([list(r[:7]) + [r[7] if isinstance(r[7], str) else (None if r[7] == float("inf") else r[7])]
                       for r in rows], f, default=str)
    if args.check:
        bad = [r for r in rows if r[6] in ("confidently-wrong", "missing-noreason")]
        for r in bad:
            print(f"CHECK FAILED: {r[0]} {r[2]}: {r[6]} (configured {fmt(r[3])}, found {fmt(r[4])})")
        return 1 if bad or failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
