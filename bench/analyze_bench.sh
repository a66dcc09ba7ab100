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
# Configurations, alternated inside every round, in the given order in the
# first round and shuffled in every later one (what a run leaves behind
# affects the next one, see "Free page reporting"; runs.csv records the
# configuration run before each run):
#	off	bgw_prefetch.enabled = off, maintenance_io_concurrency = 10
#		(core defaults: ANALYZE's own posix_fadvise prefetch, depth 10)
#	on	bgw_prefetch.enabled = on, maintenance_io_concurrency = 10
#		(core's fadvise still runs as well)
#	off0	enabled = off, maintenance_io_concurrency = 0 (kernel readahead only)
#	on0	enabled = on, maintenance_io_concurrency = 0 (the stream gets
#		its minimum depth, 32)
#	ondN	as on, with bgw_prefetch.tablespace_io_depth = 'pg_default=N'
#		(e.g. ond1, ond4): the stream at depth N instead of 32
#	onfa	as on, with bgw_prefetch.io_method = fadvise (the stream's
#		reads ahead are posix_fadvise(WILLNEED) instead of io_uring reads)
#	offmN	as off, with maintenance_io_concurrency = N (e.g. offm64):
#		core alone, its prefetch of the sampled blocks N deep
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
# Free page reporting.  A virtual machine with virtio-balloon free page
# reporting gives the memory the drop frees back to its host, and every
# page the next run puts in the page cache then costs a fault in the host
# (bench/lib/common.sh).  Measured 2026-12-04 (doc/benchmarks.md, "Run
# order"): with it on, 4 of 8 and then 4 of 5 cold 50 % ANALYZEs with the
# stream took 0.49-0.93 s, the copies out of the page cache running at
# ~0.5 GB/s; with it off (--no-page-reporting), 1 of 8 (the first of the
# bench) and 0 of 5, 0.31-0.39 s.  With it on, what a run leaves behind
# also changes the next one: whichever configuration ran right after "off"
# took 0.74-1.20 s where the same configuration one slot later took
# 0.30-0.49 s -- hence the shuffled order.
#
# Other server versions (--pg 16, 17 or 18: the build of
# scripts/build-pg.sh in /var/cache/bgw_prefetch/pg-N, with bgw_prefetch and
# its extension script installed there by make install PG_CONFIG=...; pass
# the build to test with --so).  maintenance_io_concurrency, 10 above, is
# then the version's default instead (its boot value: 10 up to 17, 16 on
# 18), in off, on, ondN and bound alike: what users get.  From 17 ANALYZE
# reads its sample through read_stream (posix_fadvise of non-sequential
# blocks and combined reads of consecutive ones); on 18 through
# asynchronous I/O, io_method and io_workers at 18's defaults (worker, 3).
# The report's "server" line gives the version and those settings.
#
# Needs root (drop_caches; the server runs as the postgres user).
# Results (NAME = analyze, or analyze_quick with --quick) in bench/results:
# NAME.md (tables), NAME.csv (medians), NAME_runs.csv (every run),
# NAME_samples.csv (sampler rows), NAME.png (gnuplot).
#
# Usage: sudo bash bench/analyze_bench.sh [--quick] [--reps N]
#		[--densities "100 50 25 10 3"] [--configs "off on off0 on0 bound"]
#		[--small3 | --big3] [--name NAME] [--outdir DIR] [--so PATH]
#		[--no-wait] [--no-drop] [--no-page-reporting] [--read-ahead KB] [--keep]
#		[--pg 15|16|17|18]
#	--quick		3 reps instead of 5, and 3 % by --small3 (no 8 GB table)
#	--reps		repetitions of every configuration (default 5)
#	--small3	3 % = 3,000 of 100,000 blocks (statistics target 10)
#	--big3		3 % = 30,000 of 1,000,000 blocks (default without --quick)
#	--outdir	results directory (default bench/results)
#	--so		bgw_prefetch.so to test (default: the installed one)
#	--no-wait	do not wait for other benchmarks (still recorded)
#	--no-drop	plumbing test only: no drop_caches (warm, meaningless
#			times) and no waiting; use with --outdir elsewhere
#	--no-page-reporting  turn the guest's free page reporting off for the
#			run, and back on at exit (see "Free page reporting" below)
#	--read-ahead KB	the data disk's read_ahead_kb for the run, put back at
#			exit (the result header records it either way)
#	--keep		keep the data directory (and print where it is)
#	--pg		server major version (default 15, Debian's package; 16-18
#			from /var/cache/bgw_prefetch/pg-N): see above

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIB=$ROOT/bench/lib
RESDIR=$ROOT/bench/results
BENCH_NAME=analyze_bench.sh
# usage, die, log, need_root, drop_os_cache, PGBIN
# shellcheck source=lib/common.sh
. "$LIB/common.sh"
# the cluster, the cold start, the sampler (PGUSER, WORK, PORT, q, ...)
# shellcheck source=lib/cold_bench.sh
. "$LIB/cold_bench.sh"

