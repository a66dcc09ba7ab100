#!/usr/bin/env python3
"""oltp_plot.py -- the foreground's tail per round, from autovacuum_oltp runs.

Usage: oltp_plot.py OUT.png [--label DELAY:CONFIG=TEXT ...] RUNS.csv ...

For every cost delay and configuration in the runs files of
bench/autovacuum_oltp.sh, plots the p99 latency of the foreground
transactions scheduled while a large table was being vacuumed, one point a
round, and the median as a bar.  Writes OUT.dat and OUT.gp beside OUT.png;
gnuplot OUT.gp, run in that directory, draws OUT.png (the benchmark's
finish_report does that, as for the other benchmarks' plots).  --label names a configuration of one cost delay on the plot
(by default the configuration's own name): for runs made when a
configuration meant something else than it does now.
"""
import csv
import os
import statistics
import sys

out_png = sys.argv[1]
base = os.path.splitext(out_png)[0]
labels = {}                     # (delay, config) -> label
files = []
args = sys.argv[2:]
while args:
    if args[0] == "--label":
        key, text = args[1].split("=", 1)
        delay, config = key.split(":", 1)
        labels[(delay, config)] = text
        args = args[2:]
    else:
        files.append(args.pop(0))
groups = {}                     # (delay, config) -> [p99 per round]
for path in files:
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["kind"] == "foreground" and row["name"] == "vacuums":
                groups.setdefault((row["cost_delay"], row["config"]), []).append(
                    float(row["p99_ms"]))

# x positions: delays in the order met, configurations within each
order = []
for key in groups:
    if key not in order:
        order.append(key)
order.sort(key=lambda k: (k[0] == "0", k[1] != "off"))

with open(base + ".dat", "w") as dat:
    dat.write("# x label median p99 per round...\n")
    for i, key in enumerate(order):
        vals = groups[key]
        label = "%s\\ndelay %s" % (labels.get(key, key[1]), key[0])
        dat.write('%d "%s" %.3f %s\n' % (i, label, statistics.median(vals),
                                        " ".join("%.3f" % v for v in vals)))

maxrounds = max(len(v) for v in groups.values())
with open(base + ".gp", "w") as gp:
    gp.write("""set terminal pngcairo size 900,450 font ",10"
set output "%s"
set title "Foreground p99 latency while autovacuum runs (pgbench -R 300; one point a round, bar: median)"
set ylabel "p99 latency (ms)"
set yrange [0:*]
set xrange [-0.6:%.1f]
set bmargin 4
set boxwidth 0.5
set style fill transparent solid 0.3
set grid ytics
set key off
plot "%s" using 1:3:xtic(2) with boxes lc rgb "#4477aa", \\
""" % (os.path.basename(out_png), len(order) - 0.4, os.path.basename(base + ".dat")))
    parts = ['     "%s" using 1:%d with points pt 7 ps 1.2 lc rgb "#cc3311"'
             % (os.path.basename(base + ".dat"), 4 + r) for r in range(maxrounds)]
    gp.write(", \\\n".join(parts) + "\n")

