#!/bin/bash
#
# calibrate_vs_fio.sh
#	Check bgw_prefetch_calibrate() against fio run the same way.
#
# Why: the calibration is only worth recording if it measures what the
# storage does; fio is the tool DBAs trust.  This script starts a throwaway
# server with bgw_prefetch preloaded (data directory under --dir), and
# alternates, --runs times, a calibration of pg_default and an fio sweep of
# a file of the same size on the same file system, written just before
# each sweep as the calibration writes its own, every fio run from a
# cold page cache (sync; echo 3 > /proc/sys/vm/drop_caches; and fio's own
# invalidate=1), the order flipping every run so that drift on a shared
# machine hits both alike.
#
# fio is run like the calibration: buffered reads (direct=0) through
# io_uring, the same depths, the same number of reads (1 block in 8 of the
# file, at most 20,000), the same 2 s limit per run, and no posix_fadvise
# hint (fadvise_hint=0: the calibration, like PostgreSQL, gives none).
#
#	calibrate "unsorted random" <-> fio rw=randread bs=8k, twice: with fio's
#		defaults (one io_uring_enter per read, IORING_OP_READV), and
#		"batched" like the engine (nonvectored=1, iodepth_batch_submit =
#		iodepth_batch_complete_max = depth: refill every free slot with one
#		system call, reap everything that completed)
#	calibrate "sorted random"   <-> fio replaying (read_iolog,
#		replay_no_stall=1, batched) a list of blocks drawn the way the
#		calibration draws them (Knuth's Algorithm S, 1 block in 8,
#		ascending).  fio has no ascending-with-random-gaps pattern of its
#		own; rw=read:56k (a fixed 56 kB hole) never reads adjacent blocks,
#		so the kernel's readahead never starts: a different workload.
#	calibrate "sequential"      <-> fio rw=read bs=256k, batched, depths <= 8
#
# Each fio sweep is measured the way the calibration measures a step: in
# ROUNDS (3) rounds, depths ascending in one round and descending in the
# next, fresh blocks (seed, iolog) every round, and the round with the
# median IOPS kept for each (pattern, depth), so that both sides filter
# the disk's slow moments alike: on this virtual disk a cold run, with any
# tool (fio's psync, sync or io_uring engines, or a plain liburing loop),
# now and then reads at twice the mean latency with the same median latency
# -- a few long waits in the tail.
#
# It prints the medians as a markdown table (written to --results too) and
# plots the IOPS curves (--plot, PNG with gnuplot); every run's figures go
# to the --results file's name with _raw.tsv instead of .md.
#
# With --repeat N it measures fio alone instead: three of the steps above
# (sequential at depth 1, sorted random at depth 2, unsorted random batched
# at depth 8), each run N times back to back and interleaved, each from a
# cold cache, on one file written once; it reports how far the same fio
# run strays from its own median (bench/results/fio_repeatability.md by
# default).  Agreement within 20 % between two tools means little where
# one tool does not agree with itself within 20 %.
#
# Needs root (drop_caches, and runuser to start the server as postgres),
# fio, gnuplot, python3, and bgw_prefetch installed (make install).
#
# Usage: bench/calibrate_vs_fio.sh [--dir DIR] [--size-mb N] [--max-depth N]
#			[--runs N] [--port N] [--results FILE] [--plot FILE]
#			[--no-page-reporting] [--repeat N] [--keep]
#	--dir		server and fio file go here (default /var/tmp/bgwp_calfio)
#	--size-mb	scratch/fio file size (default 1024, the calibration's)
#	--max-depth	deepest depth (default 64)
#	--runs		calibrations and fio sweeps (default 5)
#	--port		port of the throwaway server (default 54329)
#	--results	table output (default bench/results/calibrate_vs_fio.md)
#	--plot		PNG output (default bench/results/calibrate_vs_fio.png)
#	--no-page-reporting  turn the guest's free page reporting off for the
#			run, and back on at exit (bench/lib/common.sh, doc/benchmarks.md, "Method")
#	--repeat	fio's repeatability instead: each of three steps N times
#	--keep		keep DIR (server stopped, raw outputs, fio file)

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH_NAME=calibrate_vs_fio.sh
# usage, die, need_root, drop_os_cache, PGBIN
# shellcheck source=lib/common.sh
. "$ROOT/bench/lib/common.sh"
DIR=/var/tmp/bgwp_calfio
SIZE_MB=1024
MAX_DEPTH=64
RUNS=5
ROUNDS=3		# as the calibration's CAL_ROUNDS
PORT=54329
RESULTS=""
REPEAT=0
PLOT=$ROOT/bench/results/calibrate_vs_fio.png
KEEP=0
NO_PAGE_REPORTING=0
PGUSER_OS=postgres

