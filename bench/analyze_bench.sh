#!/bin/bash
#
# analyze_bench.sh
#	How bgw_prefetch changes a manual ANALYZE on a cold cache, by sample
#	density (sampled blocks / relation blocks).
#
# With default_statistics_target = 100 ANALYZE samples 30,000 blocks
# (300 x target), uniformly, in ascending order.  One table per density is
# loaded once into a throwaway cluster (COPY FREEZE into a table created in
# the same transaction with wal_level = minimal: no WAL, hint bits and
# visibility map already set, so ANALYZE never dirties a page):
#	100 %	  28,000 blocks (whole relation sampled, read in order)
#	 50 %	  60,000 blocks
#	 25 %	 120,000 blocks
#	 10 %	 300,000 blocks
#	  3 %	1,000,000 blocks (8 GB) -- or, with --small3 (the --quick
#		default), 100,000 blocks with the statistics target of its
#		columns lowered to 10: 3,000 sampled blocks
# Configurations, alternated inside every round:
#	off	bgw_prefetch.enabled = off, maintenance_io_concurrency = 10
#		(core defaults: ANALYZE's own posix_fadvise prefetch, depth 10)
#	on	bgw_prefetch.enabled = on, maintenance_io_concurrency = 10
#		(core's fadvise still runs as well)
#	off0	enabled = off, maintenance_io_concurrency = 0 (kernel readahead only)
#	on0	enabled = on, maintenance_io_concurrency = 0 (the extension then
#		uses depth 1)
#	bound	as off, and the whole table read into the OS cache with cat
#		after the drop, before the server starts (the cached bound)
# Every timed run: ALTER SYSTEM for the configuration, stop the server,
# sync, echo 3 > /proc/sys/vm/drop_caches, (bound: cat the table files),
# start the server, warm the catalogs (one query), start a sampler of
# pg_stat_progress_analyze + pg_stat_prefetch_activity (every 20 ms, in
# every configuration), then time ANALYZE VERBOSE t with clock_timestamp()
# before and after, in the same session.
#
# The machine is shared: before every timed run the script waits (sleep
# 30) while another benchmark runs (pgrep -f of vacuum_bench.sh,
# engine_rate, calibrate_vs_fio, fio, clog_writer.sh, soak.sh), 60 minutes
# in all at most, then runs anyway and records it.  A run during which
# another process dropped the OS cache (/proc/vmstat drop_pagecache) is
# repeated, up to 3 attempts.  Loading the tables does not wait.
#
# Cluster settings that matter: shared_buffers = 128MB, autovacuum = off,
# track_io_timing = on, shared_preload_libraries = 'bgw_prefetch',
# bgw_prefetch.log_min_duration = 0, bgw_prefetch.min_relation_size = 0,
# other bgw_prefetch settings at their defaults (io_uring, naptime 200ms:
# a manual ANALYZE wakes the monitor through the utility hook).
#
# Needs root (drop_caches; the server runs as the postgres user).
# Results (NAME = analyze, or analyze_quick with --quick) in bench/results:
# NAME.md (tables), NAME.csv (medians), NAME_runs.csv (every run),
# NAME_samples.csv (sampler rows), NAME.png (gnuplot).
#
# Usage: sudo bash bench/analyze_bench.sh [--quick] [--reps N]
#		[--densities "100 50 25 10 3"] [--configs "off on off0 on0 bound"]
#		[--small3 | --big3] [--name NAME] [--outdir DIR] [--so PATH]
#		[--no-wait] [--no-drop] [--keep]
#	--quick		3 reps instead of 5, and 3 % by --small3 (no 8 GB table)
#	--reps		repetitions of every configuration (default 5)
#	--small3	3 % = 3,000 of 100,000 blocks (statistics target 10)
#	--big3		3 % = 30,000 of 1,000,000 blocks (default without --quick)
#	--outdir	results directory (default bench/results)
#	--so		bgw_prefetch.so to test (default: the installed one)
#	--no-wait	do not wait for other benchmarks (still recorded)
#	--no-drop	plumbing test only: no drop_caches (warm, meaningless
#			times) and no waiting; use with --outdir elsewhere
#	--keep		keep the data directory (and print where it is)

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIB=$ROOT/bench/lib
RESDIR=$ROOT/bench/results
PGBIN=/usr/lib/postgresql/15/bin
PGUSER=postgres