QUICK=0
REPS=""
DENSITIES="100 50 25 10 3"
CONFIGS="off on off0 on0 bound"
SMALL3=""
NAME=""
KEEP=0
NO_PAGE_REPORTING=0
READ_AHEAD=""
SO=""
NOWAIT=0
NODROP=0
ROWS_PER_PAGE=10		# see bench/lib/analyze_gen.py
WAIT_PATTERN='vacuum_bench.sh|engine_rate|calibrate_vs_fio|fio |clog_writer.sh|soak.sh'
WAIT_LIMIT=3600			# seconds of waiting in all, then run anyway

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
		--no-page-reporting) NO_PAGE_REPORTING=1; shift ;;
		--read-ahead) READ_AHEAD=$2; shift 2 ;;
		--pg) select_pg "$2"; shift 2 ;;
		*) other_option "$1" ;;
	esac
done
for c in $CONFIGS; do
	case "$c" in
		off|on|off0|on0|onfa|bound) ;;
		ond[1-9]*) [[ "$c" =~ ^ond[1-9][0-9]*$ ]] || bad_usage "unknown configuration $c" ;;
		offm[1-9]*) [[ "$c" =~ ^offm[1-9][0-9]*$ ]] || bad_usage "unknown configuration $c" ;;
		*) bad_usage "unknown configuration $c" ;;
	esac
done
for d in $DENSITIES; do
	case "$d" in 100|50|25|10|3) ;; *) bad_usage "unknown density $d" ;; esac
done
[ -n "$SMALL3" ] || SMALL3=$QUICK
[ -n "$REPS" ] || { [ "$QUICK" -eq 1 ] && REPS=3 || REPS=5; }
[ -n "$NAME" ] || { [ "$QUICK" -eq 1 ] && NAME=analyze_quick || NAME=analyze; }

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

need_root "every run starts from a cold OS cache"
check_pg_extension "$SO"
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

cold_setup 55800
[ "$NO_PAGE_REPORTING" -eq 0 ] || disable_page_reporting
[ -z "$READ_AHEAD" ] || set_read_ahead "$READ_AHEAD" "$WORK"
T_BEGIN=$(date +%s)

# Pin the extension (cold_bench.sh), and the table generator for COPY
# FROM PROGRAM (run by the server user).
pin_extension
cp "$LIB/analyze_gen.py" "$WORK/gen.py"
chmod 755 "$WORK/gen.py"
init_cluster
if [ "$PG_MAJOR" = 15 ]; then
	printf '%s\n' "shared_buffers = 128MB" "maintenance_io_concurrency = 10		# per run, by ALTER SYSTEM" >>"$PGDATA/postgresql.conf"
else
	printf '%s\n' "shared_buffers = 128MB" "# maintenance_io_concurrency: PostgreSQL $PG_MAJOR's default, per run by ALTER SYSTEM" >>"$PGDATA/postgresql.conf"
