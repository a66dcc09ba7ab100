#!/bin/bash
#
# autovacuum_oltp.sh
#	Autovacuum beside live OLTP traffic: does autovacuum finish sooner with
#	bgw_prefetch, and does the foreground suffer?
#
# A throwaway cluster (shared_buffers 128MB) holds pgbench's tables (scale
# SCALE) and TABLES large tables of TABLE_MB each, with a btree index, frozen,
# then one row deleted on DIRTY % of their pages (seeded): autovacuum's heap
# scan reads those pages and the short all-visible runs between them, vacuums
# the index, and revisits the pages in its second heap pass.  pgbench's own
# tables are not autovacuumed: with naptime 1 s autovacuum would visit them
# every second, and here each visit stalled every client for about 300 ms
# on a WAL flush, extension off or on -- that would be all a p99 measured.
# The stopped cluster is kept as a template.
#
# Every run starts from a fresh copy of the template with the OS page cache
# dropped.  pgbench runs at a fixed rate (-n -R RATE, 4 clients, DURATION
# seconds) on its own tables.  A client holds a lock that makes autovacuum
# (3 workers, naptime 1 s) pass the large tables by until bgw_prefetch's
# forecaster has them due, as on a server where it has been resident for a
# while, and pgbench has run WARMUP seconds; then the lock goes and
# autovacuum processes them while pgbench goes on.
#
# Free page reporting is off for the run (bench/lib/common.sh) unless
# --page-reporting is given.  With it on, the gigabytes the cache drop
# frees are handed to the host in batches every two seconds
# (PAGE_REPORTING_DELAY), and each batch stalls every client for 30-400 ms
# for as long as the batches last (10-30 s here, longer the more was
# dropped), extension loaded or not: that, not the server, set the
# foreground's tail.
#
# Reported per cost-delay setting, as medians over the rounds and on / off
# ratios of the paired medians:
#	- each table's autovacuum: elapsed, heap-scan phase, index-vacuum phase,
#	  second heap pass (pg_stat_progress_vacuum sampled every 20 ms), and
#	  read time and read rate (its log line; pg_stat_prefetch's beside it);
#	- where the heap-scan phases spend their time: the share of those 20 ms
#	  samples in which the worker waited on each wait event (CPU: none);
#	- the foreground: latency p50 / p90 / p95 / p99 / p99.9, the number of
#	  transactions over 50 ms and the schedule lag p99 of the transactions
#	  scheduled while any large table was being vacuumed, and the p99 from
#	  the release of the lock to the end of the run.
#
# Configurations, alternated in every round (round 1 in this order, later
# rounds shuffled with the round as seed):
#	off	bgw_prefetch.vacuum = off: the scans are watched and measured,
#		nothing is read ahead
#	on	bgw_prefetch.vacuum = on (the default)
# each with autovacuum_vacuum_cost_delay at its default (2 ms) and 0.
#
# Usage: bench/autovacuum_oltp.sh [options]
#   --rounds N      rounds (5)
#   --delays LIST   autovacuum_vacuum_cost_delay settings ("2ms 0")
#   --tables N      large tables (4)
#   --table-mb MB   size of each (1024)
#   --dirty PCT     % of their pages with a deleted row (3)
#   --scale N       pgbench scale (20)
#   --rate TPS      pgbench -R (300)
#   --duration S    pgbench -T (60)
#   --warmup S      seconds of pgbench before autovacuum may start (20)
#   --configs LIST  configurations ("off on"); onN: on with
#                   bgw_prefetch.tablespace_io_depth = 'pg_default=N';
#                   onfa: on with bgw_prefetch.io_method = 'fadvise';
#                   onnp: on with bgw_prefetch.pacing = off (bounded by
#                   depth and distance only);
#                   onserve: on with bgw_prefetch.cost_limited_depth = -1
#                   (the default: cost-limited autovacuums read ahead for);
#                   onhold: on with cost_limited_depth = 0 (nothing read
#                   ahead of them); onmdN: on with bgw_prefetch.max_distance
#                   = 'N MB' (onmd2: a VACUUM's distance never grows past
#                   its initial 256 blocks);
#                   none: the extension not loaded (no monitor, no forecaster);
#                   onalt: on, with the library given by --so-alt (a
#                   variant of the code, alternated with the others);
#                   offww / onww: off / on with the WAL writer flushing
#                   every millisecond (wal_writer_delay = 1ms,
#                   wal_writer_flush_after = 0)
#   --so PATH       the bgw_prefetch.so to test (default: the installed one)
#   --so-alt PATH   the library of the onalt configuration
#   --out NAME      result files bench/results/NAME.md, NAME_runs.csv and
#                   NAME.png, the foreground's p99 per round (autovacuum_oltp)
#   --keep          keep the work directory
#   --page-reporting  leave the guest's free page reporting as it is
#   --read-ahead KB   the data disk's read_ahead_kb for the run (put back
#                   at the end); the result header records it either way
# Run it as root (it drops the OS cache), alone on the machine.
set -euo pipefail

