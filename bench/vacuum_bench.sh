#!/bin/bash
#
# vacuum_bench.sh
#	How much bgw_prefetch speeds up VACUUM on a cold cache (issue 3).
#
# A ~2 GB table is loaded once into a throwaway cluster and frozen.  For
# each dirty-page fraction a fixed random set of pages (seeded) gets one
# row updated.  Every timed run starts from the same state:
#	re-freeze (VACUUM FREEZE), re-update the same pages (HOT, in place),
#	CHECKPOINT, compute the blocks the VACUUM will read, stop the server,
#	sync + drop the OS page cache, (bound only: pre-read those blocks),
#	start the server, run the VACUUM and time it.
# Configurations, alternated inside every round, in the given order in the
# first round and shuffled in every later one (round_configs in
# lib/cold_bench.sh; runs.csv records the configuration run before):
#	off	the extension loaded, bgw_prefetch.enabled = off
#	on	bgw_prefetch.enabled = on, io_uring, depth = maintenance_io_concurrency (10)
#	on32	as on, with bgw_prefetch.tablespace_io_depth = 'pg_default=32'
#	ondN	as on, with bgw_prefetch.tablespace_io_depth = 'pg_default=N'
#	sbuffa	as sbuf, with bgw_prefetch.io_method = fadvise (the loader's
#		reads are then the first copy of each block out of the page cache)
#	onfa	as on, with bgw_prefetch.io_method = fadvise (posix_fadvise
#		WILLNEED instead of io_uring reads)
#	oracle	enabled = off; as the VACUUM statement starts, a separate
#		program (bench/lib/read_plan.c: one io_uring loop, 32 reads in
#		flight) reads exactly the planned blocks, coalesced into reads
#		of up to 32 blocks as the prefetcher does: an ideal
#		prefetcher that knows the plan beforehand, joins at once and
#		keeps 32 reads in flight.  It has to read while the VACUUM runs,
#		as any prefetcher does; its time against the bound is what the
#		storage leaves to take (manual VACUUMs only)
#	oracle1, oracle4  the same with 1 or 4 reads in flight (fewer bytes
#		in flight slow the VACUUM's WAL flushes less, and read slower)
#	bound	enabled = off, and exactly the heap blocks the VACUUM reads are
#		already in the OS cache, pinned there with mlock (the best a
#		prefetcher could do)
#	sbuf	as on, with bgw_prefetch.read_into = shared_buffers (issue 18:
#		a buffer loader reads the prefetched blocks into shared buffers)
#	sbound	enabled = off, and exactly the heap blocks the VACUUM reads are
#		already in shared buffers: pg_prewarm(vb, 'buffer') over the
#		planned ranges after the server start, before the timed part
#		(the best a shared-buffer prefetcher could do; shared_buffers
#		must hold them: run with e.g. --conf 'shared_buffers = 2GB',
#		which then applies to every configuration of the run)
# The machine is shared: a run during which another process dropped the OS
# cache (/proc/vmstat drop_pagecache) is flagged, and repeated if manual.
# Workloads: manual VACUUM (VERBOSE) with vacuum_cost_delay = 0 (timed by
# the client: clock_timestamp() before and after), and autovacuum with the
# default cost settings (2 ms delay, limit 200; timed by the "elapsed" of its
# log_autovacuum_min_duration = 0 line).
#
# The planned block list is computed by bench/lib/vacuum_plan.py from
# pg_visibility_map() (PostgreSQL 15 lazy_scan_skip rule) and checked, run
# by run, against the "scanned" pages that VACUUM reports.
#
# Settings of the benchmark cluster that matter: shared_buffers = 128MB,
# maintenance_io_concurrency = 10, track_io_timing = on, autovacuum_naptime
# = 1s, bgw_prefetch.naptime = 20ms (the monitor's idle sleep: autovacuums
# are discovered within 20 ms; manual VACUUMs also wake it through the
# utility hook), bgw_prefetch.log_min_duration = 0.
#
# Other server versions (--pg 16, 17 or 18: the build of
# scripts/build-pg.sh in /var/cache/bgw_prefetch/pg-N, with bgw_prefetch and
# its extension script installed there by make install PG_CONFIG=...; pass
# the build to test with --so).  What changes with the version:
#	maintenance_io_concurrency is left at the version's default (10 up to
#		17, 16 on 18: what users get) instead of the 10 set on 15; the
#		prefetcher's depth follows it
#	on 18: vacuum_max_eager_freeze_failure_rate = 0 (no eager scanning:
#		18's normal VACUUM may otherwise read some all-visible, not
#		all-frozen pages beyond 15's skip rule, which the plan check
#		mirrors; 17's heap_vac_scan_next_block has 15's rule), and
#		io_method, io_workers, io_combine_limit at 18's defaults (worker,
#		3, 128kB): VACUUM's first heap pass reads through read_stream
#	the report's "server" line gives the version and those settings.
# 16, 17 and 18 do not change the VERBOSE lines parsed ("N scanned",
# "I/O timings: read:", "system usage: CPU:"; 18 adds "M eagerly scanned").
#
# Needs root (drop_caches, and the server runs as the postgres user).
# Results: bench/results/vacuum.md, vacuum.csv (medians), vacuum_runs.csv
# (every run), vacuum_diag.csv (per run: discovery, pacing and wait events
# from pg_stat_prefetch_activity / pg_stat_activity samples taken every
# 20 ms), vacuum_{manual,autovacuum}.dat, vacuum.png; with
# --quick the names start with vacuum_quick instead.
#
# Usage: sudo bash bench/vacuum_bench.sh [--quick] [--reps N] [--blocks N]
#		[--fractions "0.5 1 5 20"] [--av-fractions "1 5 20"]
#		[--configs "off on on32 bound"] [--av-configs "off on bound"]
#			(configurations: off on on32 onfa sbuf oracle1 oracle4
#			oracle bound sbound; the oracles and sbound only in
#			--configs)
#		[--workloads "manual autovacuum"] [--seed N] [--name NAME]
#		[--so PATH] [--conf 'name = value' ...] [--no-page-reporting] [--read-ahead KB] [--keep]
#		[--pg 15|16|17|18]
#	--quick		manual 1 % and 5 %, autovacuum 5 %; off/on/bound; 3 reps
#	--reps		repetitions of every configuration (default 3)
#	--blocks	table size in 8 kB blocks (default 258621, ~2 GB)
#	--name		results file prefix under bench/results (default vacuum)
#	--so		bgw_prefetch.so to test (default: the installed one)
#	--conf		an extra postgresql.conf line (repeatable), e.g. 'fsync = off'
#			to take the WAL flushes out of the VACUUM's time
#	--no-page-reporting  turn the guest's free page reporting off for the
#			run, and back on at exit (bench/lib/common.sh; the
#			ANALYZE benchmark's header says what it changed there)
#	--read-ahead KB	the data disk's read_ahead_kb for the run, put back at
#			exit (the result header records it either way)
#	--keep		keep the data directory (and print where it is)
#	--pg		server major version (default 15, Debian's package; 16-18
#			from /var/cache/bgw_prefetch/pg-N): see above

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIB=$ROOT/bench/lib
RESDIR=$ROOT/bench/results
BENCH_NAME=vacuum_bench.sh
# usage, die, log, need_root, drop_os_cache, PGBIN
# shellcheck source=lib/common.sh
. "$LIB/common.sh"
# the cluster, the cold start, the sampler (PGUSER, WORK, PORT, q, ...)
# shellcheck source=lib/cold_bench.sh
. "$LIB/cold_bench.sh"

