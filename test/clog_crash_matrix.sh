#!/usr/bin/env bash
# test/clog_crash_matrix.sh: crash-recovery consistency of TPC-B under
# immediate stops, with and without bgw_prefetch's CLOG writer (issue 16).
#
#   sudo bash test/clog_crash_matrix.sh [--cycles N] [--configs "none off on"]
#	[--sync "off on"] [--out FILE] [--so PATH]
#
# For every configuration and synchronous_commit setting, a fresh cluster
# (shared_buffers = 16MB, so the CLOG SLRU has 4 buffers; autovacuum_naptime
# = 1) gets pgbench -i -s 4 and 20 s of pgbench, then N cycles of: pgbench
# TPC-B with 4 clients plus one client consuming xids quickly (so that CLOG
# pages fill and the writer has pages to write), an immediate stop 2-5 s
# later, a restart (crash recovery), and the checks:
#	- sum(abalance) = sum(bbalance) = sum(tbalance) = sum(history.delta);
#	- bt_index_check(heapallindexed) on the pgbench indexes and
#	  verify_heapam() on the four tables find nothing;
#	- with synchronous_commit = on, no transaction pgbench saw committed is
#	  lost: count(history) >= the count before the cycle plus the
#	  transactions pgbench reported as processed.
# --so names the bgw_prefetch.so to test (default: the installed one).
# Configurations: none (bgw_prefetch not loaded), off (loaded,
# bgw_prefetch.clog_writer = off), on (clog_writer = on, delay 10 ms).
#
# pgbench must run with -n here.  Without it, every pgbench run starts by
# truncating pgbench_history (and vacuuming the branches and tellers), so
# sum(delta) only covers the last run while the balances keep every run's
# deltas: the check then fails after the second run, crash or not,
# extension or not.  The script shows that first (part 1), on a cluster
# without bgw_prefetch and without any crash.
#
# Needs root only to run the clusters as the postgres user; every cluster
# lives in a private temporary directory and is stopped at the end, also
# on an error or Ctrl-C.  Output: one line per cycle and a summary table
# (also written to --out, default bench/results/clog_crash_matrix.md).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

CYCLES=30
CONFIGS="none off on"
SYNCS="off on"
OUT=$BGWP_ROOT/bench/results/clog_crash_matrix.md
SO=
while [ $# -gt 0 ]; do
	case $1 in
		--cycles) CYCLES=$2; shift 2 ;;
		--configs) CONFIGS=$2; shift 2 ;;
		--sync) SYNCS=$2; shift 2 ;;
		--out) OUT=$2; shift 2 ;;
		--so) SO=$2; shift 2 ;;
		*) bgwp_die "unknown option $1 (see the head of $0)" ;;
	esac
done

B=$BGWP_PG_BINDIR
WORK=$(bgwp_make_workdir bgwp_clogmatrix)
chmod 755 "$WORK"
DATA=
PORT=54991

as_pg() { bgwp_as_pg "$WORK" "$@"; }
psql_q() { as_pg "$B/psql" -h "$WORK" -p $PORT -qXAt -v ON_ERROR_STOP=1 -d postgres -c "$1"; }

