#!/usr/bin/env bash
# bench/clog_writer.sh: the CLOG writer off vs on (and auto), alternated in
# one run.
#
#   sudo bash bench/clog_writer.sh        (or as any user that can run initdb)
#
# Needs bgw_prefetch installed ("make install").  Starts a private cluster
# (as the "postgres" user when run as root) in a temporary directory, runs
# the workload below in windows alternating the bgw_prefetch.clog_writer
# settings of MODES (switched by reload), prints one line per window and a summary per
# setting, then stops the cluster and removes the directory (KEEP=1 keeps
# it, with the pgbench logs).
#
# Workload, built to make CLOG evictions, and evictions of dirty CLOG pages,
# frequent:
#   - shared_buffers = 16MB, so the CLOG SLRU has 4 buffers;
#   - a table "hist" of ROWS rows, each inserted by its own transaction and
#     never read, so that their xmins are unhinted and spread over
#     ROWS / 32768 CLOG pages (autovacuum is off for that table);
#   - READERS clients look up random hist rows, READ_RATE lookups/s in all
#     (pgbench -R): each lookup of a row not read before is a CLOG lookup
#     of an old page, so old pages are read in and evicted all the time;
#   - WRITERS clients run small update transactions (synchronous_commit =
#     off, as many OLTP setups do for throughput) as fast as they can: the
#     latest CLOG page fills up every few seconds, and the page before it is
#     left dirty, with commit LSNs that may not be flushed yet.  When a
#     backend (a reader evicting, or a writer zeroing the next page while
#     holding XidGenLock) has to evict it, it first flushes WAL and writes
#     the page.  Those are the "backend CLOG writes" the writer should take
#     over.
# Backend CLOG writes = pg_stat_slru (Xact) blks_written - the writer's
# pages_written; checkpoints are kept out of the windows (the checkpointer's
# SLRU counts only reach pg_stat_slru when it exits anyway).
#
# Settings (environment): MODES (the settings compared, "off on"; e.g.
# "off on auto"), PAIRS (rounds of MODES, default 3), SECS (seconds
# per window, 30), WARMUP (seconds, 10), SHARED_BUFFERS (16MB: 4 CLOG
# buffers on 15; 128MB gives 32, 1GB 128), SYNC_COMMIT (off), ROWS
# (600000; the CLOG pages of old xids the readers touch are ROWS / 32768),
# PG (server major version, 15; 16-18 from scripts/build-pg.sh's cache,
# with the extension installed there: make install PG_CONFIG=...),
# READERS (2),
# READ_RATE (300), WRITERS (4), WRITE_RATE (transactions/s for all the
# writers together; default unthrottled), DELAY
# (bgw_prefetch.clog_writer_delay, 200ms), PORT (54391).
# Unthrottled writers saturate a small machine's CPUs, and then the latency
# percentiles mostly measure run-queue waits; WRITE_RATE below capacity
# leaves headroom, so that latencies show the transactions' own work (tps
# is then the rate asked for, as long as the server keeps up).
set -euo pipefail

# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

MODES=${MODES:-off on}
PAIRS=${PAIRS:-3}
SECS=${SECS:-30}
WARMUP=${WARMUP:-10}
ROWS=${ROWS:-600000}
READERS=${READERS:-2}
READ_RATE=${READ_RATE:-300}
WRITERS=${WRITERS:-4}
WRITE_RATE=${WRITE_RATE:-}
DELAY=${DELAY:-200ms}
PORT=${PORT:-54391}
SHARED_BUFFERS=${SHARED_BUFFERS:-16MB}
SYNC_COMMIT=${SYNC_COMMIT:-off}
PG=${PG:-15}
bgwp_select_pg "$PG"
BIN=$BGWP_PG_BINDIR
# the CLOG's row in pg_stat_slru, and where WAL fsyncs are counted
if [ "$PG" -ge 17 ]; then SLRU_NAME=transaction; else SLRU_NAME=Xact; fi
if [ "$PG" -ge 18 ]; then
	WAL_SYNCS="(SELECT sum(fsyncs) FROM pg_stat_io WHERE object = 'wal')"
else
	WAL_SYNCS="(SELECT wal_sync FROM pg_stat_wal)"
fi

[ -x "$BIN/initdb" ] || bgwp_die "$BIN/initdb not found: install postgresql-15, or build $PG with scripts/build-pg.sh"
[ -f "$("$PG_CONFIG" --pkglibdir)/bgw_prefetch.so" ] ||
	bgwp_die "bgw_prefetch is not installed: run make install first"