while [ $# -gt 0 ]; do
	case "$1" in
		--dir) DIR=$2; shift 2 ;;
		--size-mb) SIZE_MB=$2; shift 2 ;;
		--max-depth) MAX_DEPTH=$2; shift 2 ;;
		--runs) RUNS=$2; shift 2 ;;
		--port) PORT=$2; shift 2 ;;
		--results) RESULTS=$2; shift 2 ;;
		--plot) PLOT=$2; shift 2 ;;
		--keep) KEEP=1; shift ;;
		--no-page-reporting) NO_PAGE_REPORTING=1; shift ;;
		--repeat) REPEAT=$2; shift 2 ;;
		*) other_option "$1" ;;
	esac
done
[[ "$REPEAT" =~ ^[0-9]+$ ]] || bad_usage "--repeat needs a number of repetitions"
if [ -z "$RESULTS" ]; then
	if [ "$REPEAT" -gt 0 ]; then
		RESULTS=$ROOT/bench/results/fio_repeatability.md
	else
		RESULTS=$ROOT/bench/results/calibrate_vs_fio.md
	fi
fi

need_root "every fio run starts from a cold page cache"
for tool in fio gnuplot python3; do
	command -v "$tool" >/dev/null || die "$tool is missing (apt-get install -y fio gnuplot-nox python3)"
done
[ "$REPEAT" -gt 0 ] || [ -f "$("$PGBIN/pg_config" --pkglibdir)/bgw_prefetch.so" ] ||
	die "bgw_prefetch is not installed (make && make install)"

PGDATA=$DIR/pgdata
FILE=$DIR/fio.dat
RAW=$DIR/raw
SERVER_UP=0

cleanup()
{
	if [ "$SERVER_UP" -eq 1 ]; then
		runuser -u "$PGUSER_OS" -- "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null || true
	fi
	if [ "$KEEP" -eq 0 ]; then
		rm -rf "$DIR"
	else
		echo "kept $DIR" >&2
	fi
	restore_knobs
}
trap cleanup EXIT
[ "$NO_PAGE_REPORTING" -eq 0 ] || disable_page_reporting

# Depths as the calibration makes them: powers of two below max, then max.
DEPTHS=""
for ((d = 1; d < MAX_DEPTH; d *= 2)); do DEPTHS="$DEPTHS $d"; done
DEPTHS="$DEPTHS $MAX_DEPTH"
SEQ_DEPTHS=""
for d in $DEPTHS; do if [ "$d" -le 8 ]; then SEQ_DEPTHS="$SEQ_DEPTHS $d"; fi; done
NBLOCKS=$((SIZE_MB * 128))
NREADS=$((NBLOCKS / 8 < 20000 ? NBLOCKS / 8 : 20000))
NSEQ=$((SIZE_MB * 4))

# fio draws other blocks in every run and every invocation, like the
# calibration: the same blocks again could come from a cache below the guest
SEED=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')

reverse() { echo "$@" | tr ' ' '\n' | tac | tr '\n' ' '; }

# ---- the server (not for --repeat, which runs fio only) ----
rm -rf "$DIR"
mkdir -p "$RAW"
chown -R "$PGUSER_OS" "$DIR"
psql_run()
{
	runuser -u "$PGUSER_OS" -- "$PGBIN/psql" -X -h "$DIR" -p "$PORT" -d postgres \
		-v ON_ERROR_STOP=1 "$@"
}
if [ "$REPEAT" -eq 0 ]; then
	runuser -u "$PGUSER_OS" -- "$PGBIN/initdb" -D "$PGDATA" -A trust >/dev/null
	cat >> "$PGDATA/postgresql.conf" <<-EOF
	shared_preload_libraries = 'bgw_prefetch'
	port = $PORT
	listen_addresses = ''
	unix_socket_directories = '$DIR'
	autovacuum = off
	EOF
	runuser -u "$PGUSER_OS" -- "$PGBIN/pg_ctl" -D "$PGDATA" -l "$DIR/server.log" -w start >/dev/null
	SERVER_UP=1
	psql_run -q -c "CREATE EXTENSION bgw_prefetch"
