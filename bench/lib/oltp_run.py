#!/usr/bin/env python3
"""One run of bench/autovacuum_oltp.sh, as CSV lines on stdout.

Arguments: RUNDIR ROUND SEQ CONFIG COST_DELAY LOAD1 TABLE...

Reads RUNDIR/server.log (autovacuum's log line of each table), progress.txt
(pg_stat_progress_vacuum sampled every 20 ms: epoch|relname|phase|the
worker's wait event, CPU when it waits on none),
view.txt (pg_stat_prefetch: relname|read_time|read_rate|blocks_prefetched)
and pgbench's per-transaction logs fg.* (client, transaction, latency us,
script, epoch, us, schedule lag us).  Prints one line per table (kind
"table"), one for the vacuums together (kind "all": elapsed from the first
start to the last end), and two for the foreground (kind "foreground":
"vacuums", the transactions scheduled while a table was being vacuumed,
and "after", those scheduled from the lock's release (RUNDIR/released, an
epoch) to the end of the run).  A table's line ends with its heap-scan
samples by wait event, "event:count" joined by ";".
"""
import datetime
import glob
import re
import sys

rundir, rnd, seq, config, delay, load = sys.argv[1:7]
tables = sys.argv[7:]
log = open(rundir + "/server.log").read()


def epoch(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()


vac = {}
for t in tables:
    m = re.search(r'^(\S+ \S+) UTC \[\d+\] LOG:  automatic vacuum of table "bench\.public\.%s":.*\n'
                  r'(?:\t.*\n)*?\tpages: \d+ removed, \d+ remain, (\d+) scanned.*\n'
                  r'(?:\t.*\n)*?\tI/O timings: read: ([\d.]+) ms.*\n\tavg read rate: ([\d.]+) MB/s.*\n'
                  r'(?:\t.*\n)*?\tsystem usage: .*elapsed: ([\d.]+) s' % t, log, re.M)
    if m:
        end = epoch(m.group(1))
        vac[t] = dict(end=end, start=end - float(m.group(5)), scanned=m.group(2),
                      read_ms=m.group(3), read_rate=m.group(4), elapsed=m.group(5))

# phases from the progress samples: each phase from its first sample to the
# first sample of the next one (or the last sample + 20 ms)
samples = {}
heap_waits = {}
for line in open(rundir + "/progress.txt"):
    f = line.rstrip("\n").split("|")
    if len(f) == 4 and f[1] in tables:
        samples.setdefault(f[1], []).append((float(f[0]), f[2]))
        if f[2] == "scanning heap":
            w = heap_waits.setdefault(f[1], {})
            w[f[3]] = w.get(f[3], 0) + 1
phases = {}
for t, s in samples.items():
    s.sort()
    first = {}
    order = []
    for ts, ph in s:
        if ph not in first:
            first[ph] = ts
            order.append(ph)
    d = {}
    for i, ph in enumerate(order):
        end = first[order[i + 1]] if i + 1 < len(order) else s[-1][0] + 0.02
        d[ph] = end - first[ph]
    phases[t] = d

view = {}
for line in open(rundir + "/view.txt"):
    f = line.rstrip("\n").split("|")
    if len(f) == 4:
        view[f[0]] = f[1:]


def fmt(x, p=3):
    return "" if x is None else "%.*f" % (p, x)


for t in tables:
    v = vac.get(t, {})
    ph = phases.get(t, {})
    w = view.get(t, ["", "", ""])
    print(",".join([rnd, seq, config, delay, "table", t, v.get("elapsed", ""),
                    fmt(ph.get("scanning heap")), fmt(ph.get("vacuuming indexes")),
                    fmt(ph.get("vacuuming heap")), v.get("read_ms", ""), v.get("read_rate", ""),
                    w[0], w[1], w[2], v.get("scanned", "")] + [""] * 5 + [load, "", "", "",
                    ";".join("%s:%d" % e for e in sorted(heap_waits.get(t, {}).items()))]))

starts = [v["start"] for v in vac.values()]
ends = [v["end"] for v in vac.values()]
window = (min(starts), max(ends)) if len(vac) == len(tables) else None
print(",".join([rnd, seq, config, delay, "all", "vacuums",
                fmt(window[1] - window[0]) if window else ""] + [""] * 14 + [load, "", "", "", ""]))

# the foreground: latency (from the scheduled start, as pgbench -R counts
# it) and schedule lag of each transaction, by its scheduled start
txns = []
for path in glob.glob(rundir + "/fg*"):
    for line in open(path):
        f = line.split()
        if len(f) < 7 or f[2] == "skipped":
            continue
        lat = int(f[2])
        done = int(f[4]) + int(f[5]) / 1e6
        txns.append((done - lat / 1e6, lat / 1000.0, int(f[6]) / 1000.0))


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


released = float(open(rundir + "/released").read())
for name, sel in (("vacuums", [x for x in txns if window and window[0] <= x[0] <= window[1]]),
                  ("after", [x for x in txns if x[0] >= released])):
    lat = [x[1] for x in sel]
    lag = [x[2] for x in sel]
    print(",".join([rnd, seq, config, delay, "foreground", name] + [""] * 10 +
                   [fmt(pct(lat, 50)), fmt(pct(lat, 99)), fmt(pct(lat, 99.9)),
                    fmt(pct(lag, 99)), str(len(sel)), load,
                    fmt(pct(lat, 90)), fmt(pct(lat, 95)), str(sum(1 for x in lat if x > 50)), ""]))