WORK=$(bgwp_make_workdir bgwp-clog-bench)
DATA=$WORK/data
LOGS=$WORK/logs

pg() { bgwp_as_pg "$WORK" "$@"; }
sql() { pg "$BIN/psql" -X -qAt -v ON_ERROR_STOP=1 -h "$WORK" -p "$PORT" -d postgres "$@"; }

cleanup() {
	if [ -f "$DATA/postmaster.pid" ]; then
		pg "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 ||
			bgwp_warn "could not stop the cluster in $DATA"
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		bgwp_log "kept $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM

# ------------------------------------------------------------ the cluster
bgwp_log "initdb in $DATA"
pg "$BIN/initdb" -D "$DATA" -A trust -N >/dev/null
pg mkdir "$LOGS"
cat >>"$DATA/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$WORK'
shared_preload_libraries = 'bgw_prefetch'
shared_buffers = $SHARED_BUFFERS
synchronous_commit = $SYNC_COMMIT
checkpoint_timeout = 1h
max_wal_size = 16GB
bgw_prefetch.clog_writer_delay = $DELAY
EOF
pg "$BIN/pg_ctl" -D "$DATA" -l "$WORK/server.log" -w start >/dev/null
sql -c 'CREATE EXTENSION bgw_prefetch'

bgwp_log "creating $ROWS rows, one transaction each"
sql <<EOF
CREATE TABLE hist (id int PRIMARY KEY, v int) WITH (autovacuum_enabled = off);
CREATE TABLE counters (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0);
INSERT INTO counters (id) SELECT generate_series(1, 10000);
CREATE PROCEDURE fill_hist(n int) LANGUAGE plpgsql AS \$\$
BEGIN
  FOR i IN 1..n LOOP
    INSERT INTO hist VALUES (i, i);
    COMMIT;
  END LOOP;
END \$\$;
EOF
sql -c "CALL fill_hist($ROWS)"
sql -c 'CHECKPOINT'

pg tee "$WORK/read.sql" >/dev/null <<EOF
\\set id random(1, $ROWS)
SELECT v FROM hist WHERE id = :id;
EOF
pg tee "$WORK/write.sql" >/dev/null <<'EOF'
\set id random(1, 10000)
UPDATE counters SET n = n + 1 WHERE id = :id;
EOF

# ------------------------------------------------------------ one window
wait_for() {
	local query=$1 i
	for i in $(seq 1 300); do
		[ "$(sql -c "$query")" = t ] && return 0
		sleep 0.1
	done
	bgwp_die "timed out waiting for: $query"
}

set_writer() {
	sql -c "ALTER SYSTEM SET bgw_prefetch.clog_writer = $1" -c 'SELECT pg_reload_conf()' >/dev/null
	case $1 in
		on) wait_for "SELECT status IN ('writing', 'idle') FROM pg_stat_prefetch_clog" ;;
		auto) wait_for "SELECT status IN ('writing', 'idle', 'standby') FROM pg_stat_prefetch_clog" ;;
		*) wait_for "SELECT status = 'off' FROM pg_stat_prefetch_clog" ;;
	esac
}

# SLRU writes, writer pages, writer ms, next xid, writer rounds, WAL syncs
# (pg_stat_wal): once the clients are gone
# (backends flush their statistics on exit) and, when on, the writer is
# idle (it flushes its statistics before saying so); auto standing by has
# flushed them once it has looked four times since (two idle rounds make it
# hibernate, and it flushes before it does).
counters() {
	local rounds
	wait_for "SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
	case $1 in
		on) wait_for "SELECT status = 'idle' FROM pg_stat_prefetch_clog" ;;
		auto)
			rounds=$(sql -c 'SELECT rounds FROM pg_stat_prefetch_clog')
			wait_for "SELECT status = 'idle' OR (status = 'standby' AND rounds >= $rounds + 4) FROM pg_stat_prefetch_clog" ;;
	esac
	sql -F ' ' -c "SELECT (SELECT blks_written FROM pg_stat_slru WHERE name = '$SLRU_NAME'),
	                      pages_written, round(write_time::numeric, 1),
	                      pg_snapshot_xmax(pg_current_snapshot()), rounds,
	                      $WAL_SYNCS
	                 FROM pg_stat_prefetch_clog"
}