stop_server() {
	if [ -n "$DATA" ] && [ -f "$DATA/postmaster.pid" ]; then
		as_pg "$B/pg_ctl" -D "$DATA" -m "${1:-fast}" -w stop >/dev/null 2>&1 || true
	fi
}
cleanup() {
	stop_server immediate
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM

start_server() {
	as_pg "$B/pg_ctl" -D "$DATA" -l "$DATA/../server.log" -w -t 120 start >/dev/null
}

# Pin the library: others may reinstall it while this runs, and every cycle
# restarts the server.  The clusters load a private copy, found first on
# dynamic_library_path, and the SQL objects are created from the installed
# script with MODULE_PATHNAME = 'bgw_prefetch' (CREATE EXTENSION's
# '$libdir/bgw_prefetch' would load the installed file as a second copy).
LIBDIR=$("$PG_CONFIG" --pkglibdir)
EXTSQL=$("$PG_CONFIG" --sharedir)/extension/bgw_prefetch--1.0.sql
as_pg mkdir -p "$WORK/lib"
cp "${SO:-$LIBDIR/bgw_prefetch.so}" "$WORK/lib/bgw_prefetch.so"
chmod 755 "$WORK/lib/bgw_prefetch.so"
SOMD5=$(md5sum "$WORK/lib/bgw_prefetch.so" | cut -c1-12)
sed -e "s/MODULE_PATHNAME/bgw_prefetch/" -e '/^\\echo/d' "$EXTSQL" | as_pg tee "$WORK/bgw_prefetch.sql" >/dev/null

# new_cluster CONFIG SYNC [NAME]: a fresh cluster in $WORK/NAME (default
# CONFIG-SYNC), started.
new_cluster() {
	local config=$1 sync=$2
	DATA=$WORK/${3:-$config-$sync}/data
	as_pg mkdir -p "$DATA"
	as_pg "$B/initdb" -D "$DATA" -A trust >/dev/null
	{
		echo "port = $PORT"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$WORK'"
		echo "shared_buffers = 16MB"
		echo "synchronous_commit = $sync"
		echo "autovacuum_naptime = 1"
		echo "dynamic_library_path = '$WORK/lib:\$libdir'"
		case $config in
			none) ;;
			off) echo "shared_preload_libraries = 'bgw_prefetch'"
				echo "bgw_prefetch.clog_writer = off" ;;
			on) echo "shared_preload_libraries = 'bgw_prefetch'"
				echo "bgw_prefetch.clog_writer = on"
				echo "bgw_prefetch.clog_writer_delay = 10ms" ;;
			*) bgwp_die "unknown configuration $config" ;;
		esac
	} | as_pg tee -a "$DATA/postgresql.conf" >/dev/null
	start_server
	as_pg "$B/pgbench" -h "$WORK" -p $PORT -i -s 4 -q postgres >/dev/null 2>&1
	psql_q "CREATE EXTENSION amcheck"
	[ "$config" = none ] ||
		as_pg "$B/psql" -h "$WORK" -p $PORT -qX -v ON_ERROR_STOP=1 -d postgres -f "$WORK/bgw_prefetch.sql" >/dev/null
	psql_q "CREATE PROCEDURE burn_xids(n int) LANGUAGE plpgsql AS \$\$
BEGIN FOR i IN 1..n LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END \$\$"
	echo "CALL burn_xids(50);" | as_pg tee "$WORK/burn.sql" >/dev/null
}

SUMS_SQL="SELECT (SELECT sum(abalance) FROM pgbench_accounts) || ' ' ||
	(SELECT sum(bbalance) FROM pgbench_branches) || ' ' ||
	(SELECT sum(tbalance) FROM pgbench_tellers) || ' ' ||
	(SELECT coalesce(sum(delta), 0) FROM pgbench_history)"
AMCHECK_SQL="SELECT (SELECT count(*) FROM (SELECT bt_index_check(c.oid, true)
	FROM pg_class c JOIN pg_am a ON a.oid = c.relam
	WHERE a.amname = 'btree' AND c.relname LIKE 'pgbench%') s) || ' ' ||
	(SELECT count(*) FROM unnest(ARRAY['pgbench_accounts', 'pgbench_branches',
	'pgbench_tellers', 'pgbench_history']::regclass[]) r, verify_heapam(r))"

# sums_agree "a b t h": all four equal?
sums_agree() {
	local a b t h
	read -r a b t h <<<"$1"
	[ "$a" = "$b" ] && [ "$b" = "$t" ] && [ "$t" = "$h" ]
}

pgbench_bg() {
	local out=$1
	shift
	as_pg "$B/pgbench" -h "$WORK" -p $PORT "$@" postgres >"$out" 2>&1 &
}

# ---------------------------------------------------------------- part 1
echo "== part 1: the check with pgbench run without -n, no extension, no crash"
new_cluster none on naive
as_pg "$B/pgbench" -h "$WORK" -p $PORT -c 4 -j 2 -T 5 postgres >/dev/null 2>&1
first=$(psql_q "$SUMS_SQL")
as_pg "$B/pgbench" -h "$WORK" -p $PORT -c 4 -j 2 -T 5 postgres >/dev/null 2>&1
second=$(psql_q "$SUMS_SQL")
stop_server
echo "after one pgbench run:  abalance bbalance tbalance delta = $first"
echo "after a second run:     abalance bbalance tbalance delta = $second"
if sums_agree "$second"; then
	NAIVE="the sums agreed after a second run without -n (unexpected)"