QUICK=0
REPS=""
DENSITIES="100 50 25 10 3"
CONFIGS="off on off0 on0 bound"
SMALL3=""
NAME=""
KEEP=0
SO=""
NOWAIT=0
NODROP=0
ROWS_PER_PAGE=10		# see bench/lib/analyze_gen.py
WAIT_PATTERN='vacuum_bench.sh|engine_rate|calibrate_vs_fio|fio |clog_writer.sh|soak.sh'
WAIT_LIMIT=3600			# seconds of waiting in all, then run anyway

usage()
{
	sed -n '/^# Usage:/,/^[^#]/s/^#[[:space:]]\{0,1\}//p' "$0" >&2
	exit 2
}

ARGS=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
		--quick) QUICK=1; shift ;;
		--reps) REPS=$2; shift 2 ;;
		--densities) DENSITIES=$2; shift 2 ;;
		--configs) CONFIGS=$2; shift 2 ;;
		--small3) SMALL3=1; shift ;;
		--big3) SMALL3=0; shift ;;
		--name) NAME=$2; shift 2 ;;
		--outdir) RESDIR=$2; shift 2 ;;
		--so) SO=$2; shift 2 ;;
		--no-wait) NOWAIT=1; shift ;;
		--no-drop) NODROP=1; NOWAIT=1; shift ;;
		--keep) KEEP=1; shift ;;
		-h|--help) usage ;;
		*) echo "analyze_bench.sh: unknown option $1" >&2; usage ;;
	esac
done
for c in $CONFIGS; do
	case "$c" in off|on|off0|on0|bound) ;; *) echo "analyze_bench.sh: unknown configuration $c" >&2; exit 2 ;; esac
done
for d in $DENSITIES; do
	case "$d" in 100|50|25|10|3) ;; *) echo "analyze_bench.sh: unknown density $d" >&2; exit 2 ;; esac
done
[ -n "$SMALL3" ] || SMALL3=$QUICK
[ -n "$REPS" ] || { [ "$QUICK" -eq 1 ] && REPS=3 || REPS=5; }
[ -n "$NAME" ] || { [ "$QUICK" -eq 1 ] && NAME=analyze_quick || NAME=analyze; }

log() { printf '%s ==> %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'analyze_bench.sh: %s\n' "$*" >&2; exit 1; }

# density -> "blocks statistics_target"
table_of()
{
	case "$1" in
		100) echo "28000 100" ;;
		50) echo "60000 100" ;;
		25) echo "120000 100" ;;
		10) echo "300000 100" ;;
		3) if [ "$SMALL3" -eq 1 ]; then echo "100000 10"; else echo "1000000 100"; fi ;;
	esac
}

[ "$(id -u)" -eq 0 ] && [ -w /proc/sys/vm/drop_caches ] ||
	die "must run as root: every run starts from a cold OS cache (echo 3 > /proc/sys/vm/drop_caches)"
id "$PGUSER" >/dev/null 2>&1 || die "no user $PGUSER (postgresql-15 package)"
[ -x "$PGBIN/postgres" ] || die "PostgreSQL 15 not found in $PGBIN"
LIBDIR=$("$PGBIN/pg_config" --pkglibdir)
SHAREDIR=$("$PGBIN/pg_config" --sharedir)
SO_SOURCE=${SO:-$LIBDIR/bgw_prefetch.so}
[ -f "$SO_SOURCE" ] || die "$SO_SOURCE not found (make -C $ROOT && make -C $ROOT install)"
EXTVER=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$SHAREDIR/extension/bgw_prefetch.control")
EXTSQL=$SHAREDIR/extension/bgw_prefetch--$EXTVER.sql
[ -f "$EXTSQL" ] || die "$EXTSQL not found"
command -v python3 >/dev/null || die "python3 is needed"
command -v fincore >/dev/null || die "fincore (util-linux) is needed"
command -v gnuplot >/dev/null || log "gnuplot not found (apt-get install -y gnuplot-nox): no plot"

# disk space: the tables plus 25 %
NEED_BLOCKS=0
for d in $DENSITIES; do
	set -- $(table_of "$d")
	NEED_BLOCKS=$((NEED_BLOCKS + $1))