QUICK=0
REPS=3
BLOCKS=258621
FRACTIONS="0.5 1 5 20"
AV_FRACTIONS="1 5 20"
CONFIGS="off on on32 bound"
AV_CONFIGS="off on bound"
WORKLOADS="manual autovacuum"
SEED=4242
NAME=""
KEEP=0
NO_PAGE_REPORTING=0
READ_AHEAD=""
SO=""
EXTRA_CONF=()
ROWS_PER_PAGE=9			# fillfactor 90, 760-byte pad: see load_table

ARGS=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) QUICK=1; FRACTIONS="1 5"; AV_FRACTIONS="5"; CONFIGS="off on bound"; shift ;;
		--reps) REPS=$2; shift 2 ;;
		--blocks) BLOCKS=$2; shift 2 ;;
		--fractions) FRACTIONS=$2; shift 2 ;;
		--av-fractions) AV_FRACTIONS=$2; shift 2 ;;
		--configs) CONFIGS=$2; shift 2 ;;
		--av-configs) AV_CONFIGS=$2; shift 2 ;;
		--workloads) WORKLOADS=$2; shift 2 ;;
		--seed) SEED=$2; shift 2 ;;
		--name) NAME=$2; shift 2 ;;
		--keep) KEEP=1; shift ;;
		--no-page-reporting) NO_PAGE_REPORTING=1; shift ;;
		--read-ahead) READ_AHEAD=$2; shift 2 ;;
		--so) SO=$2; shift 2 ;;
		--conf) EXTRA_CONF+=("$2"); shift 2 ;;
		--pg) select_pg "$2"; shift 2 ;;
		*) other_option "$1" ;;
	esac