BENCH_NAME=autovacuum_oltp.sh
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/common.sh
. "$ROOT/bench/lib/common.sh"
# shellcheck source=lib/cold_bench.sh
. "$ROOT/bench/lib/cold_bench.sh"

ROUNDS=5
DELAYS="2ms 0"
TABLES=4
TABLE_MB=1024
DIRTY=3
SCALE=20
RATE=300
DURATION=60
WARMUP=20
CONFIGS="off on"
SO=""
SO_ALT=""
NAME=autovacuum_oltp
KEEP=0
PAGE_REPORTING=0
READ_AHEAD=""
while [ $# -gt 0 ]; do
	case "$1" in
		--rounds) ROUNDS=$2; shift 2 ;;
		--delays) DELAYS=$2; shift 2 ;;
		--tables) TABLES=$2; shift 2 ;;
		--table-mb) TABLE_MB=$2; shift 2 ;;
		--dirty) DIRTY=$2; shift 2 ;;
		--scale) SCALE=$2; shift 2 ;;
		--rate) RATE=$2; shift 2 ;;
		--duration) DURATION=$2; shift 2 ;;
		--warmup) WARMUP=$2; shift 2 ;;
		--configs) CONFIGS=$2; shift 2 ;;
		--so) SO=$2; shift 2 ;;
		--so-alt) SO_ALT=$2; shift 2 ;;
		--out) NAME=$2; shift 2 ;;
		--keep) KEEP=1; shift ;;
		--page-reporting) PAGE_REPORTING=1; shift ;;
		--read-ahead) READ_AHEAD=$2; shift 2 ;;
		*) other_option "$1" ;;
	esac
done
for c in $CONFIGS; do
	[[ "$c" =~ ^(none|off|on|on[0-9]+|onfa|onnp|onserve|onhold|onmd[0-9]+|offww|onww|onalt)$ ]] || bad_usage "--configs: none, off, on, onN, onfa, onnp, onserve, onhold, onmdN, offww, onww or onalt, not $c"
	[ "$c" != onalt ] || [ -r "$SO_ALT" ] || bad_usage "--configs onalt needs --so-alt PATH"
done
need_root "every run drops the OS page cache"
command -v python3 >/dev/null || die "python3 is needed"
RESDIR=$ROOT/bench/results
mkdir -p "$RESDIR"
check_pg_extension "$SO"
cold_setup 55460
[ "$PAGE_REPORTING" -eq 1 ] || [ ! -e "$PAGE_REPORTING_KNOB" ] || disable_page_reporting
[ -z "$READ_AHEAD" ] || set_read_ahead "$READ_AHEAD" "$WORK"
pin_extension
cp "$WORK/lib/bgw_prefetch.so" "$WORK/main.so"
if [ -n "$SO_ALT" ]; then
	cp "$SO_ALT" "$WORK/alt.so"
	EXT_META="$EXT_META; onalt: bgw_prefetch.so md5 $(md5sum "$WORK/alt.so" | cut -c1-12), copied from $SO_ALT"
fi
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

BIG=$(seq -f 'big%g' 1 "$TABLES" | tr '\n' ' ')
BIG_LIST=$(echo $BIG | sed 's/ /, /g')
BIG_IN=$(echo $BIG | sed "s/\([a-z0-9]*\)/'\1'/g; s/ /, /g")
# 8 rows of ~900 bytes a block
ROWS=$((TABLE_MB * 128 * 8))

# ---------------------------------------------------------------- template
init_cluster
cat >>"$PGDATA/postgresql.conf" <<EOF
shared_buffers = 128MB
max_wal_size = 8GB
track_io_timing = on
autovacuum = off
autovacuum_max_workers = 3
autovacuum_naptime = 1s
log_autovacuum_min_duration = 0
bgw_prefetch.log_min_duration = 0
EOF
start_cluster
log "pgbench scale $SCALE; $TABLES tables of $TABLE_MB MB with an index; deleting a row on $DIRTY % of their pages"
as_pg "$PGBIN/pgbench" -i -q -s "$SCALE" -h "$WORK" -p "$PORT" bench >"$WORK/pgbench_init.log" 2>&1 ||
	{ cat "$WORK/pgbench_init.log" >&2; die "pgbench -i failed"; }
