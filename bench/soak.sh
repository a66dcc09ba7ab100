#!/bin/bash
#
# soak.sh
#	Long reliability soak of bgw_prefetch (not part of CI; see
#	doc/reliability.md for what it proves and the last figures).
#
# Two throwaway clusters with the same settings run side by side for the
# whole soak:
#	L	shared_preload_libraries = 'bgw_prefetch', every relation watched
#		(bgw_prefetch.min_relation_size = 0), so autovacuum of the small
#		pgbench tables makes a new target every few seconds;
#	N	the library not loaded.
# Each has --dbs databases initialised by pgbench (scale --scale) and an
# aggressive autovacuum (naptime 1 s, 1 % / 50-row thresholds).  The pgbench
# write load (TPC-B-like, --clients per database, all databases at once)
# alternates between the clusters in phases of --phase seconds, L first:
# L N L N ...  The idle cluster's autovacuum catches up meanwhile, so L's
# workers are never idle for long.
#
# Every --sample seconds the script records, from L: the postmaster's pid,
# the monitor's and the CLOG writer's pid, VmRSS, RssAnon and open files,
# bgw_prefetch_status().targets_served and active_targets, and how many
# resolvers run.  At the end it reports:
#	- server crashes (log lines of a crash restart or a process killed by
#	  a signal, and whether the postmaster pid changed): must be 0;
#	- worker restarts (pid changes of the monitor / CLOG writer): must be 0;
#	- RSS, private memory and open files of both workers, first / last /
#	  max;
#	- targets served;
#	- ERROR/FATAL lines from bgw_prefetch processes;
#	- pgbench tps of L and N (sum over the databases, per phase), their
#	  means and the ratio L / N (target >= 0.98), and the median of the
#	  ratios of adjacent L/N phase pairs.
#
# Output (directory --out, default /tmp/bgwp-soak-<date>): samples.csv,
# phases.csv, summary.md, and the two server logs.  The exit status is 1 if
# a crash, a worker restart or a bgw_prefetch ERROR was seen.
#
# Run as root or as the postgres user; as root the script runs itself as
# postgres (initdb refuses root).  Nothing outside --out and a private
# temporary directory is touched; both clusters are stopped and removed by
# an EXIT trap (--keep keeps the data directories).
#
# Usage: bash bench/soak.sh [--duration SECONDS] [--phase SECONDS]
#		[--sample SECONDS] [--dbs N] [--scale N] [--clients N]
#		[--first L|N] [--l-conf 'name = value' ...] [--aa] [--out DIR] [--keep]
#	--duration	total soak time, default 1800 (30 min); the number of
#			phases is duration / phase, at least 2
#	--phase		length of one pgbench phase, default 60
#	--sample	sampling interval, default 10
#	--dbs		databases per cluster, default 3
#	--scale		pgbench scale of each database, default 10 (160 MB)
#	--clients	pgbench clients per database, default 2
#	--first		which cluster gets the first phase, default L (run once
#			with N to see whether the order biases the ratio)
#	--l-conf	an extra postgresql.conf line for L only (repeatable),
#			e.g. 'bgw_prefetch.clog_writer = off' to tell the
#			monitor's cost from the CLOG writer's
#	--aa		A/A calibration of the method: L is set up exactly like
#			N (library not loaded, no --l-conf), so the tps ratio
#			shows how much two such clusters differ by themselves
#			(the worker columns of the summary are then empty)

set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PGUSER_NAME=postgres

DURATION=1800
PHASE=60
SAMPLE=10
DBS=3
SCALE=10
CLIENTS=2
OUT=""
KEEP=0
AA=0
FIRST=L
L_CONF=()

usage()
{
	sed -n '/^# Usage:/,/^[^#]/s/^#[[:space:]]\{0,1\}//p' "$0" >&2
	exit 2
}

