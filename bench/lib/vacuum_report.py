#!/usr/bin/env python3
"""
vacuum_report.py -- tables, CSV, gnuplot data and script from the runs of
bench/vacuum_bench.sh.

Usage: vacuum_report.py --runs RUNS.csv --samples SAMPLES.csv --outdir DIR
                        --name NAME [--meta key=value ...]
Writes DIR/NAME.md, DIR/NAME.csv (medians), DIR/NAME_{manual,autovacuum}.dat
and DIR/NAME.gp (run it in DIR to get NAME.png).
"""
import csv
import os
import re
import statistics
import sys
from collections import defaultdict

sys.dont_write_bytecode = True      # no __pycache__ in bench/lib from a run
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import (fint, fmt, load_runs, load_samples, md_head,  # noqa: E402
                           med, num, parse_args, table_head, valid_runs,
                           write_outputs, write_text)

CONFIG_ORDER = ["off", "on", "on32", "onfa", "sbuf", "oracle1", "oracle4", "oracle", "bound",
                "sbound", "ond1", "ond2", "ond4", "sbuffa"]
PREFETCH_CONFIGS = ("on", "on32", "onfa", "sbuf", "ond1", "ond2", "ond4", "sbuffa")
# configurations compared with off and the bound: the prefetcher's, and the
# oracles (a separate program reading exactly the planned blocks, 1, 4 or 32
# reads in flight, from the moment the VACUUM starts), which the targets do
# not judge
ORACLE_CONFIGS = ("oracle1", "oracle4", "oracle")
COMPARED_CONFIGS = PREFETCH_CONFIGS + ORACLE_CONFIGS
CONFIG_LABEL = {
    "off": "off",
    "on": "on (depth 10)",
    "on32": "on (depth 32)",
    "onfa": "on (fadvise, depth 10)",
    "oracle1": "oracle (depth 1)",
    "oracle4": "oracle (depth 4)",
    "oracle": "oracle (depth 32)",
    "bound": "bound",
    "sbuf": "sbuf (read_into = shared_buffers)",
    "sbound": "sbound",
    "ond1": "on (depth 1)",
    "ond2": "on (depth 2)",
    "ond4": "on (depth 4)",
    "sbuffa": "sbuf (fadvise)",
}
TARGET_BOUND = 1.15
TARGET_OFF = 1.03
# the baselines every compared configuration is divided by, with the
# target of the ratio: off, the planned blocks in the OS cache (bound) and
# in shared buffers (sbound, issue 18)
BASES = (("off", TARGET_OFF), ("bound", TARGET_BOUND), ("sbound", TARGET_BOUND))


def target(config, base, lim):
    """Issue 18 asks shared-buffer loading to beat the OS-cache bound."""
    return 1.0 if (config, base) == ("sbuf", "bound") else lim


def diagnose(run, samples):
    """Per-run discovery and pacing figures from the activity samples."""
    d = {}
    t0 = num(run["t_start"])
    if not samples or t0 is None:
        return d
    first = samples[0]
    d["first_progress"] = float(first["epoch"]) - t0
    pf = [s for s in samples if s["state"] == "prefetching"]
    if pf:
        d["first_prefetching"] = float(pf[0]["epoch"]) - t0
        d["scanned_at_join"] = num(pf[0]["heap_blks_scanned"])
        d["total"] = num(pf[0]["heap_blks_total"])
    res = [s for s in samples if s["state"] == "resolving"]
    d["resolving_samples"] = len(res)
    scan = [s for s in pf if s["phase"] == "scanning heap"]
    if scan:
        infl = [num(s["reads_in_flight"]) or 0 for s in scan]
        depth = [num(s["io_depth"]) or 0 for s in scan]
        dist = [num(s["distance"]) or 0 for s in scan]
        d["samples"] = len(scan)
        d["mean_in_flight"] = sum(infl) / len(infl)
        d["at_depth"] = sum(1 for i, dp in zip(infl, depth) if dp and i >= dp) / len(scan)
        d["median_distance"] = statistics.median(dist)
        d["zero_distance"] = sum(1 for x in dist if x <= 0) / len(scan)
        # blocks planned ahead but not yet prefetched = backlog
        d["io_depth"] = depth[0]
    return d


