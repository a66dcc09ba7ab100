#!/bin/bash
#
# flush_interference.sh
#	How much reads in flight delay other processes' fsyncs on the same
#	disk, and how much read rate they buy (why prefetching cannot bring
#	a VACUUM that flushes WAL all the way down to its cached bound on
#	this machine; doc/io_engine.md).
#
# A VACUUM that dirties pages flushes WAL every time its 256 kB buffer ring
# wraps onto a dirty buffer (XLogFlush, fdatasync with the default
# wal_sync_method), and committing transactions flush WAL too.  A disk (or
# a virtual disk's host) may serve a flush only after the reads queued
# before it, so prefetch reads in flight can slow every WAL flush on the
# device while adding nothing to the read rate once the disk is saturated.
#
# Two fio jobs run side by side, as on a server being prefetched:
#	wal	8 kB appends to a small file, each followed by fdatasync
#		(PostgreSQL's WAL flush), one at a time;
#	reader	random reads of SIZE kB from a large file (direct I/O, so the
#		page cache never answers), DEPTH in flight, io_uring.
# For every read size, the depth is stepped so that the bytes in flight
# are 0 (wal alone), 64 kB, 128 kB, ... --max-kb; each step is run --reps
# times, the steps of one repetition alternated.  Reported per step: the
# fdatasync latency (median over the repetitions of the mean and of the
# p99) and the read rate (median MB/s).
#
# Needs fio and python3 (apt-get install -y fio); root only to create the
# files under --dir if it is not writable otherwise.  Writes
# bench/results/<name>.md and <name>_raw.tsv.
#
# Usage: bash bench/flush_interference.sh [--dir DIR] [--sizes "8 64 256"]
#		[--max-kb N] [--reps N] [--seconds N] [--name NAME]
#	--dir		where the two fio files go (default /var/tmp/bgwp_flush;
#			it should be on the disk under test)
#	--sizes		read sizes in kB (default "8 64 256")
#	--max-kb	largest bytes in flight, in kB (default 4096)
#	--reps		repetitions of every step (default 3)
#	--seconds	length of one step (default 5)
#	--name		results file prefix under bench/results (default
#			flush_interference)

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RESDIR=$ROOT/bench/results
BENCH_NAME=flush_interference.sh
# usage, die, log
# shellcheck source=lib/common.sh
. "$ROOT/bench/lib/common.sh"

DIR=/var/tmp/bgwp_flush
SIZES="8 64 256"
MAX_KB=4096
REPS=3
SECONDS_PER_STEP=5
NAME=flush_interference

while [ $# -gt 0 ]; do
	case "$1" in
		--dir) DIR=$2; shift 2 ;;
		--sizes) SIZES=$2; shift 2 ;;
		--max-kb) MAX_KB=$2; shift 2 ;;
		--reps) REPS=$2; shift 2 ;;
		--seconds) SECONDS_PER_STEP=$2; shift 2 ;;
		--name) NAME=$2; shift 2 ;;
		*) other_option "$1" ;;
	esac
done
for n in "$MAX_KB" "$REPS" "$SECONDS_PER_STEP" $SIZES; do
	[[ "$n" =~ ^[1-9][0-9]*$ ]] || bad_usage "not a positive integer: $n"
done
command -v fio >/dev/null || die "fio is missing (apt-get install -y fio)"

mkdir -p "$DIR" "$RESDIR"
RAW=$RESDIR/${NAME}_raw.tsv
OUT=$RESDIR/$NAME.md
JSON=$(mktemp)
JOBS=$(mktemp)
trap 'rm -f "$JSON" "$JOBS"' EXIT

if [ ! -f "$DIR/readfile" ] || [ "$(stat -c %s "$DIR/readfile")" -lt $((4 << 30)) ]; then
	log "writing the 4 GB read file in $DIR"
	fio --name=prepare --filename="$DIR/readfile" --size=4G --rw=write \
		--bs=1M --direct=1 --output=/dev/null
fi

# one step: $1 read size kB (0: wal alone), $2 depth; appends a raw line
run_step()
{
	local size=$1 depth=$2 rep=$3

	cat >"$JOBS" <<EOF
[wal]
filename=$DIR/walfile
size=16M
rw=write
bs=8k
ioengine=psync
fdatasync=1
time_based=1
runtime=$SECONDS_PER_STEP
EOF
	if [ "$size" -gt 0 ]; then
		cat >>"$JOBS" <<EOF
[reader]
filename=$DIR/readfile
rw=randread
bs=${size}k
direct=1
ioengine=io_uring
iodepth=$depth
time_based=1
runtime=$SECONDS_PER_STEP
EOF
	fi
	fio --output-format=json "$JOBS" >"$JSON"
	python3 - "$JSON" "$size" "$depth" "$rep" >>"$RAW" <<'EOF'
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
sync = jobs[0]["sync"]["lat_ns"]
mbs = jobs[1]["read"]["bw"] / 1024 if len(jobs) > 1 else 0.0
size, depth, rep = (int(a) for a in sys.argv[2:5])
print(f"{size}\t{depth}\t{size * depth}\t{rep}\t{sync['mean'] / 1000:.0f}\t"
      f"{sync['percentile']['99.000000'] / 1000:.0f}\t{mbs:.0f}")
EOF
}

printf 'size_kb\tdepth\tinflight_kb\trep\tsync_mean_us\tsync_p99_us\tread_mb_s\n' >"$RAW"
START=$(date +%s)
for rep in $(seq "$REPS"); do
	log "repetition $rep of $REPS"
	run_step 0 0 "$rep"
	for size in $SIZES; do
		depth=1
		while [ $((size * depth)) -le "$MAX_KB" ]; do
			[ $((size * depth)) -ge 64 ] && run_step "$size" "$depth" "$rep"
			depth=$((depth * 2))
		done
	done
done

python3 - "$RAW" "$OUT" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(uname -r)" \
	"$(( $(date +%s) - START ))" "$*" <<'EOF'
import csv, statistics, sys
raw, out, when, kernel, secs, args = sys.argv[1:7]
rows = list(csv.DictReader(open(raw), delimiter="\t"))
steps = {}
for r in rows:
    steps.setdefault((int(r["size_kb"]), int(r["depth"])), []).append(r)
med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
alone = steps[(0, 0)]
base = med(alone, "sync_mean_us")
lines = [
    f"<!-- generated by bench/flush_interference.sh -->",
    "",
    f"- date: {when}; kernel {kernel}; {secs} s in all",
    f"- fdatasync of 8 kB appends (one at a time) while random direct reads run beside it with the given bytes in flight; medians over {len(alone)} repetitions",
    "",
    "| read size | depth | in flight | fdatasync mean µs | × alone | fdatasync p99 µs | read MB/s |",
    "|---|---|---|---|---|---|---|",
    f"| (none) | 0 | 0 | {base:.0f} | 1.0 | {med(alone, 'sync_p99_us'):.0f} | 0 |",
]
for (size, depth), rs in sorted(steps.items()):
    if size == 0:
        continue
    m = med(rs, "sync_mean_us")
    lines.append(f"| {size} kB | {depth} | {size * depth} kB | {m:.0f} | {m / base:.1f} | "
                 f"{med(rs, 'sync_p99_us'):.0f} | {med(rs, 'read_mb_s'):.0f} |")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
log "results: $OUT (every step: $RAW)"
