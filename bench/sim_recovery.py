#!/usr/bin/env python3
"""Recovery table of the sim presets from whole default runs.

For each preset: `gpuscope run --device sim:NAME` (every probe, default
budgets), then every parameter the description put in set beside what the
findings say, with the issue's tolerance (capacities 10%, latencies and rates
5%, counts and flags exact). The description is read back from the run's
results.json (device.vendor_info.sim_description), so the table compares a
run with exactly what it ran on.

    bench/sim_recovery.py [--gpuscope build/release/gpuscope] [--out DIR] [PRESET ...]

Prints a Markdown table per preset and the run's wall time; exits 1 if any
parameter is outside its tolerance.
"""
import argparse
import json
import os
import subprocess
import sys
import time

PRESETS = ["mali-g52", "adreno-530", "adreno-615", "adreno-320", "adreno-420", "adreno-730", "adreno-740",
           "mali-g710", "immortalis-g715"]


def value(x):
    """A description number, plain or annotated."""
    return x["value"] if isinstance(x, dict) else x


class Table:
    def __init__(self, findings):
        self.f = {f["id"]: f for f in findings}
        self.rows = []
        self.failed = 0

    def found(self, fid):
        f = self.f.get(fid)
        return None if f is None else f["value"]

    def add(self, parameter, configured, fid, tolerance, scale=1.0, unmeasurable=None):
        """tolerance: relative (0.1), 0 for exact, None for shown only.
        unmeasurable: why the probe cannot see this parameter on this
        description (shown, not counted)."""
        got = self.found(fid)
        if isinstance(got, (int, float)) and not isinstance(got, bool):
            got = got * scale
        if unmeasurable:
            verdict = "n/a: " + unmeasurable
            tolerance = None
        elif got is None:
            verdict = "missing"
        elif tolerance is None:
            verdict = ""
        elif isinstance(configured, bool) or tolerance == 0:
            verdict = "ok" if got == configured else "MISS"
        else:
            verdict = "ok" if abs(got / configured - 1) <= tolerance else "MISS"
        if verdict in ("MISS", "missing") and tolerance is not None:
            self.failed += 1
        self.rows.append((parameter, configured, got, fid, verdict))

    def markdown(self):
        def fmt(v):
            if v is None:
                return "-"
            if isinstance(v, bool):
                return "yes" if v else "no"
            if isinstance(v, float):
                return f"{v:.4g}"
            return str(v)

        out = ["| parameter | configured | recovered | finding | |", "|---|---|---|---|---|"]
        for p, c, g, fid, v in self.rows:
            out.append(f"| {p} | {fmt(c)} | {fmt(g)} | `{fid}` | {v} |")
        return "\n".join(out)