done
for c in $CONFIGS $AV_CONFIGS; do
	case "$c" in off|on|on32|ond1|ond2|ond4|onfa|sbuf|sbuffa|oracle1|oracle4|oracle|bound|sbound) ;; *) bad_usage "unknown configuration $c" ;; esac
done
for c in $AV_CONFIGS; do
	[[ "$c" != oracle* && "$c" != sbound ]] || bad_usage "$c needs a manual VACUUM statement: not an --av-configs configuration"
done
[ -n "$NAME" ] || { [ "$QUICK" -eq 1 ] && NAME=vacuum_quick || NAME=vacuum; }

need_root "every run starts from a cold OS cache"
check_pg_extension "$SO"
[ -f "$SHAREDIR/extension/pg_visibility.control" ] || die "pg_visibility (postgresql-contrib) is not installed"
command -v python3 >/dev/null || die "python3 is needed"
command -v gnuplot >/dev/null || log "gnuplot not found (apt-get install -y gnuplot-nox): no plot"

# ---------------------------------------------------------------- cluster

cold_setup 55700
if [[ " $CONFIGS " == *" oracle"* ]]; then
	cc -O2 -std=gnu99 -Wall -Wextra -Werror -o "$WORK/read_plan" "$LIB/read_plan.c" -luring ||
		die "cannot build bench/lib/read_plan.c (liburing-dev: bash scripts/install-deps.sh)"
fi
[ "$NO_PAGE_REPORTING" -eq 0 ] || disable_page_reporting
[ -z "$READ_AHEAD" ] || set_read_ahead "$READ_AHEAD" "$WORK"
pin_extension
init_cluster
if [ "$PG_MAJOR" = 15 ]; then
	printf '%s\n' "shared_buffers = 128MB" "maintenance_io_concurrency = 10" >>"$PGDATA/postgresql.conf"
else
	printf '%s\n' "shared_buffers = 128MB" "# maintenance_io_concurrency: PostgreSQL $PG_MAJOR's default" >>"$PGDATA/postgresql.conf"
fi
if [ "$PG_MAJOR" -ge 18 ]; then
	# 18's eager scanning would read all-visible pages beyond the plan
	echo "vacuum_max_eager_freeze_failure_rate = 0" >>"$PGDATA/postgresql.conf"
fi
cat >>"$PGDATA/postgresql.conf" <<EOF
max_wal_size = 16GB
min_wal_size = 2GB
checkpoint_timeout = 1h
track_io_timing = on
vacuum_cost_delay = 0
autovacuum = off			# switched on (reload) only during timed autovacuum runs
autovacuum_naptime = 1s
log_autovacuum_min_duration = 0
log_line_prefix = '%m %n [%p] '
log_checkpoints = off
bgw_prefetch.naptime = 20ms		# discover autovacuums within 20 ms
bgw_prefetch.log_min_duration = 0	# one LOG line per watched scan
bgw_prefetch.enabled = off		# per run, by ALTER SYSTEM
EOF
for c in ${EXTRA_CONF[@]+"${EXTRA_CONF[@]}"}; do
	echo "$c			# --conf" >>"$PGDATA/postgresql.conf"