fi
cat >>"$PGDATA/postgresql.conf" <<EOF
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
start_cluster
# the maintenance_io_concurrency of off, on, ondN and bound: 10 on 15, else
# the version's default
MIC=10
[ "$PG_MAJOR" = 15 ] || MIC=$(q "SELECT boot_val FROM pg_settings WHERE name = 'maintenance_io_concurrency'")
SERVER_META=$(server_meta)

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
	if [ "$n" -ne "$blocks" ]; then
		# From 16 COPY extends the relation many blocks at a time and
		# leaves the last ones empty: accept that tail if the rows fill
		# exactly the blocks wanted (the last one full, none after it).
		[ "$PG_MAJOR" != 15 ] && [ "$n" -gt "$blocks" ] &&
			[ "$(q "SELECT count(*) FROM $t WHERE ctid >= '($((blocks - 1)),1)'::tid")" -eq "$ROWS_PER_PAGE" ] ||
			die "$t has $n blocks, expected $blocks"
		log "  $t: $n blocks, the last $((n - blocks)) empty (COPY's bulk extension)"
	fi
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
		off|bound) echo "ALTER SYSTEM SET bgw_prefetch.enabled = off; ALTER SYSTEM SET maintenance_io_concurrency = $MIC;" ;;
		on) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET maintenance_io_concurrency = $MIC;" ;;
		off0) echo "ALTER SYSTEM SET bgw_prefetch.enabled = off; ALTER SYSTEM SET maintenance_io_concurrency = 0;" ;;
		on0) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET maintenance_io_concurrency = 0;" ;;
		ond*|onfa) echo "ALTER SYSTEM SET bgw_prefetch.enabled = on; ALTER SYSTEM SET maintenance_io_concurrency = $MIC;" ;;
		offm*) echo "ALTER SYSTEM SET bgw_prefetch.enabled = off; ALTER SYSTEM SET maintenance_io_concurrency = ${1#offm};" ;;
	esac
	case "$1" in
		ond*) echo "ALTER SYSTEM SET bgw_prefetch.tablespace_io_depth = 'pg_default=${1#ond}';" ;;
		*) echo "ALTER SYSTEM RESET bgw_prefetch.tablespace_io_depth;" ;;
	esac
	case "$1" in
		onfa) echo "ALTER SYSTEM SET bgw_prefetch.io_method = fadvise;" ;;
		*) echo "ALTER SYSTEM RESET bgw_prefetch.io_method;" ;;
	esac
}

find_disk

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
	cold_stop
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
	if extension_on "$cfg"; then
		for i in $(seq 200); do
			[ -n "$(q "SELECT monitor_pid FROM bgw_prefetch_status()")" ] && break
			sleep 0.05
		done
	fi
	# the method of the default configuration (onfa sets its own)
	if [ "$cfg" = on ]; then
		IOMETHOD=$(q "SELECT io_method || coalesce(' (' || nullif(io_fallback_reason, '') || ')', '') FROM bgw_prefetch_status()")
	fi
}

# Sample progress + prefetch activity of table $2 every 20 ms until an
# ANALYZE of it has come and gone.
ab_sampler() { start_sampler "$1" ab_sampler 600 pg_stat_progress_analyze sample_blks_total sample_blks_scanned "$2"; }

RUNCSV=$WORK/runs.csv
echo "density,blocks,stat_target,config,rep,seq,seconds,scanned,cpu_s,pf_planned,pf_prefetched,pf_late,pf_wasted,pf_read_ms,pf_scan_ms,pf_active_ms,log_state,log_joined,cached_blocks_at_start,cat_seconds,t_start,load1,machine_cpu_busy_pct,device_read_mb,attempt,foreign_drops,valid,others_running,log_line,prev_config" >"$RUNCSV"
SEQ=0
IOMETHOD=""
PREV_CONFIG=""			# the configuration of the run before (runs.csv)