done
NEED_MB=$((NEED_BLOCKS * 8 * 5 / 4 / 1024 + 1024))
FREE_MB=$(df -Pm /var/tmp | awk 'NR == 2 {print $4}')
[ "$FREE_MB" -gt "$NEED_MB" ] ||
	die "need about $NEED_MB MB in /var/tmp, $FREE_MB MB free (try --small3)"

# ---------------------------------------------------------------- cluster

WORK=$(mktemp -d /var/tmp/analyze_bench.XXXXXX)
chown "$PGUSER": "$WORK"
chmod 755 "$WORK"
PGDATA=$WORK/data
SERVERLOG=$WORK/server.log
RUNS=$WORK/runs
mkdir -p "$RUNS"
chown "$PGUSER": "$RUNS"
SAMPLER_PID=""

PORT=55800
while ss -ltnH "( sport = :$PORT )" | grep -q . || [ -e "/tmp/.s.PGSQL.$PORT" ] ||
	[ -e "/var/run/postgresql/.s.PGSQL.$PORT" ]; do
	PORT=$((PORT + 1))
done

as_pg() { (cd "$WORK" && runuser -u "$PGUSER" -- env HOME="$WORK" PGAPPNAME="${PGAPPNAME:-analyze_bench}" "$@"); }
psql_() { as_pg "$PGBIN/psql" -X -h "$WORK" -p "$PORT" -d bench -v ON_ERROR_STOP=1 "$@"; }
q() { psql_ -qAt -f - <<<"$1"; }

pg_start() { as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$SERVERLOG" -w -t 600 start >/dev/null; }
pg_stop() { as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -w -t 600 -m fast stop >/dev/null; }

cleanup()
{
	local rc=$?
	set +e
	if [ -n "$SAMPLER_PID" ]; then
		kill "$SAMPLER_PID" 2>/dev/null
		wait "$SAMPLER_PID" 2>/dev/null
	fi
	if [ -f "$PGDATA/postmaster.pid" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -w -t 120 -m fast stop >/dev/null 2>&1 ||
			as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate stop >/dev/null 2>&1
	fi
	if [ "$KEEP" -eq 1 ]; then
		log "kept $WORK"
	else
		rm -rf "$WORK"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "work directory $WORK, port $PORT"
T_BEGIN=$(date +%s)

# Pin the extension (others reinstall it while this runs, and every run
# restarts the server): the cluster loads a private copy, found first on
# dynamic_library_path, and the SQL objects are created from the extension
# script with MODULE_PATHNAME = 'bgw_prefetch' (as bench/vacuum_bench.sh).
mkdir -p "$WORK/lib"
for _ in $(seq 30); do
	cp "$SO_SOURCE" "$WORK/lib/bgw_prefetch.so"
	[ "$(md5sum <"$SO_SOURCE")" = "$(md5sum <"$WORK/lib/bgw_prefetch.so")" ] && break
	sleep 1
done
cp "$EXTSQL" "$WORK/bgw_prefetch.sql"
cp "$LIB/analyze_gen.py" "$WORK/gen.py"
chmod 755 "$WORK/lib" "$WORK/lib/bgw_prefetch.so" "$WORK/gen.py"
chmod 644 "$WORK/bgw_prefetch.sql"
SOMD5=$(md5sum "$WORK/lib/bgw_prefetch.so" | cut -c1-12)
SO_TIME=$(date -u '+%H:%M UTC')
GITREV=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
GITDIRTY=$(git -C "$ROOT" status --porcelain -- src 2>/dev/null | wc -l)
log "testing bgw_prefetch.so md5 $SOMD5 (copy of $SO_SOURCE)"
as_pg "$PGBIN/initdb" -D "$PGDATA" -U "$PGUSER" --auth=trust -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1 ||
	{ cat "$WORK/initdb.log" >&2; die "initdb failed"; }
cat >>"$PGDATA/postgresql.conf" <<EOF

# ---- analyze_bench.sh ----
listen_addresses = ''
port = $PORT
unix_socket_directories = '$WORK'
dynamic_library_path = '$WORK/lib:\$libdir'
shared_preload_libraries = 'bgw_prefetch'
shared_buffers = 128MB
maintenance_io_concurrency = 10		# per run, by ALTER SYSTEM
default_statistics_target = 100
wal_level = minimal			# COPY FREEZE into a new table writes no WAL
max_wal_senders = 0
max_wal_size = 16GB
checkpoint_timeout = 1h
track_io_timing = on
autovacuum = off
log_line_prefix = '%m [%p] '
log_checkpoints = off
bgw_prefetch.log_min_duration = 0	# one LOG line per watched scan
bgw_prefetch.min_relation_size = 0
bgw_prefetch.enabled = off		# per run, by ALTER SYSTEM
EOF
chown "$PGUSER": "$PGDATA/postgresql.conf"
pg_start
as_pg "$PGBIN/createdb" -h "$WORK" -p "$PORT" bench
sed -e "s/MODULE_PATHNAME/bgw_prefetch/g" -e '/^\\echo/d' "$WORK/bgw_prefetch.sql" | psql_ -qAt -f - >/dev/null
[ "$(q "SELECT count(*) FROM pg_proc WHERE probin = 'bgw_prefetch'")" -gt 0 ] || die "bgw_prefetch SQL objects not created"

# ---------------------------------------------------------------- tables

tname() { echo "a_d$1"; }
declare -A RELPATHS NBLK TARGET
for d in $DENSITIES; do
	set -- $(table_of "$d")
	blocks=$1 target=$2 t=$(tname "$d")
	rows=$((blocks * ROWS_PER_PAGE))
	log "loading $t: $rows rows ($blocks blocks), statistics target $target"
	t0=$(date +%s)
	q "BEGIN;
	   CREATE TABLE $t (id int, pad text) WITH (fillfactor = 100, autovacuum_enabled = false);
	   COPY $t FROM PROGRAM 'python3 $WORK/gen.py $rows' WITH (FREEZE);
	   COMMIT;"
	if [ "$target" -ne 100 ]; then
		q "ALTER TABLE $t ALTER COLUMN id SET STATISTICS $target;
		   ALTER TABLE $t ALTER COLUMN pad SET STATISTICS $target;"
	fi
	n=$(q "SELECT pg_relation_size('$t') / 8192")
	[ "$n" -eq "$blocks" ] || die "$t has $n blocks, expected $blocks"
	NBLK[$d]=$n
	TARGET[$d]=$target
	RELPATHS[$d]=$PGDATA/$(q "SELECT pg_relation_filepath('$t')")
	log "  $t loaded in $(( $(date +%s) - t0 )) s: $(q "SELECT pg_size_pretty(pg_relation_size('$t'))")"
done
q "CHECKPOINT"
LOAD_S=$(( $(date +%s) - T_BEGIN ))

# ---------------------------------------------------------------- one run

config_sql()
{
	case "$1" in
		off|bound) echo "ALTER SYSTEM SET bgw_prefetch.enabled = off; ALTER SYSTEM SET maintenance_io_concurrency = 10;" ;;
		on) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET maintenance_io_concurrency = 10;" ;;
		off0) echo "ALTER SYSTEM SET bgw_prefetch.enabled = off; ALTER SYSTEM SET maintenance_io_concurrency = 0;" ;;
		on0) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET maintenance_io_concurrency = 0;" ;;
	esac
}