done
start_cluster
SERVER_META=$(server_meta)
MIC=$(q "SHOW maintenance_io_concurrency")
q "CREATE EXTENSION pg_visibility;"
if [[ " $CONFIGS " == *" sbound "* ]]; then
	q "CREATE EXTENSION pg_prewarm;"
fi
if [[ " $CONFIGS $AV_CONFIGS " == *" sbuf"* ]]; then
	# the extension script pinned is the one with the shared-buffer columns
	q "SELECT blocks_loaded, loader_aborts FROM pg_stat_prefetch LIMIT 0" >/dev/null ||
		die "pg_stat_prefetch has no blocks_loaded column: install this branch's bgw_prefetch--1.0.sql"
	log "pg_stat_prefetch has blocks_loaded and loader_aborts; shared_buffers = $(q "SHOW shared_buffers")"
fi

# ---------------------------------------------------------------- table

ROWS=$((BLOCKS * ROWS_PER_PAGE))
# Row: 24-byte header + int4 + 764-byte text = 792 bytes + 4-byte line
# pointer.  With fillfactor 90 (819 bytes kept free for updates) exactly 9
# rows fit a page and 1000 bytes stay free: the benchmark's UPDATE of one
# row per page is then HOT and in place, so that only the chosen pages get
# dirty, the table never grows, and every re-creation of the dirty state is
# the same.  (With fillfactor 100 the new versions would go to other pages.)
log "loading $ROWS rows ($BLOCKS blocks)"
t_load=$(date +%s)
q "CREATE TABLE vb (id int, pad text) WITH (fillfactor = 90,
	autovacuum_vacuum_threshold = 50, autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_insert_threshold = -1,
	autovacuum_analyze_threshold = 2147483647, autovacuum_analyze_scale_factor = 100);
   INSERT INTO vb SELECT g, rpad(md5(g::text), 760, md5(g::text)) FROM generate_series(1, $ROWS) g;"
q "VACUUM (FREEZE) vb" >/dev/null
q "CHECKPOINT"
NBLOCKS=$(q "SELECT pg_relation_size('vb') / 8192")
[ "$NBLOCKS" -eq "$BLOCKS" ] || die "table has $NBLOCKS blocks, expected $BLOCKS (rows per page changed?)"
LASTROW=$(q "SELECT id FROM vb WHERE ctid = '($((BLOCKS - 1)),$ROWS_PER_PAGE)'::tid")
[ "$LASTROW" = "$ROWS" ] || die "row $ROWS is not at ($((BLOCKS - 1)),$ROWS_PER_PAGE)"
log "loaded and frozen in $(( $(date +%s) - t_load )) s: $NBLOCKS blocks, $(q "SELECT pg_size_pretty(pg_relation_size('vb'))")"
RELPATH=$PGDATA/$(q "SELECT pg_relation_filepath('vb')")

# The dirty page sets, one per fraction (random.sample, fixed seed).
q "CREATE TABLE dirty_pages (frac text, p int) WITH (autovacuum_enabled = false)"
for f in $(printf '%s\n' $FRACTIONS $AV_FRACTIONS | sort -u -g); do
	python3 -c "
import random, sys
n = $BLOCKS; k = round(n * $f / 100.0)
for p in sorted(random.Random('$SEED/$f').sample(range(n), k)):
    print('$f\t%d' % p)" | psql_ -qAt -c "COPY dirty_pages FROM STDIN"
done

# ---------------------------------------------------------------- one run

