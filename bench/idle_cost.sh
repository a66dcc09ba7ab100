#!/bin/bash
#
# idle_cost.sh
#	What bgw_prefetch costs a server it has nothing to do for: select-only
#	pgbench throughput with the extension not loaded ("none") and loaded
#	with its defaults ("on": the monitor looks every naptime, the CLOG
#	writer sleeps), and the CPU time its two workers used meanwhile.
#
# A throwaway cluster (shared_buffers 128MB, pgbench scale SCALE, so that
# the data is cached: nothing here reads from disk) runs pgbench -S with
# CLIENTS clients for DURATION seconds per run; the two configurations
# alternate in every round (round 1 in the given order, later rounds
# shuffled), the server restarted between runs.  Reported: tps per run,
# medians, the median of the per-round ratios on / none, and the CPU
# seconds (user + system, from /proc) of the monitor and the CLOG writer
# per run.
#
# Usage: bench/idle_cost.sh [--rounds N (5)] [--duration S (20)]
#                           [--clients N (2)] [--scale N (20)] [--out NAME]
# Run it as root (the server runs as postgres), alone on the machine.
set -euo pipefail

BENCH_NAME=idle_cost.sh
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/common.sh
. "$ROOT/bench/lib/common.sh"
# shellcheck source=lib/cold_bench.sh
. "$ROOT/bench/lib/cold_bench.sh"

ROUNDS=5
DURATION=20
CLIENTS=2
SCALE=20
NAME=idle_cost
KEEP=0
while [ $# -gt 0 ]; do
	case "$1" in
		--rounds) ROUNDS=$2; shift 2 ;;
		--duration) DURATION=$2; shift 2 ;;
		--clients) CLIENTS=$2; shift 2 ;;
		--scale) SCALE=$2; shift 2 ;;
		--out) NAME=$2; shift 2 ;;
		*) other_option "$1" ;;
	esac
done
need_root "the server runs as $PGUSER"
RESDIR=$ROOT/bench/results
mkdir -p "$RESDIR"
check_pg_extension ""
cold_setup 55480
pin_extension
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

init_cluster
cat >>"$PGDATA/postgresql.conf" <<EOF
shared_buffers = 128MB
EOF
start_cluster
as_pg "$PGBIN/pgbench" -i -q -s "$SCALE" -h "$WORK" -p "$PORT" bench >"$WORK/pgbench_init.log" 2>&1 ||
	{ cat "$WORK/pgbench_init.log" >&2; die "pgbench -i failed"; }
q "VACUUM ANALYZE" >/dev/null
pg_stop

# cpu_of BACKEND_TYPE: user + system seconds of that process so far (0 if none)
cpu_of()
{
	local pid
	pid=$(q "SELECT pid FROM pg_stat_activity WHERE backend_type = '$1'")
	[ -n "$pid" ] || { echo 0; return; }
	awk '{ sub(/^.*\) /, ""); split($0, f, " "); printf "%.2f", (f[12] + f[13]) / 100 }' "/proc/$pid/stat"
}

CSV=$RESDIR/${NAME}_runs.csv
echo "round,config,tps,monitor_cpu_s,clog_writer_cpu_s,load1" >"$CSV"
for ROUND in $(seq 1 "$ROUNDS"); do
	for config in $(round_configs "$ROUND" none on); do
		if [ "$config" = none ]; then
			sed -i "s/^shared_preload_libraries = .*/shared_preload_libraries = ''/" "$PGDATA/postgresql.conf"
		else
			sed -i "s/^shared_preload_libraries = .*/shared_preload_libraries = 'bgw_prefetch'/" "$PGDATA/postgresql.conf"
		fi
		pg_start
		q "SELECT count(*) FROM pgbench_accounts" >/dev/null	# the data in shared buffers
		m0=$(cpu_of 'bgw_prefetch monitor')
		c0=$(cpu_of 'bgw_prefetch clog writer')
		tps=$(as_pg "$PGBIN/pgbench" -n -S -c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" -h "$WORK" -p "$PORT" bench |
			sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
		m1=$(cpu_of 'bgw_prefetch monitor')
		c1=$(cpu_of 'bgw_prefetch clog writer')
		pg_stop
		echo "$ROUND,$config,$tps,$(echo "$m1 $m0" | awk '{printf "%.2f", $1 - $2}'),$(echo "$c1 $c0" | awk '{printf "%.2f", $1 - $2}'),$(cut -d' ' -f1 /proc/loadavg)" >>"$CSV"
		log "round $ROUND $config: $tps tps"
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$CSV" "$RESDIR/$NAME.md" "$(machine_meta)" "$EXT_META" "$LOAD0" "$LOAD1" \
	"$ROUNDS" "$DURATION" "$CLIENTS" "$SCALE" <<'EOF'
import csv, statistics, sys
path, out, machine, ext, load0, load1, rounds, duration, clients, scale = sys.argv[1:]
rows = list(csv.DictReader(open(path)))
by = {}
for r in rows:
    by.setdefault(r["config"], {})[r["round"]] = r
ratios = [float(by["on"][k]["tps"]) / float(by["none"][k]["tps"])
          for k in by["on"] if k in by["none"]]
with open(out, "w") as f:
    f.write("# What bgw_prefetch costs an idle server\n\n")
    f.write("pgbench -S (select-only, data in shared buffers), %s clients, %s s per run, scale %s; "
            "*none*: shared_preload_libraries = ''; *on*: bgw_prefetch loaded with its defaults; "
            "%s rounds, configurations alternated (bench/idle_cost.sh).\n\n" % (clients, duration, scale, rounds))
    f.write("- machine: %s\n- %s\n- load average before / after: %s / %s\n\n" % (machine, ext, load0, load1))
    f.write("| config | tps, median (min-max) | monitor CPU per run (s), median | CLOG writer CPU per run (s), median |\n|---|---|---|---|\n")
    for c in ("none", "on"):
        t = [float(r["tps"]) for r in by[c].values()]
        m = [float(r["monitor_cpu_s"]) for r in by[c].values()]
        w = [float(r["clog_writer_cpu_s"]) for r in by[c].values()]
        f.write("| %s | %.0f (%.0f-%.0f) | %s | %s |\n" % (
            c, statistics.median(t), min(t), max(t),
            "-" if c == "none" else "%.2f" % statistics.median(m),
            "-" if c == "none" else "%.2f" % statistics.median(w)))
    f.write("\non / none, median of the per-round ratios: %.3f (%.3f-%.3f)\n\nRaw runs: %s.\n"
            % (statistics.median(ratios), min(ratios), max(ratios), path.split("/")[-1]))
EOF
finish_report
