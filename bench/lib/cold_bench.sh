# bench/lib/cold_bench.sh
#	The throwaway-cluster machinery of the cold-cache benchmarks of a
#	maintenance command, bench/vacuum_bench.sh and bench/analyze_bench.sh:
#	work directory and port, the cluster (as the postgres user) with a
#	pinned private copy of bgw_prefetch, psql helpers, server start/stop
#	around an OS cache drop, detection of other processes' drops, fincore
#	counts, machine CPU and disk counters, the pg_stat_progress_* sampler,
#	pg_stat_prefetch rows, and cleanup.  The two scripts grew the same code
#	side by side; what differs between them is passed in.
# shellcheck shell=bash
#
# Sourced after bench/lib/common.sh (die, log, drop_os_cache, PGBIN), not
# run.  The sourcing script sets ROOT, BENCH_NAME (its file name) and KEEP
# before calling cold_setup; NODROP=1 (optional) skips the cache drops.
# Globals set here: PGUSER, WORK, PGDATA, SERVERLOG, RUNS, PORT,
# SAMPLER_PID, LOCKER_PID (cold_setup); LIBDIR, SHAREDIR, SO_SOURCE, EXTVER,
# EXTSQL (check_pg_extension); SOMD5, SO_TIME, GITREV, GITDIRTY, EXT_META
# (pin_extension); DISK (find_disk); DROPS0 (cold_stop); SEQ, RUNDIR
# (next_run_dir).

PGUSER=postgres
NO_PF_STATS=",,,,,,"		# prefetch_stats of a run without a row

# check_pg_extension SO: the server user, PostgreSQL PG_MAJOR (15 unless
# --pg) and bgw_prefetch (SO, or the installed library when empty, and the
# extension script).
check_pg_extension()
{
	id "$PGUSER" >/dev/null 2>&1 || die "no user $PGUSER (postgresql-15 package)"
	[ -x "$PGBIN/postgres" ] || die "PostgreSQL $PG_MAJOR not found in $PGBIN"
	[ "$("$PGBIN/pg_config" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')" = "$PG_MAJOR" ] ||
		die "$PGBIN is not PostgreSQL $PG_MAJOR: $("$PGBIN/pg_config" --version)"
	LIBDIR=$("$PGBIN/pg_config" --pkglibdir)
	SHAREDIR=$("$PGBIN/pg_config" --sharedir)
	SO_SOURCE=${1:-$LIBDIR/bgw_prefetch.so}
	[ -f "$SO_SOURCE" ] || die "$SO_SOURCE not found (make -C $ROOT && make -C $ROOT install)"
	EXTVER=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$SHAREDIR/extension/bgw_prefetch.control")
	EXTSQL=$SHAREDIR/extension/bgw_prefetch--$EXTVER.sql
	# a checkout's build (--so): that checkout's extension script goes with
	# it, so that a branch that changed the SQL is tested with its own
	if [ -n "${1:-}" ] && [ -f "$(dirname "$1")/bgw_prefetch--$EXTVER.sql" ]; then
		EXTSQL=$(dirname "$1")/bgw_prefetch--$EXTVER.sql
	fi
	[ -f "$EXTSQL" ] || die "$EXTSQL not found"
}

# cold_setup FIRST_PORT: the work directory /var/tmp/NAME.XXXXXX (owned by
# the server user), a port nobody listens on from FIRST_PORT up (the server
# listens only on its private socket directory anyway), the cleanup traps.
cold_setup()
{
	WORK=$(mktemp -d "/var/tmp/${BENCH_NAME%.sh}.XXXXXX")
	chown "$PGUSER": "$WORK"
	chmod 755 "$WORK"
	PGDATA=$WORK/data
	SERVERLOG=$WORK/server.log
	RUNS=$WORK/runs
	mkdir -p "$RUNS"
	chown "$PGUSER": "$RUNS"
	SAMPLER_PID=""
	LOCKER_PID=""

	PORT=$1
	while ss -ltnH "( sport = :$PORT )" | grep -q . || [ -e "/tmp/.s.PGSQL.$PORT" ] ||
		[ -e "/var/run/postgresql/.s.PGSQL.$PORT" ]; do
		PORT=$((PORT + 1))
	done

	trap cleanup EXIT
	trap 'exit 130' INT TERM

	log "work directory $WORK, port $PORT"
}