# Settings of a configuration, as ALTER SYSTEM statements.
config_sql()
{
	case "$1" in
		off|oracle*|bound|sbound) echo "ALTER SYSTEM SET bgw_prefetch.enabled = off; ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = ''; ALTER SYSTEM SET bgw_prefetch.io_method = io_uring;" ;;
		on) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = ''; ALTER SYSTEM SET bgw_prefetch.io_method = io_uring;" ;;
		sbuf) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = ''; ALTER SYSTEM SET bgw_prefetch.io_method = io_uring; ALTER SYSTEM SET bgw_prefetch.read_into = shared_buffers;" ;;
		sbuffa) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = ''; ALTER SYSTEM SET bgw_prefetch.io_method = fadvise; ALTER SYSTEM SET bgw_prefetch.read_into = shared_buffers;" ;;
		on32) config_sql ond32 ;;
		ond*) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'pg_default=${1#ond}'; ALTER SYSTEM SET bgw_prefetch.io_method = io_uring;" ;;
		onfa) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = ''; ALTER SYSTEM SET bgw_prefetch.io_method = fadvise;" ;;
		*) die "unknown configuration $1" ;;
	esac
}

# Re-create the dirty state of fraction $1; sets PLANNED and NOTVIS.
make_dirty()
{
	local f=$1 dir=$2 k updated out
	k=$(q "SELECT count(*) FROM dirty_pages WHERE frac = '$f'")
	q "ALTER SYSTEM SET autovacuum = off; ALTER SYSTEM SET bgw_prefetch.enabled = off; SELECT pg_reload_conf();" >/dev/null
	q "VACUUM (FREEZE) vb" >/dev/null
	updated=$(psql_ -At -c "UPDATE vb SET pad = pad
		WHERE ctid = ANY (ARRAY(SELECT format('(%s,%s)', p, lp)::tid
					  FROM dirty_pages, generate_series(1, 16) lp
					 WHERE frac = '$f'))
		  AND id % $ROWS_PER_PAGE = 1" | sed -n 's/^UPDATE //p')
	[ "$updated" = "$k" ] || die "updated $updated rows for fraction $f, expected $k"
	q "CHECKPOINT"
	out=$(q "COPY (SELECT blkno, all_visible, all_frozen FROM pg_visibility_map('vb') ORDER BY blkno) TO STDOUT" |
		python3 "$LIB/vacuum_plan.py" --out "$dir/plan.txt")
	# out: rel_pages=N not_all_visible=N planned=N
	eval "$out"
	[ "$rel_pages" -eq "$BLOCKS" ] || die "table grew to $rel_pages blocks"
	[ "$not_all_visible" -eq "$k" ] || die "$not_all_visible pages not all-visible, expected $k (update not HOT?)"
	PLANNED=$planned
	NOTVIS=$not_all_visible
}

# Stop, drop the OS cache, pre-read (and pin) for the bound, start.
cold_start()
{
	local cfg=$1 dir=$2
	if [[ $cfg != sbuf* ]] && [[ " $CONFIGS $AV_CONFIGS " == *" sbuf"* ]]; then
		q "ALTER SYSTEM RESET bgw_prefetch.read_into;" >/dev/null
	fi
	q "$(config_sql "$cfg") ALTER SYSTEM SET autovacuum = off;" >/dev/null
	cold_stop
	PRELOAD=""
	if [ "$cfg" = bound ]; then
		# read the planned blocks and pin them (mlock) until the run is over
		python3 "$LIB/read_blocks.py" --threads 32 --max-run 32 --lock "$RELPATH" "$dir/plan.txt" >"$dir/preload.txt" &
		LOCKER_PID=$!
		for _ in $(seq 600); do
			grep -q locked= "$dir/preload.txt" && break
			kill -0 "$LOCKER_PID" 2>/dev/null || die "read_blocks.py failed"
			sleep 0.1
		done
		PRELOAD=$(cat "$dir/preload.txt")
	fi
	# heap blocks in the OS cache when the server starts (0 unless bound)
	CACHED=$(cached_blocks $(relfiles "$RELPATH"))
	pg_start
	[ "$cfg" != sbound ] || prewarm_plan "$dir"
}

# sbound: read exactly the planned blocks into shared buffers
# (pg_prewarm 'buffer', one call per run of consecutive blocks); PRELOAD
# says how long that took.
prewarm_plan()
{
	local dir=$1 t0 t1 n
	python3 -c "
import sys
blocks = [int(l) for l in open('$dir/plan.txt')]
runs = []
for b in blocks:
    if runs and b == runs[-1][1] + 1:
        runs[-1][1] = b
    else:
        runs.append([b, b])
print('SELECT sum(pg_prewarm(\'vb\', \'buffer\', \'main\', lo, hi)) FROM (VALUES %s) v(lo, hi);'
      % ', '.join('(%d::int8, %d::int8)' % (lo, hi) for lo, hi in runs))" >"$dir/prewarm.sql"
	t0=$(date +%s.%N)
	n=$(psql_ -qAt -f "$dir/prewarm.sql")
	t1=$(date +%s.%N)
	[ "$n" -eq "$PLANNED" ] || die "pg_prewarm loaded $n blocks, the plan has $PLANNED"
	PRELOAD="seconds=$(python3 -c "print('%.3f' % ($t1 - $t0))") prewarmed=$n"
}

# The oracle: read_plan, ready to read the planned blocks ($2 reads in
# flight, runs of up to 32 blocks) and waiting on a FIFO; GO_ORACLE is the psql
# meta-command that starts it, for the line between the client's T0 and the
# VACUUM statement.  finish_oracle waits for it and sets PRELOAD to its
# result line (its seconds: how long its reads took beside the VACUUM).
start_oracle()
{
	local dir=$1 depth=$2
	mkfifo "$dir/go"
	chown "$PGUSER": "$dir/go"		# psql's \! runs as the server user
	"$WORK/read_plan" "$RELPATH" "$dir/plan.txt" "$depth" 32 "$dir/go" >"$dir/oracle.txt" &
	ORACLE_PID=$!
	for _ in $(seq 600); do
		grep -q '^ready' "$dir/oracle.txt" && break
		kill -0 "$ORACLE_PID" 2>/dev/null || die "read_plan failed"
		sleep 0.05
	done
	grep -q '^ready' "$dir/oracle.txt" || die "read_plan not ready in 30 s"
	GO_ORACLE="\\! echo go > $dir/go"
}
finish_oracle()
{
	local dir=$1 pid=$ORACLE_PID
	for _ in $(seq 600); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		die "the oracle (read_plan, pid $pid) was still running 60 s after the VACUUM"
	fi
	wait "$pid" || die "the oracle (read_plan) failed"
	ORACLE_PID=""
	PRELOAD=$(grep seconds= "$dir/oracle.txt")
}

# Sample pg_stat_progress_vacuum and pg_stat_prefetch_activity for vb every
# 20 ms until a vacuum of vb has come and gone (or $2 seconds).
vb_sampler() { start_sampler "$1" vb_sampler "$2" pg_stat_progress_vacuum heap_blks_total heap_blks_scanned vb; }

# The autovacuum LOG entry of vb written after byte $1 of the server log.
avlog() { log_since "$1" | sed -n '/automatic vacuum of table "bench.public.vb"/,/elapsed:/p'; }

RUNCSV=$WORK/runs.csv
echo "workload,fraction,config,rep,seq,seconds,verbose_elapsed,scanned,planned,not_all_visible,read_ms,write_ms,cpu_user,cpu_sys,pf_planned,pf_prefetched,pf_late,pf_wasted,pf_read_ms,pf_scan_ms,pf_active_ms,cached_blocks_at_start,preload_seconds,t_start,load1,machine_cpu_busy_pct,device_read_mb,attempt,foreign_drops,valid,log_line,prev_config,pf_loaded,pf_loader_aborts" >"$RUNCSV"
PREV_CONFIG=""			# the configuration of the run before (runs.csv)

# Machine-wide CPU and disk counters around the timed part (cold_bench.sh).
find_disk
SEQ=0

# Other people on this machine drop the OS cache too (their benchmarks):
# one such drop between ours and the end of the timed part evicts what the
# bound pre-read or the prefetcher fetched.  /proc/vmstat counts every
# drop_caches; a run that saw a foreign one is recorded as invalid and
# repeated, up to MAX_ATTEMPTS times.
# The bound's blocks are pinned (mlock) and immune.  Autovacuum runs last
# too long (seconds to tens of seconds) to hope for a clean one on a busy
# machine: they are recorded once, with the count.
MAX_ATTEMPTS=3
AV_MAX_ATTEMPTS=1

run_one()
{
	local attempt max=$MAX_ATTEMPTS
	[ "$1" = autovacuum ] && max=$AV_MAX_ATTEMPTS
	for attempt in $(seq "$max"); do
		run_attempt "$@" "$attempt"
		[ "$FOREIGN" -eq 0 ] && return
		[ "$attempt" -lt "$max" ] && log "  foreign drop_caches ($FOREIGN) during that run: invalid, repeating"
	done
	log "  WARNING: another process dropped the OS cache during this run ($FOREIGN times); kept, marked invalid"
}

run_attempt()
{
	local wl=$1 f=$2 cfg=$3 rep=$4 attempt=$5 dir off secs velapsed scanned readms writems pf t0 t1 logtxt pfline avline loaded
	next_run_dir
	dir=$RUNDIR
	make_dirty "$f" "$dir"
	cold_start "$cfg" "$dir"
	off=$(stat -c %s "$SERVERLOG")
	q "SELECT pg_stat_prefetch_reset(); SELECT count(*) FROM pg_class; SELECT 'vb'::regclass" >/dev/null
	load1=$(cut -d' ' -f1 /proc/loadavg)

	if [ "$wl" = manual ]; then
		GO_ORACLE=""
		case "$cfg" in
			oracle) start_oracle "$dir" 32 ;;
			oracle*) start_oracle "$dir" "${cfg#oracle}" ;;
		esac
		vb_sampler "$dir" 600
		c0=$(cpu_ticks); d0=$(disk_sectors)
		psql_ -At >"$dir/vacuum.txt" 2>&1 <<EOF