fi

# ---- the fio file: random data, fsync'd ----
# Written anew before every fio sweep, as the calibration writes its scratch
# file just before measuring it: on a virtual disk (or behind a RAID or SAN
# cache) data written a moment ago reads faster than data at rest, and fio
# must read the same kind of file.
write_fio_file()
{
	echo "writing $FILE ($SIZE_MB MB)..." >&2
	dd if=/dev/urandom of="$FILE" bs=1M count="$SIZE_MB" conv=fsync status=none
}

# fio_run LABEL DEPTH RUN ROUND OPTION...: one fio run from a cold cache,
# its JSON output in RAW/fio_LABEL_DEPTH_RUN_ROUND.json
fio_run()
{
	local label=$1 d=$2 r=$3 round=$4
	local out=$RAW/fio_${label}_${d}_${r}_${round}.json
	shift 4
	drop_os_cache
	fio --name="$label" --ioengine=io_uring --direct=0 --iodepth="$d" \
		--invalidate=1 --fadvise_hint=0 --runtime=2 \
		--randseed="$((SEED + r * ROUNDS + round))" "$@" \
		--output-format=json > "$out"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["jobs"][0]["read"]; print("fio %s depth %s: %.0f IOPS" % (sys.argv[2], sys.argv[3], r["iops"]))' \
		"$out" "$label" "$d" >&2
}

# sorted_iolog RUN ROUND: an fio iolog (version 2) reading NREADS blocks of
# FILE drawn with Knuth's Algorithm S (1 in 8, ascending), seeded afresh
# for every run and round
sorted_iolog()
{
	python3 - "$FILE" "$NBLOCKS" "$NREADS" "$((SEED + $1 * ROUNDS + $2))" \
		> "$RAW/sorted_$1_$2.iolog" <<'PYEOF'
import random, sys
path, nblocks, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
print("fio version 2 iolog")
print(f"{path} add")
print(f"{path} open")
k = 0
for b in range(nblocks):
    if k < n and rng.random() * (nblocks - b) < n - k:
        print(f"{path} read {b * 8192} 8192")
        k += 1
print(f"{path} close")
PYEOF
}

fio_sweep()
{
	local r=$1 depths seqdepths d round
	local -a batched
	write_fio_file
	for ((round = 1; round <= ROUNDS; round++)); do
		depths=$DEPTHS
		seqdepths=$SEQ_DEPTHS
		if [ $(((r + round) % 2)) -eq 1 ]; then
			depths=$(reverse $DEPTHS)
			seqdepths=$(reverse $SEQ_DEPTHS)
		fi
		sorted_iolog "$r" "$round"
		for d in $depths; do
			batched=(--nonvectored=1 --iodepth_batch_submit="$d" --iodepth_batch_complete_max="$d")
			fio_run randread "$d" "$r" "$round" --filename="$FILE" --size="${SIZE_MB}m" \
				--rw=randread --bs=8k --number_ios="$NREADS"
			fio_run randread_batched "$d" "$r" "$round" --filename="$FILE" --size="${SIZE_MB}m" \
				--rw=randread --bs=8k --number_ios="$NREADS" "${batched[@]}"
			fio_run sorted_iolog "$d" "$r" "$round" --read_iolog="$RAW/sorted_${r}_${round}.iolog" \
				--replay_no_stall=1 "${batched[@]}"
		done
		for d in $seqdepths; do
			batched=(--nonvectored=1 --iodepth_batch_submit="$d" --iodepth_batch_complete_max="$d")
			fio_run seq "$d" "$r" "$round" --filename="$FILE" --size="${SIZE_MB}m" --rw=read \
				--bs=256k --number_ios="$NSEQ" "${batched[@]}"
		done
	done
}