def main():
    args, meta = parse_args()
    if "mic" in meta:
        # another server version (--pg): the depth is its default
        # maintenance_io_concurrency
        for c in ("on", "onfa"):
            CONFIG_LABEL[c] = CONFIG_LABEL[c].replace("depth 10", "depth " + meta["mic"])
    allruns = load_runs(args.runs)
    samples = load_samples(args.samples)
    # runs that saw another process's drop_caches are repeated; use only the
    # valid ones, unless a cell has none
    runs, n_discarded, n_kept_invalid = valid_runs(
        allruns, lambda r: (r["workload"], r["fraction"], r["config"], r["rep"]))

    groups = defaultdict(list)      # (wl, frac, cfg) -> runs
    for r in runs:
        groups[(r["workload"], r["fraction"], r["config"])].append(r)

    workloads = []
    for r in runs:
        if r["workload"] not in workloads:
            workloads.append(r["workload"])

    csv_rows = []
    md = md_head("vacuum_report.py", args.runs, meta,
                 ("date", "command", "machine", "server", "conf", "table", "extension", "reps"),
                 skip_empty=True)
    md.append("- attempts discarded because another process dropped the OS cache during them "
              "(/proc/vmstat drop_pagecache; manual runs are repeated up to 3 times, autovacuum "
              "runs are not): %d; runs used in spite of such a drop: %d (column \"foreign drop\")"
              % (n_discarded, n_kept_invalid))
    md.append("")

    verdicts = []
    for wl in workloads:
        fracs = sorted({r["fraction"] for r in runs if r["workload"] == wl}, key=float)
        cfgs = [c for c in CONFIG_ORDER if any(groups.get((wl, f, c)) for f in fracs)]
        title = {"manual": "Manual VACUUM (VERBOSE), vacuum_cost_delay = 0",
                 "autovacuum": "Autovacuum, default cost settings (delay 2 ms, limit 200)"}.get(wl, wl)
        md.append("### %s" % title)
        md.append("")
        md.append("Median seconds over the repetitions (n = runs per cell); "
                  "%s." % ("client-measured VACUUM statement time" if wl == "manual"
                           else "\"elapsed\" of the autovacuum log line"))
        md.append("")
        hdr = ["dirty pages", "scanned pages (= planned)"]
        hdr += ["%s s" % CONFIG_LABEL[c] for c in cfgs]
        for c in COMPARED_CONFIGS:
            if c in cfgs:
                for base, _ in BASES:
                    if base in cfgs:
                        hdr.append("%s / %s" % (CONFIG_LABEL[c], base))
        md.extend(table_head(hdr))
        dat = []
        for f in fracs:
            allr = [r for c in cfgs for r in groups.get((wl, f, c), [])]
            scanned = sorted({r["scanned"] for r in allr if r["scanned"]})
            planned = sorted({r["planned"] for r in allr if r["planned"]})
            ok = scanned == planned
            sc = "/".join("{:,}".format(int(s)) for s in scanned) or "–"
            if not ok:
                sc += " (planned %s)" % "/".join(planned)
            else:
                sc += " ✓"
            medians = {}
            row = ["%s %%" % f, sc]
            for c in cfgs:
                rs = groups.get((wl, f, c), [])
                m = med([num(r["seconds"]) for r in rs])
                medians[c] = m
                lo = min((num(r["seconds"]) for r in rs), default=None)
                hi = max((num(r["seconds"]) for r in rs), default=None)
                row.append("%s (%s–%s, n=%d)" % (fmt(m), fmt(lo, 2), fmt(hi, 2), len(rs))
                           if rs else "–")
            for c in COMPARED_CONFIGS:
                if c not in cfgs:
                    continue
                for base, lim in BASES:
                    if base not in cfgs:
                        continue
                    lim = target(c, base, lim)
                    if medians.get(c) and medians.get(base):
                        ratio = medians[c] / medians[base]
                        met = ratio <= lim
                        row.append("%.2f %s" % (ratio, "✓" if met else "✗"))
                        if c in PREFETCH_CONFIGS:
                            verdicts.append((wl, f, c, base, ratio, lim, met))
                    else:
                        row.append("–")
            md.append("| " + " | ".join(row) + " |")
            for c in cfgs:
                rs = groups.get((wl, f, c), [])
                csv_rows.append({
                    "workload": wl, "fraction": f, "config": c, "runs": len(rs),
                    "scanned": scanned[0] if len(scanned) == 1 else "/".join(scanned),
                    "planned": planned[0] if len(planned) == 1 else "/".join(planned),
                    "median_s": fmt(medians[c]),
                    "min_s": fmt(min((num(r["seconds"]) for r in rs), default=None)),
                    "max_s": fmt(max((num(r["seconds"]) for r in rs), default=None)),
                    "ratio_off": fmt(medians[c] / medians["off"]) if medians.get("off") and medians.get(c) else "",
                    "ratio_bound": fmt(medians[c] / medians["bound"]) if medians.get("bound") and medians.get(c) else "",
                    "ratio_sbound": fmt(medians[c] / medians["sbound"]) if medians.get("sbound") and medians.get(c) else "",
                    "median_read_ms": fmt(med([num(r["read_ms"]) for r in rs]), 1),
                    "median_prefetched": fmt(med([num(r["pf_prefetched"]) for r in rs]), 0),
                    "median_late": fmt(med([num(r["pf_late"]) for r in rs]), 0),
                    "median_wasted": fmt(med([num(r["pf_wasted"]) for r in rs]), 0),
                    "median_prefetch_read_time_s": fmt(med([num(r["pf_read_ms"]) / 1000.0 for r in rs if num(r["pf_read_ms"]) is not None])),
                })
            dat.append([f] + [medians.get(c) for c in CONFIG_ORDER])
        md.append("")

        # the disk floor: the bound's pre-read (read_blocks.py, 32 reads in
        # flight, adjacent blocks coalesced up to 32) times how long the disk
        # takes to deliver exactly the planned blocks with nothing else
        # running.  A prefetcher must read them while the VACUUM runs, so
        # no configuration can beat max(bound, floor); where the floor alone
        # is above TARGET_BOUND x bound the target is out of reach here.
        frows = []
        for f in fracs:
            floor = med([num(r["preload_seconds"]) for r in groups.get((wl, f, "bound"), [])
                         if num(r["preload_seconds"]) is not None])
            bound = med([num(r["seconds"]) for r in groups.get((wl, f, "bound"), [])])
            if floor is None or not bound:
                continue
            best = min(((med([num(r["seconds"]) for r in groups[(wl, f, c)]]), c)
                        for c in PREFETCH_CONFIGS if groups.get((wl, f, c))), default=None)
            if best is None:
                continue
            reachable = max(bound, floor)
            frows.append("| %s %% | %s | %s | %.2f %s | %s (%s) | %.2f |" % (
                f, fmt(floor), fmt(bound), floor / bound,
                "(target out of reach)" if floor > TARGET_BOUND * bound else "",
                fmt(best[0]), CONFIG_LABEL[best[1]], best[0] / reachable))
        if frows:
            md.append("Disk floor: the time the bound's pre-read took to read exactly the planned "
                      "blocks from a cold cache with 32 reads in flight (adjacent blocks coalesced "
                      "into reads of up to 32 blocks, as the prefetcher does) and nothing else "
                      "running.  A prefetcher has to read the same blocks while the VACUUM runs, "
                      "so no prefetching run can be faster than max(bound, floor); where the "
                      "floor alone exceeds %.2f × bound, that target is out of reach on this "
                      "storage." % TARGET_BOUND)
            md.append("")
            md.append("| dirty | floor s | bound s | floor / bound | best prefetching s (config) | best / max(bound, floor) |")
            md.append("|---|---|---|---|---|---|")
            md.extend(frows)
            md.append("")

        # the oracle's own reads: how long they took beside the VACUUM
        orows = []
        for f in fracs:
            for c in ORACLE_CONFIGS:
                rs = groups.get((wl, f, c), [])
                reads = med([num(r["preload_seconds"]) for r in rs if num(r["preload_seconds"]) is not None])
                if reads is None:
                    continue
                orows.append("| %s %% | %s | %s | %s | %s |" % (
                    f, CONFIG_LABEL[c], fmt(reads), fmt(med([num(r["seconds"]) for r in rs])),
                    fmt(med([num(r["preload_seconds"]) for r in groups.get((wl, f, "bound"), [])
                             if num(r["preload_seconds"]) is not None]))))
        if orows:
            md.append("The oracles: how long their reads of the planned blocks "
                      "(bench/lib/read_plan.c, started with the VACUUM statement) took beside "
                      "the VACUUM, against the floor (the bound's pre-read: the same reads by 32 "
                      "threads with nothing else running):")
            md.append("")
            md.append("| dirty | config | reads s | VACUUM s | floor s |")
            md.append("|---|---|---|---|---|")
            md.extend(orows)
            md.append("")

        # paired ratios: configurations are alternated inside each round, so
        # the ratio of two runs of the same round is less exposed to the
        # load of other tenants, which changes over minutes
        prow = []
        for f in fracs:
            cells = []
            for c in COMPARED_CONFIGS:
                if c not in cfgs:
                    continue
                for base, _ in BASES:
                    if base not in cfgs:
                        continue
                    a = {r["rep"]: num(r["seconds"]) for r in groups.get((wl, f, c), [])}
                    b = {r["rep"]: num(r["seconds"]) for r in groups.get((wl, f, base), [])}
                    rs = sorted(a[k] / b[k] for k in a if k in b and a[k] and b[k])
                    if rs:
                        cells.append("%.2f (%.2f–%.2f)" % (statistics.median(rs), rs[0], rs[-1]))
                    else:
                        cells.append("–")
            prow.append("| %s %% | %s |" % (f, " | ".join(cells)))
        phdr = ["%s / %s" % (CONFIG_LABEL[c], base) for c in COMPARED_CONFIGS if c in cfgs
                for base, _ in BASES if base in cfgs]
        if phdr:
            md.append("Ratios of the runs of the same round (median, min–max over the rounds):")
            md.append("")
            md.append("| dirty | " + " | ".join(phdr) + " |")
            md.append("|---|" + "---|" * len(phdr))
            md.extend(prow)
            md.append("")

        # prefetch statistics and I/O time
        md.append("Per configuration, medians over the runs: the VACUUM's own read I/O time and CPU "
                  "(track_io_timing and \"system usage\" of VERBOSE / the autovacuum log), heap "
                  "blocks in the OS cache at server start (fincore), how busy the shared machine's "
                  "2 CPUs were during the timed part (all processes, other tenants included), and "
                  "for the prefetching runs pg_stat_prefetch: planned, prefetched, never issued "
                  "(planned − prefetched − wasted: blocks the VACUUM reached before the "
                  "prefetcher issued them), late, wasted, and the summed latency of the prefetch "
                  "reads (prefetch_read_time).")
        md.append("")
        md.append("| dirty | config | foreign drop (runs) | VACUUM read I/O ms | VACUUM CPU s | cached at start | machine CPU busy % | pf planned | prefetched | never issued | late | wasted | prefetch read time s |")
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for f in fracs:
            for c in cfgs:
                rs = groups.get((wl, f, c), [])
                if not rs:
                    continue
                pfon = c in PREFETCH_CONFIGS
                cpu = med([(num(r["cpu_user"]) or 0) + (num(r["cpu_sys"]) or 0)
                           for r in rs if num(r["cpu_user"]) is not None])
                never = med([num(r["pf_planned"]) - num(r["pf_prefetched"]) - (num(r["pf_wasted"]) or 0)
                             for r in rs if num(r["pf_planned"]) is not None and num(r["pf_prefetched"]) is not None])
                rt = med([num(r["pf_read_ms"]) for r in rs])
                md.append("| %s %% | %s | %d of %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    f, CONFIG_LABEL[c],
                    sum(1 for r in rs if r.get("valid", "1") != "1"), len(rs),
                    fmt(med([num(r["read_ms"]) for r in rs]), 0),
                    fmt(cpu, 2),
                    fint(med([num(r["cached_blocks_at_start"]) for r in rs])),
                    fmt(med([num(r["machine_cpu_busy_pct"]) for r in rs]), 0),
                    fint(med([num(r["pf_planned"]) for r in rs])) if pfon else "",
                    fint(med([num(r["pf_prefetched"]) for r in rs])) if pfon else "",
                    fint(never) if pfon else "",
                    fint(med([num(r["pf_late"]) for r in rs])) if pfon else "",
                    fint(med([num(r["pf_wasted"]) for r in rs])) if pfon else "",
                    fmt(rt / 1000.0 if rt is not None else None) if pfon else ""))
        md.append("")

        # where the VACUUM backend waited, from the samples (all configs)
        wrows = []
        for f in fracs:
            for c in cfgs:
                cnt = defaultdict(int)
                tot = 0
                for r in groups.get((wl, f, c), []):
                    for smp in samples.get(r["seq"], []):
                        if smp["phase"] != "scanning heap":
                            continue
                        cnt[smp.get("wait_event") or "?"] += 1
                        tot += 1
                if tot:
                    top = sorted(cnt.items(), key=lambda kv: -kv[1])[:5]
                    wrows.append("| %s %% | %s | %d | %s |" % (
                        f, CONFIG_LABEL[c], tot,
                        ", ".join("%s %.0f %%" % (k, 100.0 * v / tot) for k, v in top)))
        # the same, as seconds: share of samples x the run's time
        trows = []
        for f in fracs:
            for c in cfgs:
                per = []
                for r in groups.get((wl, f, c), []):
                    sc = [x for x in samples.get(r["seq"], []) if x["phase"] == "scanning heap"]
                    t = num(r["seconds"])
                    if not sc or t is None:
                        continue
                    cnt = defaultdict(int)
                    for x in sc:
                        cnt[x.get("wait_event") or "?"] += 1
                    part = lambda k: t * cnt.get(k, 0) / len(sc)
                    known = ("IO:WALSync", "IO:DataFileRead", "Timeout:VacuumDelay", "CPU")
                    per.append((t, part("IO:WALSync"), part("IO:DataFileRead"),
                                part("Timeout:VacuumDelay"), part("CPU"),
                                t - sum(part(k) for k in known), num(r["read_ms"])))
                if per:
                    m = lambda i: med([p[i] for p in per])
                    trows.append("| %s %% | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                        f, CONFIG_LABEL[c], fmt(m(0), 2), fmt(m(1), 2), fmt(m(2), 2),
                        fmt(m(6) / 1000.0 if m(6) is not None else None, 2),
                        fmt(m(3), 2), fmt(m(4), 2), fmt(m(5), 2)))
        if trows:
            md.append("The same as seconds (each run's time split by its share of samples, "
                      "then medians; the DataFileRead estimate can be checked against "
                      "track_io_timing's read time):")
            md.append("")
            md.append("| dirty | config | time s | WALSync s | DataFileRead s | (track_io_timing read s) | VacuumDelay s | CPU s | other s |")
            md.append("|---|---|---|---|---|---|---|---|---|")
            md.extend(trows)
            md.append("")
        if wrows:
            md.append("What the VACUUM backend was doing while scanning the heap "
                      "(pg_stat_activity wait event, sampled every 20 ms, all runs pooled; "
                      "CPU = no wait event):")
            md.append("")
            md.append("| dirty | config | samples | wait events |")
            md.append("|---|---|---|---|")
            md.extend(wrows)
            md.append("")

        # discovery and pacing, from pg_stat_prefetch_activity samples
        rows = []
        for f in fracs:
            for c in PREFETCH_CONFIGS:
                rs = groups.get((wl, f, c), [])
                ds = [diagnose(r, samples.get(r["seq"], [])) for r in rs]
                ds = [d for d in ds if d]
                if not ds:
                    continue
                rows.append("| %s %% | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    f, CONFIG_LABEL[c],
                    fmt(med([d.get("first_progress") for d in ds])),
                    fmt(med([d.get("first_prefetching") for d in ds])),
                    fint(med([d.get("scanned_at_join") for d in ds])),
                    fmt(med([d.get("mean_in_flight") for d in ds]), 1),
                    fmt(med([100 * d["at_depth"] for d in ds if "at_depth" in d]), 0),
                    fint(med([d.get("median_distance") for d in ds])),
                    fmt(med([100 * d["zero_distance"] for d in ds if "zero_distance" in d]), 0)))
        if rows:
            md.append("Discovery and pacing (pg_stat_prefetch_activity joined with "
                      "pg_stat_progress_vacuum, sampled every 20 ms; medians over runs). "
                      "Times are from the start of the VACUUM statement%s."
                      % ("" if wl == "manual" else
                         " (autovacuum: log time minus elapsed)"))
            md.append("")
            md.append("| dirty | config | first progress row s | first 'prefetching' s | heap block VACUUM was at then | mean reads in flight | % samples at depth | median distance (blocks) | % samples distance 0 |")
            md.append("|---|---|---|---|---|---|---|---|---|")
            md.extend(rows)
            md.append("")

        datpath = os.path.join(args.outdir, "%s_%s.dat" % (args.name, wl))
        with open(datpath, "w") as fh:
            fh.write("# fraction_pct " + " ".join(CONFIG_ORDER) + "  (median seconds)\n")
            for row in dat:
                fh.write(" ".join([row[0]] + [("%.4f" % x) if x is not None else "NaN"
                                              for x in row[1:]]) + "\n")

    # targets
    if verdicts:
        md.append("### Targets")
        md.append("")
        for c in PREFETCH_CONFIGS:
            for base, lim in BASES:
                lim = target(c, base, lim)
                vs = [v for v in verdicts if v[2] == c and v[3] == base]
                if not vs:
                    continue
                bad = [v for v in vs if not v[6]]
                md.append("- %s ≤ %.2f × %s: %s (%s)" % (
                    CONFIG_LABEL[c], lim, base,
                    "met everywhere" if not bad else "NOT met in %d of %d cells" % (len(bad), len(vs)),
                    ", ".join("%s %s%%: %.2f" % (v[0], v[1], v[4]) for v in vs)))
        md.append("")

    # one example LOG line of the extension
    for r in runs:
        if r["config"] in PREFETCH_CONFIGS and r.get("log_line"):
            md.append("Example bgw_prefetch LOG line (%s, %s %%, %s):" % (r["workload"], r["fraction"], r["config"]))
            md.append("")
            md.append("    " + re.sub(r"^.*?LOG:  ", "LOG:  ", r["log_line"]))
            md.append("")
            break

    # per-run diagnostics (the raw 20 ms samples are not kept)
    with open(os.path.join(args.outdir, args.name + "_diag.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["seq", "workload", "fraction", "config", "rep", "valid", "seconds",
                    "samples", "first_progress_s", "first_prefetching_s", "heap_block_at_first_prefetching",
                    "mean_reads_in_flight", "pct_samples_at_depth", "median_distance_blocks",
                    "pct_wait_CPU", "pct_wait_DataFileRead", "pct_wait_WALSync", "pct_wait_VacuumDelay",
                    "pct_wait_DataFileWrite", "pct_wait_other"])
        for r in allruns:
            sm = samples.get(r["seq"], [])
            d = diagnose(r, sm)
            sc = [x for x in sm if x["phase"] == "scanning heap"]
            cnt = defaultdict(int)
            for x in sc:
                cnt[x.get("wait_event") or "?"] += 1
            tot = len(sc) or 1
            known = {"CPU": "CPU", "IO:DataFileRead": "r", "IO:WALSync": "s",
                     "Timeout:VacuumDelay": "d", "IO:DataFileWrite": "w"}
            pct = lambda k: "%.0f" % (100.0 * cnt.get(k, 0) / tot) if sc else ""
            other = sum(v for k, v in cnt.items() if k not in known)
            w.writerow([("" if v == "–" else v) for v in [r["seq"], r["workload"], r["fraction"], r["config"], r["rep"],
                        r.get("valid", "1"), r["seconds"], len(sc),
                        fmt(d.get("first_progress")), fmt(d.get("first_prefetching")),
                        fmt(d.get("scanned_at_join"), 0), fmt(d.get("mean_in_flight"), 1),
                        fmt(100 * d["at_depth"], 0) if "at_depth" in d else "",
                        fmt(d.get("median_distance"), 0),
                        pct("CPU"), pct("IO:DataFileRead"), pct("IO:WALSync"),
                        pct("Timeout:VacuumDelay"), pct("IO:DataFileWrite"),
                        ("%.0f" % (100.0 * other / tot)) if sc else ""]])

    write_outputs(args.outdir, args.name, md, csv_rows)

    # gnuplot script
    gp = []
    gp.append("set terminal pngcairo noenhanced size %d,480 font 'sans,10'" % (560 * len(workloads)))
    gp.append("set output '%s.png'" % args.name)
    gp.append("set multiplot layout 1,%d" % len(workloads))
    gp.append("set logscale x")
    gp.append("set xlabel 'dirty pages (% of the table, log scale)'")
    gp.append("set logscale y")
    gp.append("set ylabel 'VACUUM time, median (s, log scale)'")
    gp.append("set key top left")
    gp.append("set grid")
    gp.append("set xtics (0.5, 1, 2, 5, 10, 20)")
    gp.append("set xrange [0.4:25]")
    for wl in workloads:
        gp.append("set title '%s'" % {"manual": "manual VACUUM (cost delay 0), cold cache",
                                       "autovacuum": "autovacuum (default cost delay), cold cache"}.get(wl, wl))
        plots = []
        for i, c in enumerate(CONFIG_ORDER):
            if any(groups.get((wl, f, c)) for f in {r["fraction"] for r in runs}):
                color = {"off": "#9400d3", "on": "#009e73", "on32": "#56b4e9", "onfa": "#d55e00",
                         "oracle1": "#999999", "oracle4": "#555555", "oracle": "#000000",
                         "bound": "#e69f00", "sbuf": "#cc79a7", "sbound": "#f0e442",
                         "ond1": "#0072b2", "ond2": "#56b4e9", "ond4": "#332288", "sbuffa": "#882255"}[c]
                plots.append("'%s_%s.dat' using 1:%d with linespoints lw 2 pt %d lc rgb '%s' title '%s'"
                             % (args.name, wl, i + 2, 5 + 2 * i, color, CONFIG_LABEL[c]))
        gp.append("plot " + ", \\\n     ".join(plots))
    gp.append("unset multiplot")
    write_text(os.path.join(args.outdir, args.name + ".gp"), "\n".join(gp) + "\n")


if __name__ == "__main__":
    main()