SELECT 'T0=' || extract(epoch FROM clock_timestamp());
$GO_ORACLE
VACUUM (VERBOSE) vb;
SELECT 'T1=' || extract(epoch FROM clock_timestamp());
EOF
		c1=$(cpu_ticks); d1=$(disk_sectors)
		stop_sampler
		[[ "$cfg" != oracle* ]] || finish_oracle "$dir"
		t0=$(sed -n 's/^T0=//p' "$dir/vacuum.txt")
		t1=$(sed -n 's/^T1=//p' "$dir/vacuum.txt")
		secs=$(python3 -c "print('%.3f' % ($t1 - $t0))")
		logtxt=$(cat "$dir/vacuum.txt")
	else
		vb_sampler "$dir" 1200
		c0=$(cpu_ticks); d0=$(disk_sectors)
		t0=$(q "ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf(); SELECT extract(epoch FROM clock_timestamp())" | tail -1)
		for _ in $(seq 12000); do
			logtxt=$(avlog "$off")
			[[ "$logtxt" == *elapsed:* ]] && break
			sleep 0.1
		done
		c1=$(cpu_ticks); d1=$(disk_sectors)
		stop_sampler
		q "ALTER SYSTEM SET autovacuum = off; SELECT pg_reload_conf();" >/dev/null
		[ -n "$logtxt" ] || die "no autovacuum of vb within 20 minutes"
		secs=$(echo "$logtxt" | sed -n 's/.*elapsed: \([0-9.]*\) s.*/\1/p' | head -1)
		# the vacuum started "elapsed" before its log line
		t0=$(echo "$logtxt" | head -1 | awk -v e="$secs" '{printf "%.3f", $4 - e}')
	fi
	sleep 0.3
	velapsed=$(echo "$logtxt" | sed -n 's/.*elapsed: \([0-9.]*\) s.*/\1/p' | head -1)
	scanned=$(echo "$logtxt" | sed -n 's/.*remain, \([0-9]*\) scanned.*/\1/p' | head -1)
	readms=$(echo "$logtxt" | sed -n 's/.*I\/O timings: read: \([0-9.]*\) ms.*/\1/p' | head -1)
	writems=$(echo "$logtxt" | sed -n 's/.*I\/O timings: .*write: \([0-9.]*\) ms.*/\1/p' | head -1)
	cpuu=$(echo "$logtxt" | sed -n 's/.*system usage: CPU: user: \([0-9.]*\) s.*/\1/p' | head -1)
	cpus=$(echo "$logtxt" | sed -n 's/.*system usage: CPU: .*system: \([0-9.]*\) s.*/\1/p' | head -1)
	busy=$(cpu_busy_pct "$c0" "$c1")
	devmb=$(disk_read_mb "$d0" "$d1")
	FOREIGN=$(foreign_drops)
	if [ -n "$LOCKER_PID" ]; then
		kill "$LOCKER_PID"
		wait "$LOCKER_PID" || true
		LOCKER_PID=""
		FOREIGN=0	# the pinned blocks survive another drop_caches
	fi
	pf=$NO_PF_STATS
	loaded=""
	if extension_on "$cfg"; then
		pf=$(prefetch_stats 4 "relname = 'vb' AND command ILIKE '%vacuum%'")
		[[ $cfg != sbuf* ]] ||
			loaded=$(q "SELECT blocks_loaded, loader_aborts FROM pg_stat_prefetch WHERE relname = 'vb' AND command ILIKE '%vacuum%'" | tr '|' ',')
	fi
	pfline=$(log_since "$off" | grep -i -m1 'bgw_prefetch: .*vacuum of "[^"]*vb"' | sed 's/"/""/g' || true)
	log_since "$off" >"$dir/server.log"
	echo "$wl,$f,$cfg,$rep,$SEQ,$secs,$velapsed,$scanned,$PLANNED,$NOTVIS,$readms,$writems,$cpuu,$cpus,$pf,$CACHED,$(echo "$PRELOAD" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'),$t0,$load1,$busy,$devmb,$attempt,$FOREIGN,$([ "$FOREIGN" -eq 0 ] && echo 1 || echo 0),\"$pfline\",$PREV_CONFIG,${loaded:-,}" >>"$RUNCSV"
	PREV_CONFIG=$cfg
	keep_samples "$dir" "$SEQ|"
	log "$wl $f% $cfg #$rep.$attempt: ${secs} s, scanned ${scanned:-?} (planned $PLANNED), read I/O ${readms:-?} ms, CPU ${cpuu:-?}+${cpus:-?} s, load $load1, machine CPU ${busy:-?} %, disk read ${devmb:-?} MB, pf: $pf${loaded:+, loaded,aborts: $loaded}"
	[ "${scanned:-x}" = "$PLANNED" ] || log "WARNING: VACUUM scanned ${scanned:-?} pages, the plan says $PLANNED"
}