calibrate_run()
{
	drop_os_cache
	echo "calibration $1 (bgw_prefetch_calibrate('pg_default', $SIZE_MB, $MAX_DEPTH))..." >&2
	psql_run -At -F, -c "SELECT pattern, depth, iops, mb_per_s, mean_latency_us, p99_latency_us
		FROM bgw_prefetch_calibrate('pg_default', $SIZE_MB, $MAX_DEPTH)" \
		> "$RAW/cal_$1.csv" 2> "$RAW/cal_$1.log"
	grep -E 'recommended|WARNING' "$RAW/cal_$1.log" >&2 || true
}

# fio_repeatability: each step REPEAT times, interleaved, one file; a table
# of how the runs spread around their median
fio_repeatability()
{
	local i start elapsed
	local -a seq1 sorted2 rand8
	write_fio_file
	sorted_iolog 1 1
	seq1=(--filename="$FILE" --size="${SIZE_MB}m" --rw=read --bs=256k --number_ios="$NSEQ"
		--nonvectored=1 --iodepth_batch_submit=1 --iodepth_batch_complete_max=1)
	sorted2=(--read_iolog="$RAW/sorted_1_1.iolog" --replay_no_stall=1
		--nonvectored=1 --iodepth_batch_submit=2 --iodepth_batch_complete_max=2)
	rand8=(--filename="$FILE" --size="${SIZE_MB}m" --rw=randread --bs=8k --number_ios="$NREADS"
		--nonvectored=1 --iodepth_batch_submit=8 --iodepth_batch_complete_max=8)
	start=$(date +%s)
	for ((i = 1; i <= REPEAT; i++)); do
		fio_run seq 1 "$i" 0 "${seq1[@]}"
		fio_run sorted_iolog 2 "$i" 0 "${sorted2[@]}"
		fio_run randread_batched 8 "$i" 0 "${rand8[@]}"
	done
	elapsed=$(( $(date +%s) - start ))
	mkdir -p "$(dirname "$RESULTS")"
	python3 - "$RAW" "$REPEAT" "$(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs, $(page_reporting_meta), $(findmnt -n -o FSTYPE,SOURCE -T "$DIR" | tr -s ' ' ' '), file ${SIZE_MB} MB written once, $REPEAT runs of each step, interleaved, ${elapsed} s in all." > "$RESULTS" <<'PYEOF2'
import json, statistics, sys
raw, n, header = sys.argv[1], int(sys.argv[2]), sys.argv[3]
print("fio against itself: the same run repeated back to back (bench/calibrate_vs_fio.sh --repeat).")
print(header)
print("Every run from a cold page cache, fio options as in the calibration comparison.")
print()
print("| step | unit | median | min | max | max / min | runs within 20 % of the median | every run, in order |")
print("|---|---|---|---|---|---|---|---|")
for label, depth, what in (("seq", 1, "256 kB sequential, depth 1"),
                           ("sorted_iolog", 2, "8 kB sorted random (iolog replay), depth 2"),
                           ("randread_batched", 8, "8 kB unsorted random, batched, depth 8")):
    vals = []
    for i in range(1, n + 1):
        rd = json.load(open(f"{raw}/fio_{label}_{depth}_{i}_0.json"))["jobs"][0]["read"]
        vals.append(rd["bw_bytes"] / 1e6 if label == "seq" else rd["iops"])
    med = statistics.median(vals)
    within = sum(1 for v in vals if abs(v - med) <= 0.2 * med)
    unit = "MB/s" if label == "seq" else "IOPS"
    f = (lambda v: "%.0f" % v) if label == "seq" else (lambda v: "%.1fk" % (v / 1000))
    print("| %s | %s | %s | %s | %s | %.2f | %d of %d | %s |" % (
        what, unit, f(med), f(min(vals)), f(max(vals)), max(vals) / min(vals), within, n,
        " ".join(f(v) for v in vals)))
PYEOF2
	cat "$RESULTS"
	echo "table: $RESULTS" >&2
}
if [ "$REPEAT" -gt 0 ]; then
	fio_repeatability
	exit 0
fi

start=$(date +%s)
for ((r = 1; r <= RUNS; r++)); do
	if [ $((r % 2)) -eq 1 ]; then
		calibrate_run "$r"; fio_sweep "$r"
	else
		fio_sweep "$r"; calibrate_run "$r"
	fi
