#!/usr/bin/env bash
# scripts/demo.sh: see bgw_prefetch serve an autovacuum and an autoanalyze
# of a cold table, on a throwaway server.
#
#   sudo bash scripts/demo.sh
#
# What it does: installs the packages (scripts/install-deps.sh; skipped with
# SKIP_DEPS=1), builds and installs the extension, creates a temporary
# cluster (as the "postgres" user, in a private directory under /tmp, on a
# Unix socket only) that preloads bgw_prefetch and logs every watched scan,
# loads a table of DEMO_ROWS rows (3,000,000 by default, about 400 MB),
# freezes it, updates one row on DEMO_DIRTY_PCT % (1 by default) of its
# pages chosen at random, and keeps a copy of the stopped cluster.  Then it
# runs the same cold autovacuum twice, each from that copy, after dropping
# the OS page cache, letting autovacuum at the table once bgw_prefetch's
# forecaster has it due (as on a server where it has been running a while):
# once with prefetch off (bgw_prefetch.vacuum and
# bgw_prefetch.analyze off: the extension only watches and measures), once
# on, showing pg_stat_prefetch_activity while the second runs and what
# bgw_prefetch saw and did; the last line compares the two autovacuums as
# pg_stat_prefetch recorded them: duration, read time, read rate.  Autovacuum runs
# unthrottled (autovacuum_vacuum_cost_delay = 0): with the default 2 ms
# delay it is paced by the delay, and prefetching gains less
# (doc/benchmarks.md: 0.81 x at 1 % on a 2 GB table).  The cluster is
# stopped and its directory removed at the end, also on an error or Ctrl-C.
# It takes about a minute once the packages are installed.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ROWS=${DEMO_ROWS:-3000000}
DIRTY_PCT=${DEMO_DIRTY_PCT:-1}
PORT=${DEMO_PORT:-54329}
WORK=
PGDATA=
STARTED=0

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ "$STARTED" = 1 ]; then
		bgwp_log "stopping the demo cluster"
		bgwp_as_pg "$WORK" "$BGWP_PG_BINDIR/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null ||
			bgwp_warn "could not stop the demo cluster in $PGDATA"
	fi
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM

# ---------------------------------------------------------------- set-up
if [ "${SKIP_DEPS:-0}" != 1 ]; then
	bash "$BGWP_ROOT/scripts/install-deps.sh"
fi

WORK=$(bgwp_make_workdir bgw_prefetch-demo)
TREE=$WORK/src
PGDATA=$WORK/data
LOG=$WORK/server.log
mkdir -p "$TREE"
bgwp_copy_tree "$TREE"
bgwp_log "building and installing bgw_prefetch"
bgwp_build "$TREE"
bgwp_install "$TREE"

# psql on the demo cluster; extra arguments are psql's.
sql() {
	bgwp_as_pg "$WORK" "$BGWP_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 \
		-h "$WORK" -p "$PORT" -d postgres "$@"
}
# One value.
value() {
	sql -A -t -c "$1"
}

pg_ctl_() {
	bgwp_as_pg "$WORK" "$BGWP_PG_BINDIR/pg_ctl" -D "$PGDATA" -l "$LOG" -w "$@" >/dev/null
}

bgwp_log "creating a throwaway cluster in $PGDATA"
bgwp_as_pg "$WORK" "$BGWP_PG_BINDIR/initdb" -D "$PGDATA" -A trust -E UTF8 --no-locale >/dev/null
cat >>"$PGDATA/postgresql.conf" <<EOF

# ---- bgw_prefetch demo (scripts/demo.sh)
listen_addresses = ''
unix_socket_directories = '$WORK'
port = $PORT
shared_buffers = 128MB
max_wal_size = 4GB
track_io_timing = on

shared_preload_libraries = 'bgw_prefetch'
bgw_prefetch.log_min_duration = 0	# log every watched scan
bgw_prefetch.min_relation_size = 8MB
bgw_prefetch.naptime = 10ms		# find the autovacuum worker sooner (default 200ms)

autovacuum = off			# each run turns it on once the table is held
autovacuum_naptime = 1s
autovacuum_vacuum_cost_delay = 0	# unthrottled, as on fast storage: the reads show
autovacuum_vacuum_threshold = 100
autovacuum_vacuum_scale_factor = 0
log_autovacuum_min_duration = 0		# autovacuum's own report, for comparison
EOF
pg_ctl_ start
STARTED=1
sql -c 'CREATE EXTENSION bgw_prefetch'