drops() { awk '$1 == "drop_pagecache" {print $2}' /proc/vmstat; }
DISK=$(lsblk -ndo PKNAME "$(df --output=source "$WORK" | tail -1)" 2>/dev/null || true)
[ -n "$DISK" ] || DISK=$(basename "$(df --output=source "$WORK" | tail -1)")
cpu_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }
disk_sectors() { awk -v d="$DISK" '$3 == d {print $6}' /proc/diskstats; }
cached_blocks() { (fincore -b -n -r -o RES "$@" 2>/dev/null || true) | awk '{s += $1} END {printf "%d", s / 8192}'; }
relfiles() { ls "$1" $(ls "$1".[0-9]* 2>/dev/null) 2>/dev/null; }
# (pgrep alone first: a grep in the same pipeline would carry the pattern in
# its own command line and match itself)
others()
{
	local p
	p=$(pgrep -af "$WAIT_PATTERN" 2>/dev/null || true)
	printf '%s\n' "$p" | grep -v analyze_bench | grep -oE "$WAIT_PATTERN" | sed 's/ $//' | sort -u | tr '\n' ' ' | sed 's/ $//' || true
}

WAITED=0
GAVE_UP=0
wait_idle()
{
	local o last=-1
	[ "$NOWAIT" -eq 1 ] && return
	[ "$GAVE_UP" -eq 1 ] && return
	while o=$(others) && [ -n "$o" ]; do
		if [ "$WAITED" -ge "$WAIT_LIMIT" ]; then
			GAVE_UP=1
			log "WARNING: waited $((WAITED / 60)) min for other benchmarks ($o); running anyway"
			return
		fi
		if [ $((WAITED / 300)) -ne "$last" ]; then
			last=$((WAITED / 300))
			log "waiting for other benchmarks to finish: $o (waited $((WAITED / 60)) min so far)"
		fi
		sleep 30
		WAITED=$((WAITED + 30))
	done
}