# Commands as the server user, in WORK; the application name is the
# script's unless PGAPPNAME is set.
as_pg() { (cd "$WORK" && runuser -u "$PGUSER" -- env HOME="$WORK" PGAPPNAME="${PGAPPNAME:-${BENCH_NAME%.sh}}" "$@"); }
psql_() { as_pg "$PGBIN/psql" -X -h "$WORK" -p "$PORT" -d bench -v ON_ERROR_STOP=1 "$@"; }
# statements one by one (ALTER SYSTEM and VACUUM refuse multi-statement strings)
q() { psql_ -qAt -f - <<<"$1"; }

server_running() { [ -f "$PGDATA/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; }
pg_start() { as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$SERVERLOG" -w -t 600 start >/dev/null; }
pg_stop() { as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -w -t 600 -m fast stop >/dev/null; }

# extension_on CONFIG: does CONFIG run with bgw_prefetch enabled?  (Both
# benchmarks name those configurations on...: on, on0, ondN, on32, onfa;
# and sbuf, read_into = shared_buffers.)
extension_on() { case "$1" in on*|sbuf*) return 0 ;; *) return 1 ;; esac; }

# round_configs ROUND CONFIG...: the configurations of a round, one a
# line: round 1 in the given order, every later round in an order shuffled
# with the round number as seed (reproducible).  What a run leaves behind
# changes the next one (doc/benchmarks.md, "Run order"), so no configuration
# may always follow the same one.
round_configs()
{
	python3 -c 'import random, sys
c = sys.argv[2:]
if sys.argv[1] != "1":
    random.Random(int(sys.argv[1])).shuffle(c)
print("\n".join(c))' "$@"
}

# The autovacuum benchmarks keep autovacuum off their tables until the
# forecaster has them due, as on a server where bgw_prefetch has been
# resident for a while: a client session in database bench (as on a server
# in use) holds SHARE UPDATE EXCLUSIVE on them, which autovacuum passes by.
#
# hold_tables "t1, t2": open the session (coproc HOLDER) and take the lock.
hold_tables()
{
	local line
	coproc HOLDER { psql_ -qAtX 2>&1; }
	HOLDER_SESSION_PID=$HOLDER_PID
	echo "BEGIN; LOCK TABLE $1 IN SHARE UPDATE EXCLUSIVE MODE; SELECT 'locked';" >&"${HOLDER[1]}"
	read -r -t 60 line <&"${HOLDER[0]}"
	[ "$line" = locked ] || die "the lock holder said: $line"
}
# release_tables: commit, letting autovacuum onto the tables; the session stays.
release_tables()
{
	local line
	echo "COMMIT; SELECT 'released';" >&"${HOLDER[1]}"
	read -r -t 60 line <&"${HOLDER[0]}"
}
# end_hold: close the session.
end_hold()
{
	echo "\\q" >&"${HOLDER[1]}"
	wait "$HOLDER_SESSION_PID" 2>/dev/null || true
}
# wait_forecast_due N REGEX: wait (at most 60 s) until the forecaster
# lists N relations of database bench whose names match REGEX as needing a
# vacuum.
wait_forecast_due()
{
	for _ in $(seq 600); do
		[ "$(q "SELECT count(*) FROM bgw_prefetch_forecast() f JOIN pg_database d ON d.oid = f.datid
			WHERE d.datname = 'bench' AND f.needs_vacuum AND f.relname ~ '$2'")" = "$1" ] && return
		sleep 0.1
	done
}

# On exit: end the sampler, the bound's locker and the VACUUM benchmark's
# oracle (ORACLE_PID, which the sourcing script may set), stop the server, remove
# WORK (unless --keep), put free page reporting and the readahead back; keeps
# the exit status.
cleanup()
{
	local rc=$? pid
	set +e
	for pid in "$SAMPLER_PID" "$LOCKER_PID" "${ORACLE_PID:-}"; do
		if [ -n "$pid" ]; then
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
		fi
	done
	if [ -f "$PGDATA/postmaster.pid" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -w -t 120 -m fast stop >/dev/null 2>&1 ||
			as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate stop >/dev/null 2>&1
	fi
	if [ "$KEEP" -eq 1 ]; then
		log "kept $WORK"
	else
		rm -rf "$WORK"
	fi
	restore_knobs
	exit $rc
}

# Pin the extension: other people reinstall it while this runs, and every
# run restarts the server.  The cluster loads a private copy (found first on
# dynamic_library_path, by the preload, the workers and the SQL functions
# alike), and the SQL objects are created from the extension script with
# MODULE_PATHNAME = 'bgw_prefetch' (not CREATE EXTENSION, whose
# '$libdir/bgw_prefetch' would load the installed file as a second copy).
# EXT_META describes the copy for the report.
pin_extension()
{
	mkdir -p "$WORK/lib"
	for _ in $(seq 30); do
		cp "$SO_SOURCE" "$WORK/lib/bgw_prefetch.so"
		[ "$(md5sum <"$SO_SOURCE")" = "$(md5sum <"$WORK/lib/bgw_prefetch.so")" ] && break
		sleep 1
	done
	cp "$EXTSQL" "$WORK/bgw_prefetch.sql"
	chmod 755 "$WORK/lib" "$WORK/lib/bgw_prefetch.so"
	chmod 644 "$WORK/bgw_prefetch.sql"
	SOMD5=$(md5sum "$WORK/lib/bgw_prefetch.so" | cut -c1-12)
	SO_TIME=$(date -u '+%H:%M UTC')
	GITREV=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')
	GITDIRTY=$(git -C "$ROOT" status --porcelain -- src 2>/dev/null | wc -l)
	# the checkout's revision says what was tested only if this is its build
	if [ -f "$ROOT/bgw_prefetch.so" ] &&
		[ "$(md5sum "$ROOT/bgw_prefetch.so" | cut -c1-12)" = "$SOMD5" ]; then
		SO_ORIGIN="the checkout's build: git $GITREV, $GITDIRTY uncommitted files under src/ then"
	else
		SO_ORIGIN="not the checkout's build (git $GITREV there then): identify it by its md5"
	fi
	# shellcheck disable=SC2034  # used by the sourcing script
	EXT_META="bgw_prefetch.so md5 $SOMD5, copied from $SO_SOURCE at $SO_TIME and used for every run ($SO_ORIGIN); SQL objects from $EXTSQL"
	log "testing bgw_prefetch.so md5 $SOMD5 (copy of $SO_SOURCE), SQL objects from $EXTSQL"
}

# initdb, and the start of the script's postgresql.conf section: where the
# server listens and which bgw_prefetch it loads.  The script appends its
# own settings, then calls start_cluster.
init_cluster()
{
	as_pg "$PGBIN/initdb" -D "$PGDATA" -U "$PGUSER" --auth=trust -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1 ||
		{ cat "$WORK/initdb.log" >&2; die "initdb failed"; }
	cat >>"$PGDATA/postgresql.conf" <<EOF

# ---- $BENCH_NAME ----
listen_addresses = ''
port = $PORT
unix_socket_directories = '$WORK'
dynamic_library_path = '$WORK/lib:\$libdir'
shared_preload_libraries = 'bgw_prefetch'
EOF
}

# Start the server, create the database bench and the bgw_prefetch SQL
# objects from the pinned script.
start_cluster()
{
	chown "$PGUSER": "$PGDATA/postgresql.conf"
	pg_start
	as_pg "$PGBIN/createdb" -h "$WORK" -p "$PORT" bench
	sed -e "s/MODULE_PATHNAME/bgw_prefetch/g" -e '/^\\echo/d' "$WORK/bgw_prefetch.sql" | psql_ -qAt -f - >/dev/null
	[ "$(q "SELECT count(*) FROM pg_proc WHERE probin = 'bgw_prefetch'")" -gt 0 ] || die "bgw_prefetch SQL objects not created"
}

# ---------------------------------------------------------------- cold runs

# Other people on this machine drop the OS cache too (their benchmarks):
# /proc/vmstat counts every drop_caches.
drops() { awk '$1 == "drop_pagecache" {print $2}' /proc/vmstat; }

# Stop the server, drop the OS cache (unless NODROP=1: sync only) and note
# the drop count in DROPS0.
cold_stop()
{
	pg_stop
	if [ "${NODROP:-0}" -eq 1 ]; then
		sync
	else
		drop_os_cache
	fi
	DROPS0=$(drops)
}

# Drops by other processes since cold_stop.
foreign_drops() { echo $(( $(drops) - DROPS0 )); }

# relfiles PATH: a relation's segment files.  cached_blocks FILE...: how
# many 8 kB blocks of them are in the OS cache.
relfiles() { ls "$1" $(ls "$1".[0-9]* 2>/dev/null) 2>/dev/null; }
cached_blocks() { (fincore -b -n -r -o RES "$@" 2>/dev/null || true) | awk '{s += $1} END {printf "%d", s / 8192}'; }

# Machine-wide counters around the timed part: the machine is shared, so
# record how busy its CPUs and disk were (other tenants included).
# find_disk sets DISK, the disk under WORK.
find_disk()
{
	DISK=$(lsblk -ndo PKNAME "$(df --output=source "$WORK" | tail -1)" 2>/dev/null || true)
	[ -n "$DISK" ] || DISK=$(basename "$(df --output=source "$WORK" | tail -1)")
}
cpu_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }
disk_sectors() { awk -v d="$DISK" '$3 == d {print $6}' /proc/diskstats; }
# cpu_busy_pct "$c0" "$c1" / disk_read_mb "$d0" "$d1": from the counters
# before and after
cpu_busy_pct() { echo "$1 $2" | awk '{ if ($4 > $2) printf "%.0f", 100 * ($3 - $1) / ($4 - $2) }'; }
disk_read_mb() { echo "$1 $2" | awk '{ if (NF == 2) printf "%.0f", ($2 - $1) * 512 / 1048576 }'; }

# The next run's directory, RUNS/SEQ, owned by the server user: sets SEQ
# and RUNDIR.
next_run_dir()
{
	SEQ=$((SEQ + 1))
	RUNDIR=$RUNS/$SEQ
	mkdir -p "$RUNDIR"
	chown "$PGUSER": "$RUNDIR"
}

# The server log written after byte OFF (its size before the run).
log_since() { tail -c +"$(($1 + 1))" "$SERVERLOG"; }

# start_sampler DIR APPNAME TIMEOUT VIEW TOTAL SCANNED REL: sample the
# progress view VIEW (columns TOTAL and SCANNED) of relation REL joined with
# pg_stat_prefetch_activity every 20 ms, until a command on REL has come and
# gone (or TIMEOUT seconds), in one session named APPNAME (one transaction:
# the backend status snapshot is cleared each time), into DIR/samples.txt.
# Lines: S|epoch|pid|phase|total|scanned|state|consumer|prefetch|distance|
# in_flight|depth|planned|prefetched|wait event of the command's backend
start_sampler()
{
	local dir=$1 app=$2 timeout=$3 view=$4 total=$5 scanned=$6 rel=$7
	PGAPPNAME=$app psql_ -qAt >"$dir/samples.txt" 2>&1 <<EOF &
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
			SELECT p.pid, p.phase, p.$total, p.$scanned,
				   a.state, a.consumer_block, a.prefetch_block, a.distance,
				   a.reads_in_flight, a.io_depth, a.blocks_planned, a.blocks_prefetched,
				   coalesce(w.wait_event_type || ':' || w.wait_event, 'CPU') AS wait
			  FROM $view p
			  LEFT JOIN pg_stat_prefetch_activity a ON a.pid = p.pid
			  LEFT JOIN pg_stat_activity w ON w.pid = p.pid
			 WHERE p.relid = '$rel'::regclass
		LOOP
			present := true;
			RAISE NOTICE 'S|%|%|%|%|%|%|%|%|%|%|%|%|%|%', extract(epoch FROM clock_timestamp()),
				r.pid, r.phase, r.$total, r.$scanned, r.state,
				r.consumer_block, r.prefetch_block, r.distance, r.reads_in_flight,
				r.io_depth, r.blocks_planned, r.blocks_prefetched, r.wait;
		END LOOP;
		EXIT WHEN seen AND NOT present;
		seen := seen OR present;
		EXIT WHEN clock_timestamp() - t0 > interval '$timeout seconds';
		PERFORM pg_sleep(0.02);
	END LOOP;
END
\$\$;
EOF
	SAMPLER_PID=$!
	# wait until it is looping
	for _ in $(seq 200); do
		[ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$app' AND state = 'active'")" = 1 ] && return
		sleep 0.05
	done
	die "the sampler did not start"
}

stop_sampler()
{
	wait "$SAMPLER_PID" || true
	SAMPLER_PID=""
}

# keep_samples DIR PREFIX: append the sampler's lines of the run to
# WORK/samples.txt, "S|" replaced by PREFIX (the run's "SEQ|...").
keep_samples()
{
	sed -E 's/^.*NOTICE:  //' "$1/samples.txt" | grep '^S|' | sed "s/^S|/$2/" >>"$WORK/samples.txt" || true
}

# prefetch_stats DIGITS WHERE: the pg_stat_prefetch row matching WHERE
# once the monitor has ended the target (waits up to 10 s), as blocks read,
# prefetched, late, unused, read time, total time, prefetch time (ms,
# DIGITS decimals), comma-separated; NO_PF_STATS without a row.
prefetch_stats()
{
	local nd=$1 where=$2 row=""
	for _ in $(seq 100); do
		row=$(q "SELECT blocks_read, blocks_prefetched, blocks_late, blocks_unused,
			round(read_time::numeric, $nd), round(total_time::numeric, $nd),
			round(coalesce(prefetch_time, 0)::numeric, $nd)
			FROM pg_stat_prefetch WHERE $where AND scans > 0" | tr '|' ',')
		[ -n "$row" ] && break
		sleep 0.1
	done
	[ -n "$row" ] || row=$NO_PF_STATS
	echo "$row"
}

# ---------------------------------------------------------------- report

# make_report REPORT_PY SAMPLES_CSV SAMPLES_HEADER [META...]: copy RUNCSV
# to RESDIR/NAME_runs.csv, the sampler lines (WORK/samples.txt) to
# SAMPLES_CSV under SAMPLES_HEADER, and run bench/lib/REPORT_PY on them with
# the metas date, command (this script with ARGS) and META... (key=value).
make_report()
{
	local py=$1 samples=$2 header=$3 m
	local -a metas=()
	shift 3
	for m in "$@"; do
		metas+=(--meta "$m")
	done
	mkdir -p "$RESDIR"
	cp "$RUNCSV" "$RESDIR/${NAME}_runs.csv"
	{
		echo "$header"
		tr '|' ',' <"$WORK/samples.txt" 2>/dev/null || true
	} >"$samples"
	python3 "$LIB/$py" --runs "$RESDIR/${NAME}_runs.csv" --samples "$samples" \
		--outdir "$RESDIR" --name "$NAME" \
		--meta "date=$(date -u '+%Y-%m-%d %H:%M UTC')" \
		--meta "command=sudo bash bench/$BENCH_NAME ${ARGS[*]:-}" \
		"${metas[@]}"
}

# The machine line of the report; EXTRA (e.g. "disk vda, ") goes before the
# PostgreSQL version.
machine_meta()
{
	echo "$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $(uname -r), $(read_ahead_meta "${WORK:-/var/tmp}"), ${1:-}PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}')"
}

# server_meta: on a server other than 15 (--pg), the version and the I/O
# settings in force that differ between versions (each version's defaults
# unless the script sets them), for the report's "server" line; nothing on
# 15, whose reports stay as they were.
server_meta()
{
	[ "$PG_MAJOR" != 15 ] || return 0
	echo "server=PostgreSQL $(q "SHOW server_version") ($PGBIN); $(q "SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name) FROM pg_settings
		WHERE name IN ('maintenance_io_concurrency', 'effective_io_concurrency', 'io_method', 'io_workers',
			'io_combine_limit', 'vacuum_max_eager_freeze_failure_rate')")"
}

# finish_report [FILE...]: the plot (gnuplot on RESDIR/NAME.gp, which is
# then removed with the FILEs), and the report on stdout.
finish_report()
{
	if command -v gnuplot >/dev/null && [ -f "$RESDIR/${NAME}.gp" ]; then
		(cd "$RESDIR" && gnuplot "${NAME}.gp") && rm -f "$RESDIR/${NAME}.gp" "$@"
	fi
	log "results: $RESDIR/${NAME}.md"
	cat "$RESDIR/${NAME}.md"
}
