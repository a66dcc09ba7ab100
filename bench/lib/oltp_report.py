#!/usr/bin/env python3
"""The report of bench/autovacuum_oltp.sh: medians per cost-delay setting
and configuration, and ratios of each configuration to off (to none when
that ran: the extension not loaded) over the same round's run.

Arguments: RUNS_CSV OUT_MD MACHINE EXT TABLES TABLE_MB DIRTY SCALE RATE
DURATION WARMUP ROUNDS LOAD0 LOAD1 CONFIGS
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import med, num  # noqa: E402

(path, out, machine, ext, tables, table_mb, dirty, scale, rate, duration,
 warmup, rounds, load0, load1, configs) = sys.argv[1:]
configs = configs.split()
# ratios are to off (to none, the extension not loaded, when that ran)
base = "none" if "none" in configs else "off"
rows = list(csv.DictReader(open(path)))


def fmt(x, p=2):
    return "-" if x is None else "%.*f" % (p, x)


def by_round(delay, config, kind, name, col):
    return {r["round"]: num(r[col]) for r in rows
            if r["cost_delay"] == delay and r["config"] == config
            and r["kind"] == kind and r["name"] == name}


def ratio(delay, config, kind, name, col):
    a = by_round(delay, config, kind, name, col)
    b = by_round(delay, base, kind, name, col)
    return med([a[k] / b[k] for k in a if a[k] is not None and b.get(k)])


def cell(delay, config, kind, name, col, p=2):
    m = med(by_round(delay, config, kind, name, col).values())
    if config == base:
        return fmt(m, p)
    return "%s (%s)" % (fmt(m, p), fmt(ratio(delay, config, kind, name, col), 2))


def waits_table(delay):
    """Where the heap scans' time goes: the share of the 20 ms samples of
    every table's heap-scan phase, over all rounds, by the wait event the
    worker was in (CPU: none), and the same shares as seconds of a median
    heap scan; events under 2 % in every configuration are summed as
    "other".  Nothing when the runs have no samples (older CSVs)."""
    counts = {}
    for r in rows:
        if r["cost_delay"] == delay and r["kind"] == "table" and r.get("heap_scan_waits"):
            c = counts.setdefault(r["config"], {})
            for item in r["heap_scan_waits"].split(";"):
                event, n = item.rsplit(":", 1)
                c[event] = c.get(event, 0) + int(n)
    if not counts:
        return []
    share = {c: {e: n / float(sum(v.values())) for e, n in v.items()} for c, v in counts.items()}
    events = sorted({e for v in share.values() for e, x in v.items() if x >= 0.02},
                    key=lambda e: -max(v.get(e, 0) for v in share.values()))
    heap = {c: med([num(r["heap_scan_s"]) for r in rows if r["cost_delay"] == delay and r["config"] == c
                    and r["kind"] == "table" and num(r["heap_scan_s"]) is not None]) for c in share}
    out = ["", "### Where the heap scans wait", "",
           "Share of the 20 ms samples of all tables' heap-scan phases, every round, by the worker's wait event "
           "(CPU: none); in brackets that share of the median heap scan, in seconds.", "",
           "| config | samples | " + " | ".join(events) + " | other |",
           "|---|---|" + "---|" * (len(events) + 1)]
    for c in configs:
        if c not in share:
            continue
        other = max(0.0, 1 - sum(share[c].get(e, 0) for e in events))
        out.append("| %s | %d | " % (c, sum(counts[c].values())) + " | ".join(
            "%.0f %% (%s)" % (100 * x, fmt(x * heap[c]))
            for x in [share[c].get(e, 0) for e in events] + [other]) + " |")
    return out


lines = ["# Autovacuum beside OLTP traffic: " + ", ".join(configs), "",
         "pgbench -n -R %s, 4 clients, %s s, scale %s, beside %s tables of %s MB with a btree index, a row deleted "
         "on %s %% of their pages, autovacuum (3 workers, naptime 1 s) let onto them %s s into the run; cold OS cache "
         "at the start of each run; %s rounds, configurations alternated (bench/autovacuum_oltp.sh)."
         % (rate, duration, scale, tables, table_mb, dirty, warmup, rounds), "",
         "- machine: " + machine, "- " + ext, "- load average before / after: %s / %s" % (load0, load1), "",
         "Medians over the rounds; in brackets the median of the per-round ratios to %s." % base, ""]
bigs = sorted({r["name"] for r in rows if r["kind"] == "table"}, key=lambda n: int(n[3:]))
for delay in sorted({r["cost_delay"] for r in rows}, reverse=True):
    lines += ["## autovacuum_vacuum_cost_delay = %s" % delay, "",
              "### The foreground (transactions scheduled while a large table was being vacuumed)", "",
              "| config | p50 (ms) | p90 (ms) | p95 (ms) | p99 (ms) | p99.9 (ms) | over 50 ms | schedule lag p99 (ms) | transactions | p99 from the release to the end (ms) | all vacuums (s) |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in configs:
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            c, cell(delay, c, "foreground", "vacuums", "p50_ms"), cell(delay, c, "foreground", "vacuums", "p90_ms"),
            cell(delay, c, "foreground", "vacuums", "p95_ms"), cell(delay, c, "foreground", "vacuums", "p99_ms"),
            cell(delay, c, "foreground", "vacuums", "p999_ms"), cell(delay, c, "foreground", "vacuums", "over_50ms", 0),
            cell(delay, c, "foreground", "vacuums", "lag_p99_ms"),
            fmt(med(by_round(delay, c, "foreground", "vacuums", "txns").values()), 0),
            cell(delay, c, "foreground", "after", "p99_ms"), cell(delay, c, "all", "vacuums", "elapsed_s")))
    lines += ["", "### Each table's autovacuum", "",
              "| table | config | elapsed (s) | heap scan (s) | index vacuum (s) | second heap pass (s) | read time, log (ms) | read time, view (ms) | read rate, log (MB/s) | read rate, view (MB/s) | blocks prefetched ÷ scanned |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in bigs:
        for c in configs:
            pf = by_round(delay, c, "table", t, "prefetched")
            sc = by_round(delay, c, "table", t, "scanned")
            frac = med([pf[k] / sc[k] for k in pf if pf[k] is not None and sc.get(k)])
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                t, c, cell(delay, c, "table", t, "elapsed_s"), cell(delay, c, "table", t, "heap_scan_s"),
                cell(delay, c, "table", t, "index_vacuum_s"), cell(delay, c, "table", t, "heap_vacuum_s"),
                cell(delay, c, "table", t, "log_read_ms", 0), cell(delay, c, "table", t, "view_read_ms", 0),
                cell(delay, c, "table", t, "log_read_rate", 1), cell(delay, c, "table", t, "view_read_rate", 1),
                fmt(frac)))
    lines += waits_table(delay)
    lines.append("")
lines += ["Raw runs: %s." % path.split("/")[-1], ""]
open(out, "w").write("\n".join(lines))