ARGS=("$@")
while [ $# -gt 0 ]; do
	case $1 in
		--duration) DURATION=$2; shift 2 ;;
		--phase) PHASE=$2; shift 2 ;;
		--sample) SAMPLE=$2; shift 2 ;;
		--dbs) DBS=$2; shift 2 ;;
		--scale) SCALE=$2; shift 2 ;;
		--clients) CLIENTS=$2; shift 2 ;;
		--first) FIRST=$2; shift 2 ;;
		--l-conf) L_CONF+=("$2"); shift 2 ;;
		--out) OUT=$2; shift 2 ;;
		--aa) AA=1; shift ;;
		--keep) KEEP=1; shift ;;
		-h|--help) usage ;;
		*) echo "unknown option: $1" >&2; usage ;;
	esac
done
[ -n "$OUT" ] || OUT=/tmp/bgwp-soak-$(date +%Y%m%d-%H%M%S)

log() { echo "[$(date +%T)] $*"; }

# ---------------------------------------------------------------- as postgres
if [ "$(id -u)" = 0 ]; then
	id "$PGUSER_NAME" >/dev/null 2>&1 || { echo "no $PGUSER_NAME user" >&2; exit 1; }
	mkdir -p "$OUT"
	chown "$PGUSER_NAME" "$OUT"
	script=$(mktemp /tmp/bgwp-soak-XXXXXX.sh)
	cp "$0" "$script"
	chmod 755 "$script"
	set +e
	runuser -u "$PGUSER_NAME" -- env PGBIN="$PGBIN" bash "$script" "${ARGS[@]}" --out "$OUT"
	rc=$?
	rm -f "$script"
	exit $rc
fi

NPHASES=$((DURATION / PHASE))
[ "$NPHASES" -ge 2 ] || NPHASES=2
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/bgwp-soak-work-XXXXXX)
SAMPLER_PID=""

cleanup()
{
	if [ -n "$SAMPLER_PID" ]; then
		kill "$SAMPLER_PID" 2>/dev/null || true
	fi
	for c in L N; do
		if [ -f "$WORK/$c/postmaster.pid" ]; then
			"$PGBIN/pg_ctl" -D "$WORK/$c" -m immediate -w stop >/dev/null 2>&1 || true
		fi
		if [ -f "$WORK/$c.log" ]; then
			cp "$WORK/$c.log" "$OUT/server_$c.log" 2>/dev/null || true
		fi
	done
	if [ "$KEEP" = 1 ]; then
		echo "kept $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM

port_of() { [ "$1" = L ] && echo 54391 || echo 54392; }

# psql on cluster $1, database $2
q()
{
	local c=$1 db=$2
	shift 2
	"$PGBIN/psql" -X -At -q -h "$WORK" -p "$(port_of "$c")" -d "$db" "$@"
}

make_cluster()
{
	local c=$1
	"$PGBIN/initdb" -D "$WORK/$c" -A trust >/dev/null
	cat >>"$WORK/$c/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$WORK'
port = $(port_of "$c")
max_connections = 60
shared_buffers = 128MB
synchronous_commit = off
autovacuum_naptime = 1s
autovacuum_vacuum_scale_factor = 0.01
autovacuum_vacuum_threshold = 50
autovacuum_vacuum_insert_scale_factor = 0.01
autovacuum_vacuum_insert_threshold = 50
autovacuum_analyze_scale_factor = 0.02
autovacuum_analyze_threshold = 50
log_line_prefix = '%m [%p] %b '
log_checkpoints = off
EOF
	if [ "$c" = L ] && [ "$AA" = 0 ]; then
		cat >>"$WORK/$c/postgresql.conf" <<EOF
shared_preload_libraries = 'bgw_prefetch'
bgw_prefetch.min_relation_size = 0
bgw_prefetch.log_min_duration = 10s
EOF
		for line in ${L_CONF[@]+"${L_CONF[@]}"}; do
			echo "$line" >>"$WORK/$c/postgresql.conf"
		done
	fi
	"$PGBIN/pg_ctl" -D "$WORK/$c" -l "$WORK/$c.log" -w start >/dev/null
	for i in $(seq 1 "$DBS"); do
		q "$c" postgres -c "CREATE DATABASE soak$i"
		"$PGBIN/pgbench" -h "$WORK" -p "$(port_of "$c")" -i -q -s "$SCALE" "soak$i" >/dev/null 2>&1
	done
	if [ "$c" = L ] && [ "$AA" = 0 ]; then
		q L postgres -c 'CREATE EXTENSION bgw_prefetch'
	fi
}

# CPU seconds (user + system) used by a pid, or "" if gone
proc_cpu()
{
	local pid=$1
	if [ -z "$pid" ] || [ ! -r "/proc/$pid/stat" ]; then
		echo ""
		return
	fi
	# fields 14 and 15 of stat(5); the command name may contain spaces
	sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null |
		awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($12 + $13) / hz }'
}

