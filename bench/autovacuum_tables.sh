#!/bin/bash
#
# autovacuum_tables.sh
#	Is a fast autovacuum followed and prefetched from its first block?
#
# Three tables of ROWS rows (8 a block; 384,000 rows = 375 MB by default)
# are loaded into a throwaway cluster, frozen, and one row is updated on
# DIRTY % of each table's pages (seeded, so every run updates the same
# pages).  The stopped cluster is kept as a template.  Every run starts
# from a fresh copy of it, with the OS page cache dropped, a client session
# connected to the database (as on a server in use: the monitor keeps a
# forecaster there) and holding a lock that makes autovacuum pass the tables
# by until the forecaster has the three tables due; then the lock goes and
# one worker vacuums the three tables one after the other.  Each table's autovacuum is taken from its own log line (elapsed,
# pages scanned, I/O timings: read, avg read rate) and from pg_stat_prefetch
# (blocks_read, blocks prefetched and ready, read_time, whether the scan was
# followed from its first block).
#
# Configurations, alternated in every round (round 1 in this order, later
# rounds shuffled with the round as seed):
#	off	bgw_prefetch.vacuum = off: the scans are watched and measured,
#		nothing is read ahead
#	on	bgw_prefetch.vacuum = on (the default)
#	bound	as off, and the three tables' files read into the OS cache
#		after the drop: every read the VACUUMs make is a cache hit
# each with autovacuum_vacuum_cost_delay = 0 and with its default (2 ms).
#
# Usage: bench/autovacuum_tables.sh [options]
#   --rounds N     rounds (5)
#   --delays LIST  autovacuum_vacuum_cost_delay settings ("0 2ms")
#   --rows N       rows per table (384000)
#   --dirty PCT    % of pages with an updated row (1)
#   --so PATH      the bgw_prefetch.so to test (default: the installed one)
#   --out NAME     result files bench/results/NAME.md and NAME_runs.csv
#                  (autovacuum_tables)
#   --keep         keep the work directory
# Run it as root (it drops the OS cache), alone on the machine.
set -euo pipefail

BENCH_NAME=autovacuum_tables.sh
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/common.sh
. "$ROOT/bench/lib/common.sh"
# shellcheck source=lib/cold_bench.sh
. "$ROOT/bench/lib/cold_bench.sh"

ROUNDS=5
DELAYS="0 2ms"
ROWS=384000
DIRTY=1
SO=""
NAME=autovacuum_tables
KEEP=0
while [ $# -gt 0 ]; do
	case "$1" in
		--rounds) ROUNDS=$2; shift 2 ;;
		--delays) DELAYS=$2; shift 2 ;;
		--rows) ROWS=$2; shift 2 ;;
		--dirty) DIRTY=$2; shift 2 ;;
		--so) SO=$2; shift 2 ;;
		--out) NAME=$2; shift 2 ;;
		--keep) KEEP=1; shift ;;
		*) other_option "$1" ;;
	esac
done
need_root "every run drops the OS page cache"
RESDIR=$ROOT/bench/results
mkdir -p "$RESDIR"
check_pg_extension "$SO"
cold_setup 55440
pin_extension
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

TABLES="t1 t2 t3"

# ---------------------------------------------------------------- template
init_cluster
cat >>"$PGDATA/postgresql.conf" <<EOF
shared_buffers = 128MB
track_io_timing = on
autovacuum = off
autovacuum_naptime = 1s
log_autovacuum_min_duration = 0
bgw_prefetch.log_min_duration = 0
EOF
start_cluster
log "loading 3 tables of $ROWS rows, freezing, updating $DIRTY % of their pages"
for t in $TABLES; do
	q "CREATE TABLE $t (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = on,
		autovacuum_vacuum_threshold = 100, autovacuum_vacuum_scale_factor = 0,
		autovacuum_vacuum_insert_threshold = -1, autovacuum_analyze_threshold = 2000000000)"
	q "INSERT INTO $t SELECT g, repeat('x', 900) FROM generate_series(1, $ROWS) g"
	q "VACUUM (FREEZE, ANALYZE) $t"
	# one row on DIRTY % of the pages, chosen with a fixed seed: HOT updates
	q "SELECT setseed(0.$(echo "$t" | tr -dc 0-9))"
	q "UPDATE $t SET pad = repeat('y', 900) WHERE ctid = ANY (ARRAY(
		SELECT DISTINCT format('(%s,1)', floor(random() * (pg_relation_size('$t') / 8192)))::tid
		  FROM generate_series(1, (pg_relation_size('$t') / 8192 * $DIRTY / 100)::int)))"