done
elapsed=$(( $(date +%s) - start ))

# ---- the table and the plot ----
mkdir -p "$(dirname "$RESULTS")" "$(dirname "$PLOT")"
HEADER="$(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs, $(page_reporting_meta), $(findmnt -n -o FSTYPE,SOURCE -T "$DIR" | tr -s ' ' ' '), file ${SIZE_MB} MB, ${NREADS} random reads per step, $RUNS runs, ${elapsed} s in all."
python3 - "$RAW" "$RUNS" "$HEADER" "$DIR/plot.dat" "$DEPTHS" "$SEQ_DEPTHS" "${RESULTS%.md}_raw.tsv" "$ROUNDS" > "$RESULTS" <<'PYEOF'
import csv, json, statistics, sys

raw, runs, header, plotdat = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rawtsv, rounds_per_run = sys.argv[7], int(sys.argv[8])
depths = [int(d) for d in sys.argv[5].split()]
seqdepths = [int(d) for d in sys.argv[6].split()]

cal = {}   # (pattern, depth) -> [(iops, MB/s, mean latency, p99), ...], one per run
for r in range(1, runs + 1):
    for row in csv.reader(open(f"{raw}/cal_{r}.csv")):
        if len(row) >= 6:
            cal.setdefault((row[0], int(row[1])), []).append(tuple(float(x) for x in row[2:6]) + (r,))