for t in $BIG; do
	q "CREATE TABLE $t (id int, pad text) WITH (fillfactor = 100, autovacuum_vacuum_threshold = 100,
		autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_insert_threshold = -1,
		autovacuum_analyze_threshold = 2000000000)"
	q "INSERT INTO $t SELECT g, repeat('x', 900) FROM generate_series(1, $ROWS) g"
	q "CREATE INDEX ON $t (id)"
	q "VACUUM (FREEZE, ANALYZE) $t"
	q "SELECT setseed(0.$(echo "$t" | tr -dc 0-9))"
	q "DELETE FROM $t WHERE ctid = ANY (ARRAY(
		SELECT DISTINCT format('(%s,1)', floor(random() * (pg_relation_size('$t') / 8192)))::tid
		  FROM generate_series(1, (pg_relation_size('$t') / 8192 * $DIRTY / 100)::int)))"
done
for t in pgbench_accounts pgbench_branches pgbench_tellers pgbench_history; do
	q "ALTER TABLE $t SET (autovacuum_enabled = off)"
done
q "VACUUM (FREEZE, ANALYZE) pgbench_accounts, pgbench_branches, pgbench_tellers, pgbench_history"
q "CHECKPOINT"
pg_stop
as_pg cp -a "$PGDATA" "$WORK/template"

# ---------------------------------------------------------------- runs
CSV=$RESDIR/${NAME}_runs.csv
echo "round,seq,config,cost_delay,kind,name,elapsed_s,heap_scan_s,index_vacuum_s,heap_vacuum_s,log_read_ms,log_read_rate,view_read_ms,view_read_rate,prefetched,scanned,p50_ms,p99_ms,p999_ms,lag_p99_ms,txns,load1,p90_ms,p95_ms,over_50ms,heap_scan_waits" >"$CSV"
SEQ=0

# The copy of the template is gigabytes the virtual disk's host may still
# be writing back after the guest's sync; until it has, every flush (each
# commit's WAL fdatasync) waits a few hundred ms, which would be measured as
# foreground latency.  Wait until five 8 kB O_DSYNC writes in a row take
# under 30 ms each (12-15 ms on an idle disk here, 100-300 ms while the
# host writes back; at most 120 s), and record how long that took.
wait_for_quiet_flushes()
{
	local start quiet=0 ms t0
	start=$(date +%s)
	while [ "$quiet" -lt 5 ] && [ $(($(date +%s) - start)) -lt 120 ]; do
		t0=$(date +%s%N)
		dd if=/dev/zero of="$WORK/flush_probe" bs=8k count=1 oflag=dsync conv=notrunc 2>/dev/null
		ms=$((($(date +%s%N) - t0) / 1000000))
		if [ "$ms" -lt 30 ]; then quiet=$((quiet + 1)); else quiet=0; sleep 0.2; fi
	done
	rm -f "$WORK/flush_probe"
	echo $(($(date +%s) - start)) >"$RUNDIR/flush_wait_s"
}

# run CONFIG COST_DELAY: pgbench at a fixed rate while autovacuum processes
# the large tables, from a cold OS cache
run()
{
	local config=$1 delay=$2 prefetch=on setting="" off pgb pgb_start sampler
	case "$config" in
		none) prefetch=off; setting="shared_preload_libraries = ''" ;;
		off) prefetch=off ;;
		on) ;;
		offww | onww)
			[ "$config" = onww ] || prefetch=off
			setting="wal_writer_delay = 1ms
wal_writer_flush_after = 0" ;;
		onfa) setting="bgw_prefetch.io_method = 'fadvise'" ;;
		onnp) setting="bgw_prefetch.pacing = off" ;;
		onserve) setting="bgw_prefetch.cost_limited_depth = -1" ;;
		onhold) setting="bgw_prefetch.cost_limited_depth = 0" ;;
		onmd*) setting="bgw_prefetch.max_distance = '${config#onmd}MB'" ;;
		onalt) ;;
		on*) setting="bgw_prefetch.tablespace_io_depth = 'pg_default=${config#on}'" ;;
	esac
	# onalt runs the --so-alt library, every other configuration the main one
	if [ "$config" = onalt ]; then
		cp "$WORK/alt.so" "$WORK/lib/bgw_prefetch.so"
	else
		cp "$WORK/main.so" "$WORK/lib/bgw_prefetch.so"
	fi
	next_run_dir
	rm -rf "$PGDATA"
	as_pg cp -a "$WORK/template" "$PGDATA"
	cat >>"$PGDATA/postgresql.conf" <<EOF
bgw_prefetch.vacuum = $prefetch
$setting
autovacuum_vacuum_cost_delay = $delay
autovacuum = on
EOF
	drop_os_cache
	wait_for_quiet_flushes
	off=$(stat -c %s "$SERVERLOG" 2>/dev/null || echo 0)
	pg_start
	hold_tables "$BIG_LIST"
	# the progress sampler: one session, one line every 20 ms while it runs,
	# with what the autovacuum worker waits on (CPU: it waits on nothing)
	PGAPPNAME=progress_sampler psql_ -qAt >"$RUNDIR/progress.txt" 2>&1 <<EOF &