run_attempt()
{
	local d=$1 cfg=$2 rep=$3 attempt=$4 t dir off secs scanned pf t0 t1 c0 c1 d0 d1 busy devmb cpu0 cpu1 cpus pfline state joined o1 o2 load1
	t=$(tname "$d")
	next_run_dir
	dir=$RUNDIR
	wait_idle
	o1=$(others)
	cold_start "$cfg" "$d"
	off=$(stat -c %s "$SERVERLOG")
	q "SELECT pg_stat_prefetch_reset()" >/dev/null
	load1=$(cut -d' ' -f1 /proc/loadavg)
	ab_sampler "$dir" "$t"
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
	busy=$(cpu_busy_pct "$c0" "$c1")
	devmb=$(disk_read_mb "$d0" "$d1")
	FOREIGN=$(foreign_drops)
	pf=$NO_PF_STATS
	if extension_on "$cfg"; then
		pf=$(prefetch_stats 2 "relname = '$t' AND command = 'analyze'")
	fi
	sleep 0.2
	pfline=$(log_since "$off" | grep -m1 "bgw_prefetch: analyze of \"[^\"]*$t\"" || true)
	state=$(echo "$pfline" | sed -n 's/.*pid [0-9]*) \(.*\): scan advanced.*/\1/p')
	joined=$(echo "$pfline" | sed -n 's/.*joined at block \([0-9]*\).*/\1/p')
	log_since "$off" >"$dir/server.log"
	local oth
	oth=$(printf '%s %s' "$o1" "$o2" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//')
	echo "$d,${NBLK[$d]},${TARGET[$d]},$cfg,$rep,$SEQ,$secs,$scanned,$cpus,$pf,\"$state\",$joined,$CACHED,$CAT_S,$t0,$load1,$busy,$devmb,$attempt,$FOREIGN,$([ "$FOREIGN" -eq 0 ] && echo 1 || echo 0),\"$oth\",\"$(echo "$pfline" | sed 's/"/""/g')\",$PREV_CONFIG" >>"$RUNCSV"
	keep_samples "$dir" "$SEQ|$t0|"
	PREV_CONFIG=$cfg
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
		# shellcheck disable=SC2086  # the configurations: a list of words
		for cfg in $(round_configs "$rep" $CONFIGS); do
			run_one "$d" "$cfg" "$rep"
		done
	done
done
T_END=$(date +%s)
log "runs took $(( (T_END - T_START) / 60 )) min (of which $((WAITED / 60)) min waiting for other benchmarks)"

# ---------------------------------------------------------------- report

SMALL3_TXT="30,000 of 1,000,000 blocks (8 GB), statistics target 100"
[ "$SMALL3" -eq 1 ] && SMALL3_TXT="3,000 of 100,000 blocks: statistics target lowered to 10 on both columns (instead of an 8 GB table)"
make_report analyze_report.py "$RESDIR/${NAME}_samples.csv" \
	"seq,t0,epoch,pid,phase,sample_blks_total,sample_blks_scanned,state,consumer_block,prefetch_block,distance,reads_in_flight,io_depth,planned_blocks,prefetched_blocks,wait_event" \
	"machine=$(machine_meta ""); $(page_reporting_meta)" \
	"tables=int + 760-byte text, 10 rows per 8 kB page, COPY FREEZE (no hint-bit writes), no index; 3 % density: $SMALL3_TXT" \
	"extension=$EXT_META; io_method in force: ${IOMETHOD:-?}" \
	"reps=$REPS; load $((LOAD_S / 60)) min, timed runs $(( (T_END - T_START) / 60 )) min, of which $((WAITED / 60)) min waiting for other benchmarks$([ "$GAVE_UP" -eq 1 ] && echo ' (gave up waiting after 60 min: later runs overlapped other benchmarks)')" \
	${SERVER_META:+"$SERVER_META" "mic=$MIC"}
finish_report "$RESDIR/${NAME}.dat"