done
TABLE_MB=$(q "SELECT pg_relation_size('t1') / 1048576")
q "CHECKPOINT"
pg_stop
as_pg cp -a "$PGDATA" "$WORK/template"

# ---------------------------------------------------------------- runs
CSV=$RESDIR/${NAME}_runs.csv
echo "round,seq,config,cost_delay,table,elapsed_s,scanned,log_read_ms,log_read_rate,view_scans,view_blocks_read,view_read_ms,view_read_rate,view_total_ms,prefetched,ready,late,joined_block,fraction_prefetched,load1" >"$CSV"
SEQ=0

# run CONFIG COST_DELAY: one cold autovacuum of the three tables
run()
{
	local config=$1 delay=$2 prefetch=on off t f
	[ "$config" = on ] || prefetch=off
	next_run_dir
	rm -rf "$PGDATA"
	as_pg cp -a "$WORK/template" "$PGDATA"
	cat >>"$PGDATA/postgresql.conf" <<EOF
bgw_prefetch.vacuum = $prefetch
autovacuum_vacuum_cost_delay = $delay
autovacuum = on
EOF
	drop_os_cache
	off=$(stat -c %s "$SERVERLOG" 2>/dev/null || echo 0)
	pg_start
	# A client in the database, as on a server in use, holding a lock that
	# makes autovacuum pass the tables by until the forecaster has them due
	# (autovacuum is on from the start: with it off nothing is due).
	hold_tables "t1, t2, t3"
	# the bound: the tables' files into the OS cache while autovacuum waits
	if [ "$config" = bound ]; then
		for t in $TABLES; do
			for f in $(relfiles "$PGDATA/$(q "SELECT pg_relation_filepath('$t')")"); do
				cat "$f" >/dev/null
			done
		done
	fi
	wait_forecast_due 3 '^(public\.)?t[123]$'
	release_tables
	for _ in $(seq 600); do
		[ "$(q "SELECT count(*) FROM pg_stat_user_tables WHERE relname IN ('t1', 't2', 't3') AND last_autovacuum IS NOT NULL")" = 3 ] &&
			[ "$(q "SELECT coalesce(sum(scans), 0) FROM pg_stat_prefetch WHERE relname IN ('t1', 't2', 't3') AND command = 'vacuum'")" = 3 ] && break
		sleep 0.1
	done
	log_since "$off" >"$RUNDIR/server.log"
	q "SELECT relname, scans, blocks_read, read_time, read_rate, total_time, blocks_prefetched, blocks_ready, blocks_late, coalesce(last_joined_block, -1)
		 FROM pg_stat_prefetch WHERE relname IN ('t1', 't2', 't3') AND command = 'vacuum'" >"$RUNDIR/view.txt"
	end_hold
	pg_stop
	python3 - "$RUNDIR" "$ROUND" "$SEQ" "$config" "$delay" "$(cut -d' ' -f1 /proc/loadavg)" >>"$CSV" <<'EOF'
import re, sys
rundir, rnd, seq, config, delay, load = sys.argv[1:]
log = open(rundir + "/server.log").read()
view = {}
for line in open(rundir + "/view.txt"):
    f = line.rstrip("\n").split("|")
    if len(f) == 10:
        view[f[0]] = f[1:]
for t in ("t1", "t2", "t3"):
    m = re.search(r'automatic vacuum of table "bench\.public\.%s":.*?\n(?:\t.*\n)*?\tpages: \d+ removed, \d+ remain, (\d+) scanned'
                  r'(?:.*\n)*?\tI/O timings: read: ([\d.]+) ms.*\n\tavg read rate: ([\d.]+) MB/s(?:.*\n)*?.*elapsed: ([\d.]+) s' % t, log)
    scanned, lread, lrate, elapsed = m.groups() if m else ("", "", "", "")
    v = view.get(t, [""] * 9)
    frac = ""
    if scanned and v[5]:
        frac = "%.3f" % (float(v[5]) / float(scanned)) if float(scanned) > 0 else ""
    print(",".join([rnd, seq, config, delay, t, elapsed, scanned, lread, lrate,
                    v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], frac, load]))