def table_for(results):
    d = results["device"]["vendor_info"]["sim_description"]
    t = Table(results["findings"])
    core, mem = d["core"], d["memory"]
    clock = value(core["clock_mhz"])
    cores = value(core["shader_cores"])
    caches = mem["caches"]
    loads = [c for c in caches if c.get("path", "both") != "texture"]
    texture = [c for c in caches if c.get("path", "both") != "load_store"]
    tlb = mem.get("tlb")
    reach = value(tlb["entries"]) * value(tlb["page_bytes"]) if tlb else None

    # Load path: the levels a chase can see before the TLB runs out.
    visible = [c for c in loads if reach is None or value(c["capacity_bytes"]) < reach]
    t.add("cache levels (load path)", len(visible), "memory.cache_levels", 0)
    for i, c in enumerate(visible, 1):
        t.add(f"{c['name']} capacity B", value(c["capacity_bytes"]), f"memory.L{i}.capacity_bytes", 0.10)
        t.add(f"{c['name']} latency ns", value(c["hit_latency_ns"]), f"memory.L{i}.latency_ns", 0.05)
    for i, c in enumerate(visible, 1):
        bw = value(c["bytes_per_clock"]) * clock / 1e3 * (cores if c.get("per_core", False) else 1)
        t.add(f"{c['name']} bandwidth GB/s", min(bw, 1e9), f"memory.L{i}.bandwidth_gbps", 0.05)
    t.add("DRAM latency ns (within TLB reach)", value(mem["dram"]["latency_ns"]), "memory.dram.latency_ns", 0.05)
    t.add("DRAM bandwidth GB/s", value(mem["dram"]["bandwidth_gbps"]), "memory.dram.bandwidth_gbps", 0.05)
    if tlb:
        t.add("TLB reach B", reach, "memory.tlb.reach_bytes", 0.10)
        t.add("TLB miss penalty ns", value(tlb["miss_penalty_ns"]), "memory.tlb.miss_penalty_ns", 0.05)
    t.add("line B", value(loads[0]["line_bytes"]), "memory.line_bytes", 0)
    for i, c in enumerate(visible, 1):
        sector = value(c.get("sector_bytes", c["line_bytes"]))
        if f"memory.L{i}.fetch_bytes" in t.f:
            t.add(f"{c['name']} fetch B", sector, f"memory.L{i}.fetch_bytes", 0)
        if f"memory.L{i}.shared_by_cus" in t.f:
            t.add(f"{c['name']} shared by cores", not c.get("per_core", False), f"memory.L{i}.shared_by_cus", 0)
    t.add("coalescing segment B", value(loads[0].get("sector_bytes", loads[0]["line_bytes"])),
          "memory.coalescing.segment_bytes", 0)

    # Texture path.
    tex_visible = [c for c in texture if reach is None or value(c["capacity_bytes"]) < reach]
    t.add("texture levels", len(tex_visible), "texture.cache_levels", 0)
    for i, c in enumerate(tex_visible, 1):
        t.add(f"texture {c['name']} capacity B", value(c["capacity_bytes"]), f"texture.L{i}.capacity_bytes", 0.10)
        t.add(f"texture {c['name']} latency ns", value(c["hit_latency_ns"]), f"texture.L{i}.latency_ns", 0.05)
    first_tex = texture[0] if texture else None
    if first_tex:
        t.add("texture shares the load/store L1", first_tex.get("path", "both") == "both", "texture.shares_l1", 0)

    # Local memory.
    lm = d.get("local_memory")
    if lm:
        t.add("local latency ns", value(lm["latency_ns"]), "local.latency_ns", 0.05)
        t.add("local capacity B", value(lm["bytes_per_work_group"]), "local.capacity_bytes", 0.10)
        t.add("local on chip", lm["location"] == "on_chip", "local.on_chip", 0)

    # Execution.
    t.add("wave width", value(d.get("divergence_granularity", core["wave_width"])), "exec.wave_width", 0)
    # The partition sets need 8 waves in one work-group (strides up to 8).
    group_waves = value(core["max_work_group_size"]) // value(core["wave_width"])
    t.add("scheduler partitions", value(core["units_per_core"]), "exec.scheduler_partitions", 0,
          unmeasurable=f"{group_waves} waves per work-group" if group_waves < 8 else None)
    # What a compute kernel can hold at once: the wave slots, or fewer where
    # the work-group limit binds first for groups of the largest size.
    group = min(value(core["max_work_group_size"]), 1024) // 64 * 64
    slots = value(core["waves_per_unit"]) * value(core["units_per_core"])
    t.add("waves per core (slots, or groups x largest group)",
          min(slots, value(core["workgroups_per_core"]) * group // value(core["wave_width"])),
          "exec.max_waves_per_cu", 0)
    ic = d.get("icache")
    if ic:
        t.add("icache B", value(ic["capacity_bytes"]), "exec.icache_bytes", 0.10)
        t.add("code bytes per FP add", value(ic["bytes_per_op"]), "exec.code_bytes_per_op", 0.05)
    rates = d.get("rates", {})
    # Every listed rate, per clock per core at the description's clock (the
    # clock the sim reports). An emulated FMA is timed by its own cycles, not
    # by a listed rate.
    types = {"char": "int8", "short": "int16", "int": "int32", "long": "int64",
             "half": "fp16", "float": "fp32", "double": "fp64"}
    measured = {s["id"] for s in results["series"]}
    for op in rates.get("ops", []):
        name = f"{types[op['type']]}.{op['op']}"
        t.add(f"{name} per clock per core", value(op["per_clock_per_core"]),
              f"compute.{name}.ops_per_clock_per_cu", 0.05,
              unmeasurable=None if f"compute.{name}" in measured else "not in the compute matrix")
    t.add("dual issue FMA+ADD", bool(value(rates.get("dual_issue_fma_add", False))),
          "compute.dual_issue.fp32_fma_add", 0)
    t.add("clock MHz", clock, "device.measured_clock_mhz", 0.02)

    # System.
    t.add("work-groups per core", value(core["workgroups_per_core"]), "sched.max_workgroups_per_cu", 0)
    t.add("one work-group per core", value(core["workgroups_per_core"]) == 1, "sched.one_workgroup_per_cu", 0)
    host = d.get("host")
    if host:
        t.add("host link GB/s (h2d)", value(host["link_bandwidth_gbps"]), "host.h2d_gbps", 0.05)
        t.add("host link GB/s (d2h)", value(host["link_bandwidth_gbps"]), "host.d2h_gbps", 0.05)
        t.add("zero copy", bool(value(host["zero_copy"])), "host.zero_copy", 0)
    at = d.get("atomics")
    if at:
        t.add("global atomic round trip ns", value(at["global_latency_ns"]), "atomics.global.latency_ns", 0.05)
        t.add("local atomic round trip ns", value(at["local_latency_ns"]), "atomics.local.latency_ns", 0.05)
        t.add("uncontended atomic adds Gop/s", value(at["global_adds_per_clock"]) * clock / 1e3,
              "atomics.global.add_throughput_gops", 0.05)
    la = d.get("launch")
    if la:
        t.add("dispatch us", value(la["dispatch_us"]), "launch.dispatch_us", 0.05)
        t.add("back to back us", value(la["back_to_back_us"]), "launch.back_to_back_us", 0.05)
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpuscope", default="build/release/gpuscope")
    ap.add_argument("--out", default="/tmp/gpuscope-sim-recovery")
    ap.add_argument("--quick", action="store_true", help="pass --quick to the runs")
    ap.add_argument("presets", nargs="*", default=PRESETS)
    args = ap.parse_args()
    failed = 0
    for name in args.presets:
        out = os.path.join(args.out, name)
        cmd = [args.gpuscope, "run", "--device", f"sim:{name}", "--out", out, "--quiet"]
        if args.quick:
            cmd.append("--quick")
        t0 = time.monotonic()
        run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
        skipped = ", ".join(s.get("probe", "?") for s in results.get("skipped", []))
        t = table_for(results)
        failed += t.failed
        print(f"### sim:{name}: {wall:.1f} s, exit {run.returncode}"
              + (f", skipped: {skipped}" if skipped else "") + f", {t.failed} outside tolerance\n")
        print(t.markdown() + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