else
	NAIVE="without -n, sums disagree after a second run with no crash and no extension: $second"
fi
echo "$NAIVE"

# ---------------------------------------------------------------- part 2
declare -A FAILS WRITES CYCLES_RUN
for sync in $SYNCS; do
	for config in $CONFIGS; do
		key=$config-$sync
		echo "== part 2: configuration $config, synchronous_commit = $sync, $CYCLES cycles"
		new_cluster "$config" "$sync"
		as_pg "$B/pgbench" -n -h "$WORK" -p $PORT -c 4 -j 2 -T 20 postgres >/dev/null 2>&1
		fails=0
		pages=0
		for i in $(seq 1 "$CYCLES"); do
			before_count=$(psql_q "SELECT count(*) FROM pgbench_history")
			before_pages=0
			[ "$config" = on ] && before_pages=$(psql_q "SELECT pages_written FROM pg_stat_prefetch_clog")
			pgbench_bg "$WORK/tpcb.out" -n -c 4 -j 2 -T 60
			tpcb=$!
			pgbench_bg "$WORK/burn.out" -n -c 1 -T 60 -f "$WORK/burn.sql"
			burn=$!
			sleep $((2 + RANDOM % 4))
			after_pages=0
			[ "$config" = on ] && after_pages=$(psql_q "SELECT pages_written FROM pg_stat_prefetch_clog")
			stop_server immediate
			wait $tpcb $burn || true
			processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/tpcb.out")
			start_server
			sums=$(psql_q "$SUMS_SQL")
			amcheck=$(psql_q "$AMCHECK_SQL")
			count=$(psql_q "SELECT count(*) FROM pgbench_history")
			verdict=ok
			sums_agree "$sums" || verdict="SUMS DISAGREE"
			[ "$amcheck" = "3 0" ] || verdict="$verdict AMCHECK($amcheck)"
			if [ "$sync" = on ] && [ "$count" -lt $((before_count + ${processed:-0})) ]; then
				verdict="$verdict LOST COMMITS"
			fi
			[ "$verdict" = ok ] || fails=$((fails + 1))
			pages=$((pages + after_pages - before_pages))
			printf '%s cycle %2d: %s  sums %s  history %s -> %s (pgbench committed %s)  writer pages %s\n' \
				"$key" "$i" "$verdict" "$sums" "$before_count" "$count" "${processed:-?}" \
				$((after_pages - before_pages))
		done
		stop_server
		FAILS[$key]=$fails
		WRITES[$key]=$pages
		CYCLES_RUN[$key]=$CYCLES
	done
done

# ---------------------------------------------------------------- summary
{
	echo "# CLOG crash-consistency matrix (test/clog_crash_matrix.sh)"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $("$B/postgres" --version), bgw_prefetch.so md5 $SOMD5."
	echo "shared_buffers = 16MB, pgbench -s 4, 4 TPC-B clients + 1 xid-burning client, immediate stop after 2-5 s."
	echo
	echo "Part 1 (the reporter's check, pgbench without -n): $NAIVE"
	echo
	echo "| configuration | synchronous_commit | cycles | failed cycles | CLOG pages written by the writer |"
	echo "|---|---|---|---|---|"
	for sync in $SYNCS; do
		for config in $CONFIGS; do
			key=$config-$sync
			printf '| %s | %s | %s | %s | %s |\n' "$config" "$sync" "${CYCLES_RUN[$key]}" "${FAILS[$key]}" \
				"$([ "$config" = on ] && echo "${WRITES[$key]}" || echo -)"
		done
	done
} | tee "$OUT.tmp"
mv "$OUT.tmp" "$OUT"

total=0
for k in "${!FAILS[@]}"; do total=$((total + FAILS[$k])); done
[ "$total" -eq 0 ]