# ---------------------------------------------------------------- runs

T_START=$(date +%s)
for wl in $WORKLOADS; do
	if [ "$wl" = manual ]; then fr=$FRACTIONS; cf=$CONFIGS; else fr=$AV_FRACTIONS; cf=$AV_CONFIGS; fi
	for f in $fr; do
		for rep in $(seq "$REPS"); do
			# shellcheck disable=SC2086  # the configurations: a list of words
			for cfg in $(round_configs "$rep" $cf); do
				run_one "$wl" "$f" "$cfg" "$rep"
			done
		done
	done
done
T_END=$(date +%s)
log "runs took $(( (T_END - T_START) / 60 )) min"

# ---------------------------------------------------------------- report

# the raw samples stay in WORK: vacuum_report.py summarises them per run
# into ${NAME}_diag.csv
make_report vacuum_report.py "$WORK/samples.csv" \
	"seq,epoch,pid,phase,heap_blks_total,heap_blks_scanned,state,consumer_block,prefetch_block,distance,reads_in_flight,io_depth,planned_blocks,prefetched_blocks,wait_event" \
	"machine=$(machine_meta ""); $(page_reporting_meta)" \
	"conf=${EXTRA_CONF[*]:-}" \
	"table=$BLOCKS blocks ($((BLOCKS * 8192 / 1048576)) MiB), $ROWS_PER_PAGE rows/page, fillfactor 90, no index" \
	"extension=$EXT_META" \
	"reps=$REPS; total run time $(( (T_END - T_START) / 60 )) min" \
	${SERVER_META:+"$SERVER_META" "mic=$MIC"}
finish_report