fio = {}   # (label, depth) -> the same from fio: per run, its median round
for label in ("randread", "randread_batched", "sorted_iolog", "seq"):
    for d in depths:
        for r in range(1, runs + 1):
            rounds = []
            for rnd in range(1, rounds_per_run + 1):
                try:
                    rd = json.load(open(f"{raw}/fio_{label}_{d}_{r}_{rnd}.json"))["jobs"][0]["read"]
                except FileNotFoundError:
                    continue
                pct = rd["clat_ns"].get("percentile", {})
                rounds.append((rd["iops"], rd["bw_bytes"] / 1048576, rd["lat_ns"]["mean"] / 1000,
                               pct.get("99.000000", 0) / 1000, r))
            if rounds:
                # the calibration's rule: the round with the median IOPS
                fio.setdefault((label, d), []).append(sorted(rounds)[(len(rounds) - 1) // 2])

def med(xs, i=0):
    return statistics.median(x[i] for x in xs) if xs else float("nan")

def spread(xs, i=0):
    v = [x[i] for x in xs]
    return f"{min(v)/1000:.1f}k – {max(v)/1000:.1f}k" if v else "–"

def k(x):
    return f"{x/1000:.1f}k"

def ok(ratio):
    return "yes" if abs(ratio - 1) <= 0.20 else "**no**"

def paired(c, f, i=0):
    """median over runs of calibration / fio of the same run (back to back)"""
    fr = {x[4]: x[i] for x in f}
    v = [x[i] / fr[x[4]] for x in c if x[4] in fr and fr[x[4]] > 0]
    return statistics.median(v) if v else float("nan")

with open(rawtsv, "w") as out:
    out.write("source\tpattern\tdepth\trun\tiops\tmb_per_s\tmean_latency_us\tp99_latency_us\n")
    for src, table in (("calibrate", cal), ("fio", fio)):
        for (pat, d), xs in sorted(table.items()):
            for x in sorted(xs, key=lambda x: x[4]):
                out.write(f"{src}\t{pat}\t{d}\t{x[4]}\t{x[0]:.0f}\t{x[1]:.1f}\t{x[2]:.0f}\t{x[3]:.0f}\n")

print("bgw_prefetch_calibrate() against fio, run the same way (bench/calibrate_vs_fio.sh).")
print(header)
print(f"Medians over the runs (each value, calibration and fio alike, is itself the median of its run's {rounds_per_run} rounds);")
print("ratio = calibration / fio (of the medians); paired = median over runs of calibration / fio of the same run,")
print("which cancels drift between runs; the target is agreement within 20 % at depths 1-64.")
print("fio batched = nonvectored=1, iodepth_batch_submit = iodepth_batch_complete_max = depth (the engine's way).")
print()
print("### 8 kB unsorted random vs fio randread")
print()
print("| depth | calibrate IOPS | fio batched IOPS | ratio | paired | within 20 % | fio default IOPS | ratio | calibrate min – max | fio batched min – max | fio default min – max | mean latency µs cal / fio batched | p99 µs cal / fio batched |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for d in depths:
    c, f, g = cal.get(("unsorted random", d), []), fio.get(("randread_batched", d), []), fio.get(("randread", d), [])
    r1, r2, p1 = med(c) / med(f), med(c) / med(g), paired(c, f)
    print(f"| {d} | {k(med(c))} | {k(med(f))} | {r1:.2f} | {p1:.2f} | {ok(r1)} | {k(med(g))} | {r2:.2f} | "
          f"{spread(c)} | {spread(f)} | {spread(g)} | "
          f"{med(c, 2):.0f} / {med(f, 2):.0f} | {med(c, 3):.0f} / {med(f, 3):.0f} |")
print()
print("### 8 kB sorted random vs fio replaying an ascending 1-in-8 block list (batched)")
print()
print("| depth | calibrate IOPS | fio IOPS | ratio | paired | within 20 % | calibrate min – max | fio min – max | mean latency µs cal / fio | p99 µs cal / fio |")
print("|---|---|---|---|---|---|---|---|---|---|")
for d in depths:
    c, f = cal.get(("sorted random", d), []), fio.get(("sorted_iolog", d), [])
    r1, p1 = med(c) / med(f), paired(c, f)
    print(f"| {d} | {k(med(c))} | {k(med(f))} | {r1:.2f} | {p1:.2f} | {ok(r1)} | {spread(c)} | {spread(f)} | "
          f"{med(c, 2):.0f} / {med(f, 2):.0f} | {med(c, 3):.0f} / {med(f, 3):.0f} |")
print()
print("### 256 kB sequential vs fio read bs=256k (batched)")
print()
print("| depth | calibrate MB/s | fio MB/s | ratio | paired | within 20 % | calibrate min – max | fio min – max |")
print("|---|---|---|---|---|---|---|---|")
for d in seqdepths:
    c, f = cal.get(("sequential", d), []), fio.get(("seq", d), [])
    r1, p1 = med(c, 1) / med(f, 1), paired(c, f, 1)
    mm = lambda xs: f"{min(x[1] for x in xs):.0f} – {max(x[1] for x in xs):.0f}" if xs else "–"
    print(f"| {d} | {med(c, 1):.0f} | {med(f, 1):.0f} | {r1:.2f} | {p1:.2f} | {ok(r1)} | {mm(c)} | {mm(f)} |")

with open(plotdat, "w") as out:
    out.write("# depth cal_sorted fio_sorted_iolog cal_unsorted fio_randread_batched fio_randread\n")
    for d in depths:
        out.write(" ".join(str(x) for x in (
            d, med(cal.get(("sorted random", d), [])), med(fio.get(("sorted_iolog", d), [])),
            med(cal.get(("unsorted random", d), [])), med(fio.get(("randread_batched", d), [])),
            med(fio.get(("randread", d), [])))) + "\n")
PYEOF

gnuplot <<EOF
set terminal pngcairo size 960,600 font "sans,10"
set output "$PLOT"
set title "Cold-cache buffered 8 kB reads, ${SIZE_MB} MB file, median of $RUNS runs: bgw\\\\_prefetch\\\\_calibrate() vs fio"
set logscale x 2
set xlabel "depth (reads in flight)"
set ylabel "IOPS"
set key top left
set grid
plot "$DIR/plot.dat" using 1:2 with linespoints lw 2 pt 7 title "calibrate: sorted random", \
	 "" using 1:3 with linespoints lw 2 pt 6 dt 2 title "fio: ascending 1-in-8 block list (read\\\\_iolog, batched)", \
	 "" using 1:4 with linespoints lw 2 pt 5 title "calibrate: unsorted random", \
	 "" using 1:5 with linespoints lw 2 pt 4 dt 2 title "fio: randread, batched like the engine", \
	 "" using 1:6 with linespoints lw 1 pt 3 dt 3 lc rgb "gray40" title "fio: randread, fio defaults"
EOF

cat "$RESULTS"
echo >&2
echo "table: $RESULTS, plot: $PLOT" >&2