# ---------------------------------------------------------------- the table
# Autovacuum is kept off the table until it is cold, so that the scans
# shown below are the interesting ones.
bgwp_log "loading $ROWS rows (autovacuum off for the table while loading)"
sql <<EOF
CREATE TABLE demo (id int, val int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO demo SELECT g, 0, repeat('x', 100) FROM generate_series(1, $ROWS) g;
EOF
bgwp_log "VACUUM (FREEZE) demo: every page all-visible and all-frozen"
sql -c 'VACUUM (FREEZE) demo'
sql -c "SELECT pg_size_pretty(pg_relation_size('demo')) AS table_size,
               pg_relation_size('demo') / 8192 AS blocks"

bgwp_log "updating one row on $DIRTY_PCT% of the pages, chosen at random"
sql <<EOF
UPDATE demo SET val = val + 1
 WHERE ctid = ANY (ARRAY(
       SELECT DISTINCT format('(%s,1)', floor(random() * (pg_relation_size('demo') / 8192)))::tid
         FROM generate_series(1, (pg_relation_size('demo') / 8192 * $DIRTY_PCT / 100)::int)));
CHECKPOINT;
EOF

TABLE_MB=$(value "SELECT pg_relation_size('demo') / (1024 * 1024)")
bgwp_log "stopping the server and keeping a copy of the cluster: both runs start from it"
pg_ctl_ stop -m fast
STARTED=0
bgwp_as_pg "$WORK" cp -a "$PGDATA" "$WORK/data.start"

# Start the server on a fresh copy of the starting state, with the OS page
# cache dropped (the table is cold), prefetch $1 (bgw_prefetch.vacuum and
# bgw_prefetch.analyze, reload), and let autovacuum at the table.
cold_start() {
	rm -rf "$PGDATA"
	bgwp_as_pg "$WORK" cp -a "$WORK/data.start" "$PGDATA"
	sync
	if bgwp_is_root && { echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then
		bgwp_log "OS page cache dropped"
	else
		bgwp_warn "could not drop the OS page cache (needs root and a writable /proc/sys); the table may still be cached"
	fi
	LOG_OFFSET=$(($(stat -c %s "$LOG") + 1))
	pg_ctl_ start
	STARTED=1
	sql -c "ALTER SYSTEM SET bgw_prefetch.vacuum = $1" \
		-c "ALTER SYSTEM SET bgw_prefetch.\"analyze\" = $1" -c 'SELECT pg_reload_conf()' >/dev/null
	sql -c "ALTER TABLE demo SET (autovacuum_enabled = on)"
	release_when_forecast
}

# As on a server where bgw_prefetch has been running for a while, the
# forecaster should know the table is due before autovacuum gets to it, so
# that the monitor serves the autovacuum from its first block.  A fresh
# server's autovacuum would win that race, so a session holds SHARE UPDATE
# EXCLUSIVE on the table (autovacuum passes a locked table by) while
# autovacuum is turned on, until the forecaster lists the table as needing a
# vacuum (at most 30 s), then commits.
release_when_forecast() {
	local line
	coproc HOLDER { sql -A -t 2>&1; }
	echo "BEGIN; LOCK TABLE demo IN SHARE UPDATE EXCLUSIVE MODE; SELECT 'locked';" >&"${HOLDER[1]}"
	read -r -t 60 line <&"${HOLDER[0]}" || true
	[ "$line" = locked ] || bgwp_die "could not lock the demo table: $line"
	sql -c "ALTER SYSTEM SET autovacuum = on" -c 'SELECT pg_reload_conf()' >/dev/null
	for _ in $(seq 1 300); do
		[ "$(value "SELECT count(*) FROM bgw_prefetch_forecast()
		             WHERE relname IN ('demo', 'public.demo') AND needs_vacuum")" = 1 ] && break
		sleep 0.1
	done
	echo "COMMIT; SELECT 'released';" >&"${HOLDER[1]}"
	read -r -t 60 line <&"${HOLDER[0]}" || true
	echo '\q' >&"${HOLDER[1]}"
	wait "$HOLDER_PID" 2>/dev/null || true
}

# Wait until autovacuum and autoanalyze processed the table.
autovacuum_done() {
	[ "$(value "SELECT last_autovacuum IS NOT NULL AND last_autoanalyze IS NOT NULL
	              FROM pg_stat_user_tables WHERE relname = 'demo'")" = t ]
}

# What pg_stat_prefetch recorded of the autovacuum of the table, once it
# has recorded it: "duration_s read_time_ms read_rate prefetched", or
# nothing if it did not.
view_figures() {
	for _ in $(seq 1 150); do
		[ "$(value "SELECT count(*) FROM pg_stat_prefetch
		             WHERE relname = 'demo' AND command = 'vacuum'")" = 1 ] && break
		sleep 0.2
	done
	value "SELECT format('%s %s %s %s', round((total_time / 1000)::numeric, 3),
	                     round(read_time::numeric, 1), round(read_rate::numeric), prefetched_scans)
	         FROM pg_stat_prefetch WHERE relname = 'demo' AND command = 'vacuum'"
}

# ---------------------------------------------------------------- autovacuum, prefetch off
bgwp_log "cold autovacuum with prefetch off (bgw_prefetch.vacuum = off, analyze = off)"
cold_start off
for _ in $(seq 1 900); do
	autovacuum_done && break
	sleep 0.2
done
autovacuum_done || bgwp_warn "autovacuum did not process the table in time"
read -r OFF_S OFF_READ_MS OFF_RATE _ <<<"$(view_figures)" || true
bgwp_log "autovacuum with prefetch off, as pg_stat_prefetch recorded it"
sql -x -c "SELECT * FROM pg_stat_prefetch WHERE relname = 'demo'"
pg_ctl_ stop -m fast
STARTED=0

# ---------------------------------------------------------------- autovacuum, prefetch on
bgwp_log "the same cold autovacuum with prefetch on"
cold_start on

# Show pg_stat_prefetch_activity once for each scan served (the VACUUM,
# then the ANALYZE), while autovacuum works.
activity_shown=0
last_scans=
for _ in $(seq 1 900); do
	scans=$(value "SELECT string_agg(pid || ' ' || command, ', ') FROM pg_stat_prefetch_activity")
	if [ -n "$scans" ] && [ "$scans" != "$last_scans" ] && [ "$activity_shown" -lt 3 ]; then
		bgwp_log "pg_stat_prefetch_activity while autovacuum runs"
		sql -x -c 'SELECT * FROM pg_stat_prefetch_activity'
		activity_shown=$((activity_shown + 1))
		last_scans=$scans
	fi
	autovacuum_done && break
	sleep 0.2
done
[ "$activity_shown" -gt 0 ] ||
	bgwp_log "(pg_stat_prefetch_activity was empty each time we looked)"
sql -c "SELECT relname, last_autovacuum, last_autoanalyze
          FROM pg_stat_user_tables WHERE relname = 'demo'"
[ "$(value "SELECT last_autovacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'demo'")" = t ] ||
	bgwp_warn "autovacuum did not process the table in time"

bgwp_log "pg_stat_prefetch"
sql -x -c 'SELECT * FROM pg_stat_prefetch ORDER BY datname, relname, command'
bgwp_log "bgw_prefetch_status()"
sql -x -c 'SELECT * FROM bgw_prefetch_status()'
bgwp_log "pg_stat_prefetch_clog"
sql -x -c 'SELECT * FROM pg_stat_prefetch_clog'
bgwp_log "server log since the restart: bgw_prefetch's lines, and autovacuum's own report on the table"
# Whole log entries (continuation lines start with a tab).
tail -c +"$LOG_OFFSET" "$LOG" |
	awk '/^\t/ { if (keep) print; next }
	     { keep = /LOG:  bgw_prefetch|automatic (vacuum|analyze) of table "postgres\.public\.demo"/; if (keep) print }'

read -r ON_S ON_READ_MS ON_RATE _ <<<"$(view_figures)" || true
bgwp_log "the same cold autovacuum, prefetch off and on, from pg_stat_prefetch"
awk -v mb="$TABLE_MB" -v pct="$DIRTY_PCT" -v off="${OFF_S:-}" -v on="${ON_S:-}" \
	-v offr="${OFF_READ_MS:-?}" -v onr="${ON_READ_MS:-?}" -v offm="${OFF_RATE:-?}" -v onm="${ON_RATE:-?}" 'BEGIN {
	printf "autovacuum of demo (%d MB, %s %% dirty, cold cache, cost delay 0): off %s s (read %s ms, %s MB/s), on %s s (read %s ms, %s MB/s)",
		mb, pct, off, offr, offm, on, onr, onm
	if (off > 0 && on > 0)
		printf " -> %.2f x\n", on / off
	else
		printf " (no ratio)\n"
}'
bgwp_log "demo done"