# stop, drop the OS cache, (bound: read the table), start
cold_start()
{
	local cfg=$1 d=$2 t0 i
	q "$(config_sql "$cfg")" >/dev/null
	pg_stop
	sync
	[ "$NODROP" -eq 1 ] || echo 3 >/proc/sys/vm/drop_caches
	DROPS0=$(drops)
	CAT_S=""
	if [ "$cfg" = bound ]; then
		t0=$(date +%s.%N)
		cat $(relfiles "${RELPATHS[$d]}") >/dev/null
		CAT_S=$(echo "$t0 $(date +%s.%N)" | awk '{printf "%.3f", $2 - $1}')
	fi
	CACHED=$(cached_blocks $(relfiles "${RELPATHS[$d]}"))
	pg_start
	# catalogs warm, monitor up when enabled
	q "SELECT count(*) FROM pg_class; SELECT '$(tname "$d")'::regclass" >/dev/null
	if [ "$cfg" = on ] || [ "$cfg" = on0 ]; then
		for i in $(seq 200); do
			[ -n "$(q "SELECT monitor_pid FROM bgw_prefetch_status()")" ] && break
			sleep 0.05
		done
		IOMETHOD=$(q "SELECT io_method || coalesce(' (' || nullif(io_fallback_reason, '') || ')', '') FROM bgw_prefetch_status()")
	fi
}