# "VmRSS RssAnon fds" of a pid, or "" if gone
proc_usage()
{
	local pid=$1 rss anon fds
	if [ -z "$pid" ] || [ ! -r "/proc/$pid/status" ]; then
		echo ",,"
		return
	fi
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
	anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
	fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	echo "$rss,$anon,$fds"
}

sampler()
{
	local t0=$1 row mon cw served active resolvers pm
	echo "t_s,postmaster_pid,monitor_pid,monitor_rss_kb,monitor_anon_kb,monitor_fds,clog_pid,clog_rss_kb,clog_anon_kb,clog_fds,targets_served,active_targets,resolvers,monitor_cpu_s,clog_cpu_s" \
		>"$OUT/samples.csv"
	while :; do
		pm=$(head -1 "$WORK/L/postmaster.pid" 2>/dev/null || true)
		row=$(q L postgres -F ' ' -c "
			SELECT coalesce((SELECT pid FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch monitor'), 0),
			       coalesce((SELECT pid FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch clog writer'), 0),
			       (SELECT targets_served FROM bgw_prefetch_status()),
			       (SELECT active_targets FROM bgw_prefetch_status()),
			       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'bgw_prefetch resolver')" \
			2>/dev/null || echo "0 0 0 0 0")
		read -r mon cw served active resolvers <<<"$row"
		[ "$mon" = 0 ] && mon=""
		[ "$cw" = 0 ] && cw=""
		echo "$(($(date +%s) - t0)),$pm,$mon,$(proc_usage "$mon"),$cw,$(proc_usage "$cw"),$served,$active,$resolvers,$(proc_cpu "$mon"),$(proc_cpu "$cw")" \
			>>"$OUT/samples.csv"
		sleep "$SAMPLE"
	done
}

# run pgbench on every database of cluster $1 for PHASE seconds; prints the
# summed tps
run_phase()
{
	local c=$1 i pids=() total=0 tps
	for i in $(seq 1 "$DBS"); do
		"$PGBIN/pgbench" -h "$WORK" -p "$(port_of "$c")" -n -c "$CLIENTS" -j 1 \
			-T "$PHASE" "soak$i" >"$WORK/pgbench_${c}_${i}.out" 2>&1 &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || true
	done
	for i in $(seq 1 "$DBS"); do
		tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' \
			"$WORK/pgbench_${c}_${i}.out")
		[ -n "$tps" ] || tps=0
		total=$(awk -v a="$total" -v b="$tps" 'BEGIN { print a + b }')
	done
	printf '%.1f\n' "$total"
}

# ---------------------------------------------------------------- set-up
log "work directory $WORK, results in $OUT"
log "soak: $NPHASES phases of ${PHASE}s, $DBS databases of scale $SCALE, $CLIENTS clients each"
make_cluster L
make_cluster N
PM_START=$(head -1 "$WORK/L/postmaster.pid")
T0=$(date +%s)
sampler "$T0" &
SAMPLER_PID=$!

# ---------------------------------------------------------------- phases
echo "phase,cluster,t_start_s,t_end_s,tps" >"$OUT/phases.csv"
for p in $(seq 0 $((NPHASES - 1))); do
	if [ $((p % 2)) = 0 ]; then c=$FIRST; elif [ "$FIRST" = L ]; then c=N; else c=L; fi
	ts=$(($(date +%s) - T0))
	tps=$(run_phase "$c")
	te=$(($(date +%s) - T0))
	echo "$p,$c,$ts,$te,$tps" >>"$OUT/phases.csv"
	log "phase $p on $c: $tps tps"
done
sleep "$SAMPLE"
kill "$SAMPLER_PID" 2>/dev/null || true
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""

# ---------------------------------------------------------------- report
PM_END=$(head -1 "$WORK/L/postmaster.pid")
crash_re='was terminated by signal|terminating any other active server processes|server processes terminated; reinitializing|TRAP:|PANIC:'
crashes_L=$(grep -Ec "$crash_re" "$WORK/L.log" || true)
crashes_N=$(grep -Ec "$crash_re" "$WORK/N.log" || true)
errors_L=$(grep -Ec 'bgw_prefetch (monitor|clog writer|resolver) (ERROR|FATAL|PANIC)' "$WORK/L.log" || true)

summary=$(awk -F, -v pm_start="$PM_START" -v pm_end="$PM_END" '
NR == 1 { next }
{
	n++
	if ($3 != "") { if (!($3 in mon)) { nmon++; mon[$3] = 1 } }
	if ($7 != "") { if (!($7 in cw)) { ncw++; cw[$7] = 1 } }
	if ($4 != "") { if (mr_first == "") mr_first = $4; mr_last = $4; if ($4 > mr_max) mr_max = $4 }
	if ($5 != "") { if (ma_first == "") ma_first = $5; ma_last = $5; if ($5 > ma_max) ma_max = $5 }
	if ($6 != "") { if (mf_first == "") mf_first = $6; mf_last = $6; if ($6 > mf_max) mf_max = $6 }
	if ($8 != "") { if (cr_first == "") cr_first = $8; cr_last = $8; if ($8 > cr_max) cr_max = $8 }
	if ($9 != "") { if (ca_first == "") ca_first = $9; ca_last = $9; if ($9 > ca_max) ca_max = $9 }
	if ($10 != "") { if (cf_first == "") cf_first = $10; cf_last = $10; if ($10 > cf_max) cf_max = $10 }
	if ($11 != "") served = $11
	if ($13 > res_max) res_max = $13
	if ($14 != "") { if (mc_first == "") mc_first = $14; mc_last = $14 }
	if ($15 != "") { if (cc_first == "") cc_first = $15; cc_last = $15 }
	if (t_first == "") t_first = $1; t_last = $1
}
END {
	printf "samples=%d\n", n
	printf "postmaster_restarted=%s\n", (pm_start == pm_end ? "no" : "yes")
	printf "monitor_restarts=%d\n", (nmon > 0 ? nmon - 1 : 0)
	printf "clog_restarts=%d\n", (ncw > 0 ? ncw - 1 : 0)
	printf "monitor_rss=%s/%s/%s\n", mr_first, mr_last, mr_max
	printf "monitor_anon=%s/%s/%s\n", ma_first, ma_last, ma_max
	printf "monitor_fds=%s/%s/%s\n", mf_first, mf_last, mf_max
	printf "clog_rss=%s/%s/%s\n", cr_first, cr_last, cr_max
	printf "clog_anon=%s/%s/%s\n", ca_first, ca_last, ca_max
	printf "clog_fds=%s/%s/%s\n", cf_first, cf_last, cf_max
	printf "targets_served=%s\n", served
	printf "max_resolvers_seen=%d\n", res_max
	span = t_last - t_first
	printf "monitor_cpu=%.1f s in %d s (%.2f %%)\n", mc_last - mc_first, span,
		(span > 0 ? 100 * (mc_last - mc_first) / span : 0)
	printf "clog_cpu=%.1f s in %d s (%.2f %%)\n", cc_last - cc_first, span,
		(span > 0 ? 100 * (cc_last - cc_first) / span : 0)
}' "$OUT/samples.csv")

tps_report=$(awk -F, '
NR == 1 { next }
{ tps[$1] = $5; cl[$1] = $2; if ($2 == "L") { sl += $5; nl++ } else { sn += $5; nn++ } }
END {
	ml = nl ? sl / nl : 0; mn = nn ? sn / nn : 0
	# ratios L / N of adjacent pairs (phases 0-1, 2-3, ...)
	np = 0
	for (p = 0; (p + 1) in tps; p += 2) {
		l = (cl[p] == "L" ? tps[p] : tps[p + 1]); n = (cl[p] == "L" ? tps[p + 1] : tps[p])
		r[np++] = (n > 0 ? l / n : 0)
	}
	for (i = 0; i < np; i++) for (j = i + 1; j < np; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
	med = np ? (np % 2 ? r[int(np / 2)] : (r[np / 2 - 1] + r[np / 2]) / 2) : 0
	printf "tps_L_mean=%.1f\ntps_N_mean=%.1f\ntps_ratio=%.3f\ntps_pair_ratio_median=%.3f\npairs=%d\n",
		ml, mn, (mn > 0 ? ml / mn : 0), med, np
}' "$OUT/phases.csv")

val() { echo "$summary"$'\n'"$tps_report" | sed -n "s/^$1=//p"; }

verdict=PASS
[ "$crashes_L" = 0 ] && [ "$crashes_N" = 0 ] || verdict=FAIL
[ "$(val postmaster_restarted)" = no ] || verdict=FAIL
[ "$(val monitor_restarts)" = 0 ] && [ "$(val clog_restarts)" = 0 ] || verdict=FAIL
[ "$errors_L" = 0 ] || verdict=FAIL
tps_ok=$(awk -v r="$(val tps_ratio)" 'BEGIN { print (r >= 0.98 ? "yes" : "no") }')

{
	echo "# bgw_prefetch soak, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "$NPHASES phases of ${PHASE} s ($FIRST first, alternating), $DBS databases of pgbench scale $SCALE,"
	echo "$CLIENTS clients each; autovacuum naptime 1 s, thresholds 1 % + 50 rows;"
	if [ "$AA" = 1 ]; then
		echo "A/A calibration (--aa): L set up exactly like N, the library loaded in neither."
	fi
	echo "bgw_prefetch.min_relation_size = 0.  PostgreSQL $("$PGBIN/postgres" -V | awk '{print $3}'), $(nproc) cores."
	if [ ${#L_CONF[@]} -gt 0 ]; then
		echo "Extra settings of L: ${L_CONF[*]}."
	fi
	echo
	echo "| check | result |"
	echo "|---|---|"
	echo "| server crashes (L / N log lines) | $crashes_L / $crashes_N |"
	echo "| postmaster of L restarted | $(val postmaster_restarted) |"
	echo "| monitor restarts (pid changes) | $(val monitor_restarts) |"
	echo "| CLOG writer restarts (pid changes) | $(val clog_restarts) |"
	echo "| ERROR/FATAL from bgw_prefetch processes | $errors_L |"
	echo "| monitor VmRSS kB first / last / max | $(val monitor_rss) |"
	echo "| monitor RssAnon kB first / last / max | $(val monitor_anon) |"
	echo "| monitor open files first / last / max | $(val monitor_fds) |"
	echo "| CLOG writer VmRSS kB first / last / max | $(val clog_rss) |"
	echo "| CLOG writer RssAnon kB first / last / max | $(val clog_anon) |"
	echo "| CLOG writer open files first / last / max | $(val clog_fds) |"
	echo "| targets served | $(val targets_served) |"
	echo "| most resolvers seen at once | $(val max_resolvers_seen) |"
	echo "| monitor CPU time | $(val monitor_cpu) |"
	echo "| CLOG writer CPU time | $(val clog_cpu) |"
	echo "| samples | $(val samples) (every ${SAMPLE} s) |"
	echo "| pgbench tps, L mean / N mean | $(val tps_L_mean) / $(val tps_N_mean) |"
	echo "| tps ratio L / N (target >= 0.98) | $(val tps_ratio) ($tps_ok) |"
	echo "| median ratio of adjacent L/N phase pairs ($(val pairs) pairs) | $(val tps_pair_ratio_median) |"
	echo "| verdict (crashes, restarts, errors) | $verdict |"
	echo
	echo "Per phase (phases.csv):"
	echo
	echo '```'
	cat "$OUT/phases.csv"
	echo '```'
} >"$OUT/summary.md"
cat "$OUT/summary.md"
log "results in $OUT"
[ "$verdict" = PASS ]