# window NAME MODE SECONDS: run the workload, print one result line
window() {
	local name=$1 mode=$2 secs=$3
	local before after tps throttle=()
	[ -n "$WRITE_RATE" ] && throttle=(-R "$WRITE_RATE")
	set_writer "$mode"
	before=$(counters "$mode")
	pg "$BIN/pgbench" -n -h "$WORK" -p "$PORT" -c "$WRITERS" -j 2 -T "$secs" "${throttle[@]}" \
		-l --log-prefix="$LOGS/$name.write" -f "$WORK/write.sql" postgres \
		>"$LOGS/$name.write.out" 2>&1 &
	local wpid=$!
	pg "$BIN/pgbench" -n -h "$WORK" -p "$PORT" -c "$READERS" -R "$READ_RATE" -T "$secs" \
		-l --log-prefix="$LOGS/$name.read" -f "$WORK/read.sql" postgres \
		>"$LOGS/$name.read.out" 2>&1 ||
		bgwp_die "reader pgbench failed: $(cat "$LOGS/$name.read.out")"
	wait "$wpid" || bgwp_die "writer pgbench failed: $(cat "$LOGS/$name.write.out")"
	after=$(counters "$mode")
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$LOGS/$name.write.out")
	echo "$before $after" | awk -v n="$name" -v m="$mode" -v tps="$tps" '{
		printf "%-8s %-4s %9d %7.1f %8d %8d %9.1f %7d %10.0f %9d\n", n, m, $10 - $4,
			($10 - $4) / 32768, ($7 - $1) - ($8 - $2), $8 - $2, $9 - $3,
			$11 - $5, tps, $12 - $6
	}' | pg tee -a "$WORK/windows.txt"
}

# percentiles of the latency (µs) in pgbench -l files, in ms; with -R the
# logged latency counts from the scheduled start, so subtract the schedule
# lag (7th column) to get the time the transaction itself took
latency() {
	cat "$@" | awk '{ print $3 - (NF >= 7 ? $7 : 0) }' | sort -n | awk '
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print "n/a"; exit }
			split("0.5 0.99 0.999", q, " ")
			for (i = 1; i <= 3; i++) {
				k = int(q[i] * NR + 0.999999); if (k < 1) k = 1
				printf "%.2f ", v[k] / 1000
			}
			printf "%.2f\n", v[NR] / 1000
		}'
}

# ------------------------------------------------------------ the run
bgwp_log "warm-up, $WARMUP s (not counted)"
window warmup on "$WARMUP" >/dev/null
pg rm -f "$WORK/windows.txt"
rm -f "$LOGS"/warmup.*

bgwp_log "PostgreSQL $PG, $PAIRS x ($MODES), $SECS s each: shared_buffers $SHARED_BUFFERS, synchronous_commit $SYNC_COMMIT, $WRITERS writers${WRITE_RATE:+ at $WRITE_RATE tps}, $READERS readers at $READ_RATE lookups/s, delay $DELAY"
printf '%-8s %-4s %9s %7s %8s %8s %9s %7s %10s %9s\n' window mode xids pages backend writer writer_ms rounds write_tps wal_syncs
for i in $(seq 1 "$PAIRS"); do
	for mode in $MODES; do
		window "$mode$i" "$mode" "$SECS"
	done
done

echo
echo "summary (sums over windows; tps: mean of windows; latency in ms: p50 p99 p99.9 max,"
echo "         without the -R schedule lag)"
for mode in $MODES; do
	awk -v m="$mode" -v secs="$SECS" '$2 == m { x += $3; b += $5; w += $6; t += $9; s += $10; n++ }
		END { printf "%-4s xids %d  backend CLOG writes %d  writer writes %d  write tps %.0f  WAL syncs/s %.1f\n", m, x, b, w, t / n, s / (n * secs) }' \
		"$WORK/windows.txt"
	echo "     write latency: $(latency "$LOGS"/"$mode"[0-9]*.write.[0-9]*)"
	echo "     read latency:  $(latency "$LOGS"/"$mode"[0-9]*.read.[0-9]*)"
done
for mode in $MODES; do
	[ "$mode" = off ] && continue
	awk -v m="$mode" '{ b[$2] += $5; t[$2] += $9; n[$2]++ }
		END {
			if (b["off"] > 0)
				printf "%s: backend CLOG writes reduced by %.1f %%\n", m, 100 * (1 - b[m] / b["off"])
			printf "%s: write tps %s / off: %.3f\n", m, m, (t[m] / n[m]) / (t["off"] / n["off"])
		}' "$WORK/windows.txt"
done
