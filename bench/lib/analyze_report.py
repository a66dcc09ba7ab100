#!/usr/bin/env python3
"""
analyze_report.py -- tables, CSV, gnuplot data and script from the runs of
bench/analyze_bench.sh.

Usage: analyze_report.py --runs RUNS.csv --samples SAMPLES.csv --outdir DIR
                         --name NAME [--meta key=value ...]
Writes DIR/NAME.md, DIR/NAME.csv (medians per density and configuration),
DIR/NAME.dat and DIR/NAME.gp (run gnuplot on it in DIR to get NAME.png).
"""
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

CONFIG_ORDER = ["off", "on", "off0", "on0", "bound"]
CONFIG_LABEL = {
    "off": "(a) off, mic 10",
    "on": "(b) on, mic 10",
    "off0": "(c) off, mic 0",
    "on0": "(d) on, mic 0",
    "bound": "(e) cached bound",
}
STYLES = {"off": "lc rgb '#444444' pt 7", "on": "lc rgb '#d62728' pt 5",
          "off0": "lc rgb '#7f7f7f' dt 2 pt 6", "on0": "lc rgb '#ff7f0e' dt 2 pt 4",
          "bound": "lc rgb '#2ca02c' pt 9"}
STREAM_DEPTH_STYLES = ["lc rgb '#8c564b' dt 4 pt 10", "lc rgb '#e377c2' dt 4 pt 12",
                       "lc rgb '#17becf' dt 4 pt 14", "lc rgb '#bcbd22' dt 4 pt 3"]


def add_stream_depth_configs(present):
    """The optional configurations, before the bound: ondN (stream depth N,
    mic 10) ordered by N, onfa (io_method fadvise), offmN (core alone at
    mic N) ordered by N"""
    def by_n(prefix):
        return sorted((c for c in present if re.fullmatch(prefix + r"[1-9][0-9]*", c)),
                      key=lambda c: int(c[len(prefix):]))
    labels = [(c, "(b2) on, mic 10, stream depth %s" % c[3:]) for c in by_n("ond")]
    if "onfa" in present:
        labels.append(("onfa", "(b3) on, mic 10, io_method fadvise"))
    labels += [(c, "(a2) off, mic %s" % c[4:]) for c in by_n("offm")]
    for i, (c, label) in enumerate(labels):
        if c not in CONFIG_ORDER:
            CONFIG_ORDER.insert(CONFIG_ORDER.index("bound"), c)
            CONFIG_LABEL[c] = label
            STYLES[c] = STREAM_DEPTH_STYLES[i % len(STREAM_DEPTH_STYLES)]


TARGET_BOUND = 1.25     # dense samples: on <= 1.25 x bound
TARGET_OFF = 1.03       # every density: on <= 1.03 x off
DENSE = (100.0, 50.0)


def ratio(a, b):
    return a / b if a is not None and b else None


def paired(groups, d, a, b):
    """Median over rounds of seconds(a) / seconds(b) in the same round."""
    A = {r["rep"]: num(r["seconds"]) for r in groups.get((d, a), [])}
    B = {r["rep"]: num(r["seconds"]) for r in groups.get((d, b), [])}
    rs = [A[k] / B[k] for k in A if k in B and A[k] is not None and B[k]]
    return statistics.median(rs) if rs else None


def diagnose(run, samples):
    """Per-run figures from the sampler rows (every 20 ms)."""
    d = {}
    t0 = num(run["t_start"])
    if not samples or t0 is None:
        return d
    acq = [s for s in samples if s["phase"] == "acquiring sample rows"]
    if acq:
        d["io_wait"] = sum(1 for s in acq if s["wait_event"].startswith("IO:")) / len(acq)
    pf = [s for s in samples if s["state"] == "prefetching"]
    if pf:
        d["first_prefetching"] = float(pf[0]["epoch"]) - t0
        d["scanned_at_join"] = num(pf[0]["sample_blks_scanned"])
        big_n = num(run["blocks"])
        lead = []
        infl = []
        for s in pf:
            if s["phase"] != "acquiring sample rows":
                continue
            n, done, pb = num(s["sample_blks_total"]), num(s["sample_blks_scanned"]), num(s["prefetch_block"])
            if not n or done is None or pb is None or not big_n:
                continue
            # mean position of the consumer's next pick (doc/planners.md)
            exp = min(max((done + 1) * (big_n + 1) / (n + 1) - 1, done), big_n - n + done)
            lead.append(pb - exp)
            infl.append(num(s["reads_in_flight"]) or 0)
        if lead:
            d["median_lead"] = statistics.median(lead)
            d["behind"] = sum(1 for x in lead if x <= 0) / len(lead)
            d["mean_in_flight"] = sum(infl) / len(infl)
    states = [s["state"] for s in samples if s["state"]]
    if states:
        d["first_state"] = states[0]
    return d