SELECT extract(epoch FROM clock_timestamp()), c.relname, p.phase,
       coalesce(a.wait_event, 'CPU')
  FROM pg_stat_progress_vacuum p JOIN pg_class c ON c.oid = p.relid
  JOIN pg_stat_activity a ON a.pid = p.pid
 WHERE c.relname IN ($BIG_IN) \watch 0.02
EOF
	sampler=$!
	# what the foreground waits on, and the pacer's state, every 20 ms
	PGAPPNAME=foreground_sampler psql_ -qAt >"$RUNDIR/foreground.txt" 2>&1 <<EOF &
SELECT extract(epoch FROM clock_timestamp()),
       coalesce(wait_event_type || ':' || wait_event, 'CPU'), count(*)
  FROM pg_stat_activity
 WHERE application_name = 'pgbench' AND state = 'active'
 GROUP BY 2 \watch 0.02
EOF
	fg_sampler=$!
	pacing_sampler=
	if [ "$config" != none ]; then
		PGAPPNAME=pacing_sampler psql_ -qAt >"$RUNDIR/pacing.txt" 2>&1 <<EOF &
SELECT extract(epoch FROM clock_timestamp()), pacing, pacing_rate_mb_s,
       probe_latency_us, probe_base_latency_us
  FROM bgw_prefetch_status() \watch 0.02
EOF
		pacing_sampler=$!
	fi
	(cd "$RUNDIR" && PGAPPNAME=pgbench as_pg "$PGBIN/pgbench" -n -c 4 -j 2 -R "$RATE" -T "$DURATION" -l --log-prefix="$RUNDIR/fg" \
		-h "$WORK" -p "$PORT" bench >"$RUNDIR/pgbench.txt" 2>&1) &
	pgb=$!
	pgb_start=$(date +%s)
	[ "$config" = none ] || wait_forecast_due "$TABLES" '^(public\.)?big[0-9]+$'
	while [ "$(date +%s)" -lt $((pgb_start + WARMUP)) ]; do sleep 0.2; done
	release_tables
	echo "$(date +%s.%N)" >"$RUNDIR/released"
	wait "$pgb" || die "pgbench failed: $(tail -3 "$RUNDIR/pgbench.txt")"
	for _ in $(seq 6000); do
		[ "$(q "SELECT count(*) FROM pg_stat_user_tables WHERE relname IN ($BIG_IN) AND last_autovacuum IS NOT NULL")" = "$TABLES" ] && break
		sleep 0.1
	done
	kill "$sampler" "$fg_sampler" $pacing_sampler 2>/dev/null || true
	wait "$sampler" "$fg_sampler" $pacing_sampler 2>/dev/null || true
	log_since "$off" >"$RUNDIR/server.log"
	if [ "$config" = none ]; then
		: >"$RUNDIR/view.txt"
	else
		q "SELECT relname, read_time, read_rate, blocks_prefetched FROM pg_stat_prefetch
			WHERE relname IN ($BIG_IN) AND command = 'vacuum'" >"$RUNDIR/view.txt"
	fi
	end_hold
	pg_stop
	python3 "$ROOT/bench/lib/oltp_run.py" "$RUNDIR" "$ROUND" "$SEQ" "$config" "$delay" \
		"$(cut -d' ' -f1 /proc/loadavg)" $BIG >>"$CSV"
	log "round $ROUND $config delay $delay: $(grep "^$ROUND,$SEQ,.*,foreground,vacuums," "$CSV" | cut -d, -f17-18 | tr , /) ms p50/p99 during the vacuums"
	log "  $(python3 "$ROOT/bench/lib/oltp_waits.py" "$RUNDIR")"
}

for ROUND in $(seq 1 "$ROUNDS"); do
	for delay in $DELAYS; do
		for config in $(round_configs "$ROUND" $CONFIGS); do
			run "$config" "$delay"
		done
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- report
python3 "$ROOT/bench/lib/oltp_report.py" "$CSV" "$RESDIR/$NAME.md" \
	"$(machine_meta); $(page_reporting_meta)" "$EXT_META" "$TABLES" "$TABLE_MB" "$DIRTY" "$SCALE" "$RATE" "$DURATION" "$WARMUP" \
	"$ROUNDS" "$LOAD0" "$LOAD1" "$CONFIGS"
python3 "$ROOT/bench/lib/oltp_plot.py" "$RESDIR/$NAME.png" "$CSV"
finish_report