# Sample progress + prefetch activity of the table every 20 ms until an
# ANALYZE of it has come and gone.  Lines: S|epoch|pid|phase|total|scanned|
# state|consumer|prefetch|distance|in_flight|depth|planned|prefetched|wait
start_sampler()
{
	local dir=$1 t=$2
	PGAPPNAME=ab_sampler psql_ -qAt >"$dir/samples.txt" 2>&1 <<EOF &
DO \$\$
DECLARE
	t0 timestamptz := clock_timestamp();
	seen boolean := false;
	present boolean;
	r record;
BEGIN
	LOOP
		PERFORM pg_stat_clear_snapshot();
		present := false;
		FOR r IN
			SELECT p.pid, p.phase, p.sample_blks_total, p.sample_blks_scanned,
				   a.state, a.consumer_block, a.prefetch_block, a.distance,
				   a.reads_in_flight, a.io_depth, a.planned_blocks, a.prefetched_blocks,
				   coalesce(w.wait_event_type || ':' || w.wait_event, 'CPU') AS wait
			  FROM pg_stat_progress_analyze p
			  LEFT JOIN pg_stat_prefetch_activity a ON a.pid = p.pid
			  LEFT JOIN pg_stat_activity w ON w.pid = p.pid
			 WHERE p.relid = '$t'::regclass
		LOOP
			present := true;
			RAISE NOTICE 'S|%|%|%|%|%|%|%|%|%|%|%|%|%|%', extract(epoch FROM clock_timestamp()),
				r.pid, r.phase, r.sample_blks_total, r.sample_blks_scanned, r.state,
				r.consumer_block, r.prefetch_block, r.distance, r.reads_in_flight,
				r.io_depth, r.planned_blocks, r.prefetched_blocks, r.wait;
		END LOOP;
		EXIT WHEN seen AND NOT present;
		seen := seen OR present;
		EXIT WHEN clock_timestamp() - t0 > interval '600 seconds';
		PERFORM pg_sleep(0.02);
	END LOOP;
END
\$\$;
EOF
	SAMPLER_PID=$!
	for _ in $(seq 200); do
		[ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ab_sampler' AND state = 'active'")" = 1 ] && return
		sleep 0.05
	done
	die "the sampler did not start"
}

stop_sampler()
{
	wait "$SAMPLER_PID" || true
	SAMPLER_PID=""
}

# pg_stat_prefetch of the table, once the monitor has ended the target
prefetch_stats()
{
	local cfg=$1 t=$2 row=""
	if [ "$cfg" = on ] || [ "$cfg" = on0 ]; then
		for _ in $(seq 100); do
			row=$(q "SELECT planned_blocks, prefetched_blocks, late_blocks, wasted_blocks,
				round(prefetch_read_time::numeric, 2), round(scan_time::numeric, 2),
				round(coalesce(prefetch_active_time, 0)::numeric, 2)
				FROM pg_stat_prefetch WHERE relname = '$t' AND command = 'analyze' AND scans > 0" | tr '|' ',')
			[ -n "$row" ] && break
			sleep 0.1
		done
	fi
	[ -n "$row" ] || row=",,,,,,"
	echo "$row"
}

RUNCSV=$WORK/runs.csv
echo "density,blocks,stat_target,config,rep,seq,seconds,scanned,cpu_s,pf_planned,pf_prefetched,pf_late,pf_wasted,pf_read_ms,pf_scan_ms,pf_active_ms,log_state,log_joined,cached_blocks_at_start,cat_seconds,t_start,load1,machine_cpu_busy_pct,device_read_mb,attempt,foreign_drops,valid,others_running,log_line" >"$RUNCSV"
SEQ=0
IOMETHOD=""

run_attempt()
{
	local d=$1 cfg=$2 rep=$3 attempt=$4 t dir off secs scanned pf t0 t1 c0 c1 d0 d1 busy devmb cpu0 cpu1 cpus pfline state joined o1 o2 load1
	t=$(tname "$d")
	SEQ=$((SEQ + 1))
	dir=$RUNS/$SEQ
	mkdir -p "$dir"
	chown "$PGUSER": "$dir"
	wait_idle
	o1=$(others)
	cold_start "$cfg" "$d"
	off=$(stat -c %s "$SERVERLOG")
	q "SELECT pg_stat_prefetch_reset()" >/dev/null
	load1=$(cut -d' ' -f1 /proc/loadavg)
	start_sampler "$dir" "$t"
	c0=$(cpu_ticks); d0=$(disk_sectors)
	psql_ -At >"$dir/analyze.txt" 2>&1 <<EOF
SELECT pg_backend_pid() AS bpid \gset
\setenv BPID :bpid
\! awk '{print "CPU0=" \$14 + \$15}' /proc/\$BPID/stat
SELECT 'T0=' || extract(epoch FROM clock_timestamp());
ANALYZE VERBOSE $t;
SELECT 'T1=' || extract(epoch FROM clock_timestamp());
\! awk '{print "CPU1=" \$14 + \$15}' /proc/\$BPID/stat
EOF
	c1=$(cpu_ticks); d1=$(disk_sectors)
	stop_sampler
	o2=$(others)
	t0=$(sed -n 's/^T0=//p' "$dir/analyze.txt")
	t1=$(sed -n 's/^T1=//p' "$dir/analyze.txt")
	secs=$(echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}')
	cpu0=$(sed -n 's/^CPU0=//p' "$dir/analyze.txt")
	cpu1=$(sed -n 's/^CPU1=//p' "$dir/analyze.txt")
	cpus=$(echo "$cpu0 $cpu1" | awk -v hz="$(getconf CLK_TCK)" '{ if (NF == 2) printf "%.2f", ($2 - $1) / hz }')
	scanned=$(sed -n 's/.*scanned \([0-9]*\) of \([0-9]*\) pages.*/\1/p' "$dir/analyze.txt" | head -1)
	busy=$(echo "$c0 $c1" | awk '{ if ($4 > $2) printf "%.0f", 100 * ($3 - $1) / ($4 - $2) }')
	devmb=$(echo "$d0 $d1" | awk '{ if (NF == 2) printf "%.0f", ($2 - $1) * 512 / 1048576 }')
	FOREIGN=$(( $(drops) - DROPS0 ))
	pf=$(prefetch_stats "$cfg" "$t")
	sleep 0.2
	pfline=$(tail -c +"$((off + 1))" "$SERVERLOG" | grep -m1 "bgw_prefetch: analyze of \"[^\"]*$t\"" || true)
	state=$(echo "$pfline" | sed -n 's/.*pid [0-9]*) \(.*\): scan advanced.*/\1/p')
	joined=$(echo "$pfline" | sed -n 's/.*joined at block \([0-9]*\).*/\1/p')
	tail -c +"$((off + 1))" "$SERVERLOG" >"$dir/server.log"
	local oth
	oth=$(printf '%s %s' "$o1" "$o2" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//')
	echo "$d,${NBLK[$d]},${TARGET[$d]},$cfg,$rep,$SEQ,$secs,$scanned,$cpus,$pf,\"$state\",$joined,$CACHED,$CAT_S,$t0,$load1,$busy,$devmb,$attempt,$FOREIGN,$([ "$FOREIGN" -eq 0 ] && echo 1 || echo 0),\"$oth\",\"$(echo "$pfline" | sed 's/"/""/g')\"" >>"$RUNCSV"
	sed -E 's/^.*NOTICE:  //' "$dir/samples.txt" | grep '^S|' | sed "s/^S|/$SEQ|$t0|/" >>"$WORK/samples.txt" || true
	log "$d% $cfg #$rep.$attempt: ${secs} s, scanned ${scanned:-?}/${NBLK[$d]}, CPU ${cpus:-?} s, disk read ${devmb:-?} MB, cached at start $CACHED${CAT_S:+ (cat ${CAT_S} s)}, pf: $pf ${state:+[$state, joined $joined]}${oth:+ OTHERS: $oth}"
}

run_one()
{
	local attempt
	for attempt in 1 2 3; do
		run_attempt "$@" "$attempt"
		[ "$FOREIGN" -eq 0 ] && return
		log "  another process dropped the OS cache during that run ($FOREIGN): invalid"
	done
}

# ---------------------------------------------------------------- runs

T_START=$(date +%s)
for rep in $(seq "$REPS"); do
	for d in $DENSITIES; do
		for cfg in $CONFIGS; do
			run_one "$d" "$cfg" "$rep"
		done
	done
done
T_END=$(date +%s)
log "runs took $(( (T_END - T_START) / 60 )) min (of which $((WAITED / 60)) min waiting for other benchmarks)"

# ---------------------------------------------------------------- report

mkdir -p "$RESDIR"
cp "$RUNCSV" "$RESDIR/${NAME}_runs.csv"
{
	echo "seq,t0,epoch,pid,phase,sample_blks_total,sample_blks_scanned,state,consumer_block,prefetch_block,distance,reads_in_flight,io_depth,planned_blocks,prefetched_blocks,wait_event"
	tr '|' ',' <"$WORK/samples.txt" 2>/dev/null || true
} >"$RESDIR/${NAME}_samples.csv"
SMALL3_TXT="30,000 of 1,000,000 blocks (8 GB), statistics target 100"
[ "$SMALL3" -eq 1 ] && SMALL3_TXT="3,000 of 100,000 blocks: statistics target lowered to 10 on both columns (instead of an 8 GB table)"
python3 "$LIB/analyze_report.py" --runs "$RESDIR/${NAME}_runs.csv" --samples "$RESDIR/${NAME}_samples.csv" \
	--outdir "$RESDIR" --name "$NAME" \
	--meta "date=$(date -u '+%Y-%m-%d %H:%M UTC')" \
	--meta "command=sudo bash bench/analyze_bench.sh ${ARGS[*]:-}" \
	--meta "machine=$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $(uname -r), disk $DISK, PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}')" \
	--meta "tables=int + 760-byte text, 10 rows per 8 kB page, COPY FREEZE (no hint-bit writes), no index; 3 % density: $SMALL3_TXT" \
	--meta "extension=bgw_prefetch.so md5 $SOMD5, copied from $SO_SOURCE at $SO_TIME and used for every run (git $GITREV, $GITDIRTY uncommitted files under src/ then); io_method in force: ${IOMETHOD:-?}" \
	--meta "reps=$REPS; load $((LOAD_S / 60)) min, timed runs $(( (T_END - T_START) / 60 )) min, of which $((WAITED / 60)) min waiting for other benchmarks$([ "$GAVE_UP" -eq 1 ] && echo ' (gave up waiting after 60 min: later runs overlapped other benchmarks)')"
if command -v gnuplot >/dev/null && [ -f "$RESDIR/${NAME}.gp" ]; then
	(cd "$RESDIR" && gnuplot "${NAME}.gp") && rm -f "$RESDIR/${NAME}.gp" "$RESDIR/${NAME}.dat"
fi
log "results: $RESDIR/${NAME}.md"
cat "$RESDIR/${NAME}.md"