EOF
	log "round $ROUND $config delay $delay: $(grep -c "^$ROUND,$SEQ," "$CSV") tables recorded"
}

for ROUND in $(seq 1 "$ROUNDS"); do
	for delay in $DELAYS; do
		for config in $(round_configs "$ROUND" off on bound); do
			run "$config" "$delay"
		done
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- report
python3 - "$CSV" "$RESDIR/$NAME.md" "$(machine_meta)" "$EXT_META" "$TABLE_MB" "$DIRTY" "$ROUNDS" "$LOAD0" "$LOAD1" <<'EOF'
import csv, statistics as st, sys
path, out, machine, ext, mb, dirty, rounds, load0, load1 = sys.argv[1:]
rows = list(csv.DictReader(open(path)))
def f(x):
    try: return float(x)
    except ValueError: return None
def med(xs):
    xs = [x for x in xs if x is not None]
    return st.median(xs) if xs else None
def fmt(x, p=3):
    return "-" if x is None else ("%.*f" % (p, x))
lines = ["# Autovacuum of three tables, one after the other: off, on and bound", "",
         "Three tables of %s MB, one row updated on %s %% of their pages, cold OS cache, one autovacuum worker; %s rounds, configurations alternated (bench/autovacuum_tables.sh)." % (mb, dirty, rounds),
         "", "- machine: " + machine, "- " + ext, "- load average before / after: %s / %s" % (load0, load1), ""]
for delay in sorted(set(r["cost_delay"] for r in rows)):
    lines += ["## autovacuum_vacuum_cost_delay = %s" % delay, "",
              "| table | off elapsed (s) | on elapsed (s) | bound elapsed (s) | on ÷ off (paired median) | on ÷ bound (paired median) | scans followed from block 0 (on) | min / median fraction of scanned blocks prefetched (on) | read_time ÷ log read time (all) | read_rate ÷ log read rate (all) |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for t in ("t1", "t2", "t3"):
        sel = lambda c: [r for r in rows if r["cost_delay"] == delay and r["table"] == t and r["config"] == c]
        e = {c: {r["round"]: f(r["elapsed_s"]) for r in sel(c)} for c in ("off", "on", "bound")}
        on_off = [e["on"][k] / e["off"][k] for k in e["on"] if e["off"].get(k) and e["on"][k]]
        on_b = [e["on"][k] / e["bound"][k] for k in e["on"] if e["bound"].get(k) and e["on"][k]]
        on_rows = sel("on")
        followed = sum(1 for r in on_rows if r["joined_block"] == "-1")
        fr = [f(r["fraction_prefetched"]) for r in on_rows]
        fr = [x for x in fr if x is not None]
        allr = [r for r in rows if r["cost_delay"] == delay and r["table"] == t]
        rt = [f(r["view_read_ms"]) / f(r["log_read_ms"]) for r in allr if f(r["log_read_ms"]) and f(r["view_read_ms"]) is not None]
        rr = [f(r["view_read_rate"]) / f(r["log_read_rate"]) for r in allr if f(r["log_read_rate"]) and f(r["view_read_rate"]) is not None]
        lines.append("| %s | %s | %s | %s | %s | %s | %d of %d | %s / %s | %s | %s |" % (
            t, fmt(med(e["off"].values())), fmt(med(e["on"].values())), fmt(med(e["bound"].values())),
            fmt(med(on_off), 2), fmt(med(on_b), 2), followed, len(on_rows),
            fmt(min(fr) if fr else None, 2), fmt(med(fr), 2), fmt(med(rt), 2), fmt(med(rr), 2)))
    lines.append("")
lines += ["Raw runs: %s." % path.split("/")[-1], ""]
open(out, "w").write("\n".join(lines))
EOF
finish_report