def main():
    args, meta = parse_args()
    allruns = load_runs(args.runs)
    samples = load_samples(args.samples)
    if "mic" in meta:
        # another server version (--pg): its default maintenance_io_concurrency
        for c in ("off", "on"):
            CONFIG_LABEL[c] = CONFIG_LABEL[c].replace("mic 10", "mic " + meta["mic"])

    # repeated attempts (foreign drop_caches): keep the valid one, else the last
    runs, n_discarded, n_kept_invalid = valid_runs(
        allruns, lambda r: (r["density"], r["config"], r["rep"]))
    n_others = sum(1 for r in runs if r["others_running"])

    groups = defaultdict(list)
    for r in runs:
        groups[(r["density"], r["config"])].append(r)
    densities = sorted({r["density"] for r in runs}, key=lambda x: -float(x))
    add_stream_depth_configs({c for (_, c) in groups})
    cfgs = [c for c in CONFIG_ORDER if any(groups.get((d, c)) for d in densities)]

    M = {}      # (density, cfg) -> median seconds
    for (d, c), rs in groups.items():
        M[(d, c)] = med([num(r["seconds"]) for r in rs])

    md = md_head("analyze_report.py", args.runs, meta,
                 ("date", "command", "machine", "server", "tables", "extension", "reps"))
    md.append("- runs repeated because another process dropped the OS cache during them: %d "
              "(used anyway, no valid attempt in 3: %d); runs with another benchmark running "
              "at their start or end: %d" % (n_discarded, n_kept_invalid, n_others))
    md.append("- cached bound: after the drop, `cat` of the table's files (fincore checks every "
              "block is cached), extension off, maintenance_io_concurrency %s; the cat's own "
              "time is the 'cold cat' column" % meta.get("mic", "10"))
    md.append("")

    # ---- summary
    md.append("### Summary: median seconds of `ANALYZE VERBOSE t`, cold OS cache")
    md.append("")
    hdr = ["density (sampled / blocks)"] + [CONFIG_LABEL[c] for c in cfgs]
    extra = []
    if "on" in cfgs and "off" in cfgs:
        extra.append(("on", "off"))
    if "on" in cfgs and "bound" in cfgs:
        extra.append(("on", "bound"))
    if "on0" in cfgs and "off0" in cfgs:
        extra.append(("on0", "off0"))
    if "off0" in cfgs and "off" in cfgs:
        extra.append(("off0", "off"))
    if "on0" in cfgs and "off" in cfgs:
        extra.append(("on0", "off"))
    for c in cfgs:
        if c.startswith("ond") and "bound" in cfgs:
            extra.append((c, "bound"))
    hdr += ["%s / %s" % (a, b) for a, b in extra]
    hdr += ["on / off, same round (median)"] if ("on", "off") in extra else []
    hdr += ["cold cat s"]
    md.extend(table_head(hdr))
    csv_rows = []
    dat = []
    verdicts = []
    for d in densities:
        rs = [r for c in cfgs for r in groups.get((d, c), [])]
        blocks = num(rs[0]["blocks"])
        scanned = med([num(r["scanned"]) for r in rs])
        row = ["%s %% (%s / %s)" % (d, fint(scanned), fint(blocks))]
        for c in cfgs:
            row.append(fmt(M.get((d, c))))
        for a, b in extra:
            row.append(fmt(ratio(M.get((d, a)), M.get((d, b))), 2))
        if ("on", "off") in extra:
            row.append(fmt(paired(groups, d, "on", "off"), 2))
        cat = med([num(r["cat_seconds"]) for r in groups.get((d, "bound"), [])])
        row.append(fmt(cat))
        md.append("| " + " | ".join(row) + " |")
        dat.append([d] + [M.get((d, c)) for c in CONFIG_ORDER] +
                   [ratio(M.get((d, c)), M.get((d, "bound"))) for c in CONFIG_ORDER])
        for c in cfgs:
            g = groups.get((d, c), [])
            pf = [r for r in g if r["pf_prefetched"]]
            csv_rows.append({
                "density_pct": d, "blocks": int(blocks) if blocks else "",
                "sampled_blocks": int(scanned) if scanned else "",
                "config": c, "n": len(g),
                "median_s": fmt(M.get((d, c))),
                "min_s": fmt(min((num(r["seconds"]) for r in g), default=None)),
                "max_s": fmt(max((num(r["seconds"]) for r in g), default=None)),
                "ratio_to_off": fmt(ratio(M.get((d, c)), M.get((d, "off"))), 3),
                "ratio_to_bound": fmt(ratio(M.get((d, c)), M.get((d, "bound"))), 3),
                "median_device_read_mb": fmt(med([num(r["device_read_mb"]) for r in g]), 0),
                "median_backend_cpu_s": fmt(med([num(r["cpu_s"]) for r in g]), 2),
                "median_prefetched_blocks": fmt(med([num(r["pf_prefetched"]) for r in pf]), 0) if pf else "",
                "median_late_blocks": fmt(med([num(r["pf_late"]) for r in pf]), 0) if pf else "",
                "median_wasted_blocks": fmt(med([num(r["pf_wasted"]) for r in pf]), 0) if pf else "",
                "log_state": "; ".join(sorted({r["log_state"] for r in g if r["log_state"]})),
            })
        # targets
        on, off, bound = M.get((d, "on")), M.get((d, "off")), M.get((d, "bound"))
        if on is not None and off is not None:
            v = on / off
            verdicts.append("%s %%: on / off = %.2f — %s (target ≤ %.2f)"
                            % (d, v, "met" if v <= TARGET_OFF else "MISSED", TARGET_OFF))
        if float(d) in DENSE and on is not None and bound is not None:
            v = on / bound
            verdicts.append("%s %%: on / bound = %.2f — %s (target ≤ %.2f)"
                            % (d, v, "met" if v <= TARGET_BOUND else "MISSED", TARGET_BOUND))
        on0, off0 = M.get((d, "on0")), M.get((d, "off0"))
        if on0 is not None and off0 is not None:
            v = on0 / off0
            verdicts.append("%s %%: on0 / off0 = %.2f — %s (same target, at maintenance_io_concurrency 0)"
                            % (d, v, "met" if v <= TARGET_OFF else "MISSED"))
    md.append("")
    md.append("Targets (medians):")
    md.append("")
    for v in verdicts:
        md.append("- " + v)
    md.append("")

    # ---- per density
    for d in densities:
        rs0 = [r for c in cfgs for r in groups.get((d, c), [])]
        md.append("### %s %% — %s blocks, statistics target %s, %s sampled blocks"
                  % (d, fint(num(rs0[0]["blocks"])), rs0[0]["stat_target"],
                     fint(med([num(r["scanned"]) for r in rs0]))))
        md.append("")
        md.append("| configuration | median s | min–max s (n) | / off (medians) | / off (median of same-round ratios) | / bound | disk read MB | ANALYZE CPU s | ANALYZE in IO wait |")
        md.append("|---|---|---|---|---|---|---|---|---|")
        for c in cfgs:
            g = groups.get((d, c), [])
            if not g:
                continue
            secs = [num(r["seconds"]) for r in g]
            iow = med([diagnose(r, samples.get(r["seq"])).get("io_wait") for r in g])
            md.append("| %s | %s | %s–%s (%d) | %s | %s | %s | %s | %s | %s |" % (
                CONFIG_LABEL[c], fmt(M[(d, c)]), fmt(min(secs), 2), fmt(max(secs), 2), len(g),
                fmt(ratio(M[(d, c)], M.get((d, "off"))), 2),
                fmt(paired(groups, d, c, "off"), 2),
                fmt(ratio(M[(d, c)], M.get((d, "bound"))), 2),
                fint(med([num(r["device_read_mb"]) for r in g])),
                fmt(med([num(r["cpu_s"]) for r in g]), 2),
                "–" if iow is None else "%.0f %%" % (100 * iow)))
        md.append("")
        onruns = [r for c in cfgs if c.startswith("on") for r in groups.get((d, c), [])]
        if onruns:
            md.append("Extension-on runs (pg_stat_prefetch and the LOG line; sampler every 20 ms):")
            md.append("")
            md.append("| run | config | s | LOG state | joined at block | planned | prefetched (% of table) | late | wasted | prefetch active ms | first 'prefetching' after | stream lead over the consumer's expected block (median) | samples with the stream behind it | mean reads in flight |")
            md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
            for r in sorted(onruns, key=lambda r: int(r["seq"])):
                dg = diagnose(r, samples.get(r["seq"]))
                pfb, blk = num(r["pf_prefetched"]), num(r["blocks"])
                md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    r["seq"], r["config"], r["seconds"], r["log_state"] or "(no LOG line)",
                    fint(num(r["log_joined"])), fint(num(r["pf_planned"])),
                    fint(pfb) + ((" (%.0f %%)" % (100 * pfb / blk)) if pfb and blk else ""),
                    fint(num(r["pf_late"])),
                    fint(num(r["pf_wasted"])), r["pf_active_ms"] or "–",
                    ("%.0f ms" % (1000 * dg["first_prefetching"])) if "first_prefetching" in dg else "–",
                    fint(dg.get("median_lead")),
                    ("%.0f %%" % (100 * dg["behind"])) if "behind" in dg else "–",
                    ("%.1f" % dg["mean_in_flight"]) if "mean_in_flight" in dg else "–"))
            md.append("")

    write_outputs(args.outdir, args.name, md, csv_rows)

    # ---- plot
    datf = os.path.join(args.outdir, args.name + ".dat")
    with open(datf, "w") as fh:
        fh.write("# density " + " ".join(CONFIG_ORDER) + " " +
                 " ".join(c + "/bound" for c in CONFIG_ORDER) + "\n")
        for row in sorted(dat, key=lambda r: float(r[0])):
            fh.write(" ".join("NaN" if x is None else str(x) for x in row) + "\n")
    plots = []
    plots2 = []
    for i, c in enumerate(CONFIG_ORDER):
        if c not in cfgs:
            continue
        plots.append("'%s.dat' using 1:%d with linespoints lw 2 %s title '%s'"
                     % (args.name, i + 2, STYLES[c], CONFIG_LABEL[c]))
        if c != "bound":
            plots2.append("'%s.dat' using 1:%d with linespoints lw 2 %s title '%s'"
                          % (args.name, i + 2 + len(CONFIG_ORDER), STYLES[c], CONFIG_LABEL[c]))
    gp = """set terminal pngcairo size 1200,560 font ',10'
set output '{name}.png'
set multiplot layout 1,2 title "Cold-cache ANALYZE (30,000 sampled blocks) vs sample density — medians"
set logscale x
set xrange [2:130]
set xtics (3, 10, 25, 50, 100)
set xlabel 'sample density, % of the table'
set ylabel 'seconds (log scale)'
set logscale y
set key below horizontal maxrows 2 spacing 1.1
set bmargin 8
set grid
set title 'ANALYZE time'
plot {plots}
set ylabel 'time / cached bound (log scale)'
set title 'relative to the cached bound (1 = whole table in the OS cache)'
set yrange [0.8:*]
plot {plots2}, 1.25 with lines dt 3 lc rgb '#2ca02c' title 'dense target 1.25'
unset multiplot
""".format(name=args.name, plots=", \\\n     ".join(plots), plots2=", \\\n     ".join(plots2))
    if "bound" not in cfgs:
        # no cached bound measured: the time panel only
        gp = gp.replace("set multiplot layout 1,2 title", "set multiplot layout 1,1 title")
        gp = gp[:gp.index("set ylabel 'time / cached bound")] + "unset multiplot\n"
        gp = gp.replace("size 1200,560", "size 700,560")
    write_text(os.path.join(args.outdir, args.name + ".gp"), gp)


if __name__ == "__main__":
    main()
