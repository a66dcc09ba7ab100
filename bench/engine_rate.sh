#!/bin/bash
#
# engine_rate.sh
#	Compare the I/O engine's raw read rate with a minimal liburing loop.
#
# Why: the prefetcher is worth running only if its engine reads ahead at
# close to the disk's rate (target: at least 80 % of plain liburing at the
# same depth).  This script builds bench/engine_rate.c, creates a test file
# once, and for each depth alternates engine and plain runs (the order
# flipping every round, so that drift on a shared machine hits both alike),
# each from a cold page cache, plus reference rows: synchronous pread and
# posix_fadvise-ahead + pread.  It prints medians as a markdown table and
# writes the same table to a results file.
#
# Needs root: the page cache is dropped before every run through
# /proc/sys/vm/drop_caches.
#
# Usage: bench/engine_rate.sh [--dir DIR] [--size-gib N] [--blocks N]
#			[--runs N] [--depths "1 8 32 64"] [--results FILE] [--keep]
#	--dir		where the test file goes (default /var/tmp/bgwp_bench)
#	--size-gib	test file size (default 4)
#	--blocks	blocks read per run (default 20000)
#	--runs		runs per row (default 5)
#	--results	table output (default bench/results/engine_rate.md)
#	--keep		keep the test file (and reuse it next time)

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH_NAME=engine_rate.sh
# usage, die, need_root, drop_os_cache
# shellcheck source=lib/common.sh
. "$ROOT/bench/lib/common.sh"
DIR=/var/tmp/bgwp_bench
SIZE_GIB=4
BLOCKS=20000
RUNS=5
DEPTHS="1 8 32 64"
RESULTS=$ROOT/bench/results/engine_rate.md
KEEP=0

while [ $# -gt 0 ]; do
	case "$1" in
		--dir) DIR=$2; shift 2 ;;
		--size-gib) SIZE_GIB=$2; shift 2 ;;
		--blocks) BLOCKS=$2; shift 2 ;;
		--runs) RUNS=$2; shift 2 ;;
		--depths) DEPTHS=$2; shift 2 ;;
		--results) RESULTS=$2; shift 2 ;;
		--keep) KEEP=1; shift ;;
		*) other_option "$1" ;;
	esac
done

need_root "every run starts from a cold page cache"

FILE=$DIR/engine_rate.dat
BUILD=$(mktemp -d)
cleanup()
{
	rm -rf "$BUILD"
	if [ "$KEEP" -eq 0 ]; then
		rm -f "$FILE"
		rmdir "$DIR" 2>/dev/null || true
	fi
}
trap cleanup EXIT

cc -O2 -std=gnu99 -Wall -Wextra -Werror -I"$ROOT/src" -I"$ROOT/bench/lib" -o "$BUILD/engine_rate" \
	"$ROOT/bench/engine_rate.c" "$ROOT/src/io_engine.c" -luring

# The file: random data (nothing compressible or deduplicable by the
# virtual disk), created once and reused if a kept one has the right size.
mkdir -p "$DIR"
want=$((SIZE_GIB * 1024 * 1024 * 1024))
if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" -ne "$want" ]; then
	echo "creating $FILE ($SIZE_GIB GiB)..." >&2
	dd if=/dev/urandom of="$FILE" bs=1M count=$((SIZE_GIB * 1024)) conv=fsync status=none
fi

RAW=$BUILD/raw.txt
: > "$RAW"

# run LABEL MODE DEPTH ROUND [warm]: one run, from a cold page cache unless
# "warm".  The round number is the seed of the block choice, so all runs of
# a round read the same blocks.  Appends "label depth iops cpu round" to RAW.
run()
{
	local out
	if [ "${5:-}" != warm ]; then
		drop_os_cache
	fi
	out=$("$BUILD/engine_rate" "$2" "$FILE" "$3" "$BLOCKS" "$4")
	echo "$1 $out" >&2
	echo "$out" | awk -v label="$1" -v round="$4" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		print label, v["depth"], v["iops"], v["cpu_us_per_read"], round }' >> "$RAW"
}

start=$(date +%s)
for ((r = 1; r <= RUNS; r++)); do
	for d in $DEPTHS; do
		if [ $((r % 2)) -eq 1 ]; then
			run engine engine "$d" "$r"; run plain plain "$d" "$r"
		else
			run plain plain "$d" "$r"; run engine engine "$d" "$r"
		fi
	done
	run engine_poll engine_poll 32 "$r"
	run pread pread 1 "$r"
	run fadvise fadvise 8 "$r"
	run fadvise fadvise 32 "$r"
	# Page cache warm: CPU cost only.  Two unrecorded warm passes first: the
	# first reads of freshly cached pages do extra LRU work (marking them
	# accessed, activating them) that the first recorded run would pay and
	# the other not; and the order flips every round, as above.
	run warmup plain 32 "$r"
	run warmup plain 32 "$r" warm
	run warmup plain 32 "$r" warm
	if [ $((r % 2)) -eq 1 ]; then
		run engine_warm engine 32 "$r" warm; run plain_warm plain 32 "$r" warm
	else
		run plain_warm plain 32 "$r" warm; run engine_warm engine 32 "$r" warm
	fi
done
elapsed=$(( $(date +%s) - start ))

# median LIST...: "median min max n" of numbers on stdin
median()
{
	sort -g | awk '{ a[NR] = $1 } END {
		if (NR == 0) { print "0 0 0 0"; exit }
		med = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		print med, a[1], a[NR], NR }'
}

# stats LABEL DEPTH FIELD: median/min/max/n of a RAW field (3 IOPS, 4 CPU)
stats()
{
	awk -v l="$1" -v d="$2" -v f="$3" '$1 == l && $2 == d { print $f }' "$RAW" | median
}

# paired A B DEPTH: median over rounds of IOPS(A) / IOPS(B) of the same
# round, in percent; steadier than the ratio of medians when the machine's
# load drifts, since the runs of a round are back to back
paired()
{
	awk -v a="$1" -v b="$2" -v d="$3" '$2 == d && $1 == a { x[$5] = $3 }
		$2 == d && $1 == b { y[$5] = $3 }
		END { for (r in x) if (r in y) print 100 * x[r] / y[r] }' "$RAW" | median |
		awk '{ printf "%.0f %%", $1 }'
}

# k NUMBER: "105.3k"
k()
{
	awk -v x="$1" 'BEGIN { printf "%.1fk", x / 1000 }'
}

# us LABEL DEPTH: median CPU microseconds per read
us()
{
	stats "$1" "$2" 4 | awk '{ printf "%.1f", $1 }'
}

# row TEXT LABEL DEPTH: one reference row
row()
{
	local med min max n
	read -r med min max n < <(stats "$2" "$3" 3)
	printf "| %s | %s | %s | %s – %s | %s | %s |\n" "$1" "$3" "$(k "$med")" \
		"$(k "$min")" "$(k "$max")" "$(us "$2" "$3")" "$n"
}

{
	echo "Sorted random 8 kB buffered reads, $BLOCKS distinct blocks of a $SIZE_GIB GiB file,"
	echo "cold page cache before every run; $RUNS runs per row, engine and plain alternated."
	echo "$(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs, file on $(findmnt -n -o FSTYPE,SOURCE -T "$DIR" | tr -s ' ' ' '), ${elapsed} s in all."
	echo "CPU = user + system time of the process per read (includes io_uring's completion work)."
	echo
	echo "| depth | engine IOPS (median) | plain liburing IOPS (median) | engine / plain (medians) | engine / plain (median of paired runs) | engine min – max | plain min – max | CPU µs/read engine / plain |"
	echo "|---|---|---|---|---|---|---|---|"
	for d in $DEPTHS; do
		read -r emed emin emax _ < <(stats engine "$d" 3)
		read -r pmed pmin pmax _ < <(stats plain "$d" 3)
		printf "| %s | %s | %s | %s | %s | %s – %s | %s – %s | %s / %s |\n" "$d" \
			"$(k "$emed")" "$(k "$pmed")" \
			"$(awk -v e="$emed" -v p="$pmed" 'BEGIN { printf "%.0f %%", 100 * e / p }')" \
			"$(paired engine plain "$d")" "$(k "$emin")" "$(k "$emax")" \
			"$(k "$pmin")" "$(k "$pmax")" "$(us engine "$d")" "$(us plain "$d")"
	done
	echo
	echo "Reference rows (same blocks, same cold cache unless said):"
	echo
	echo "| method | depth | IOPS (median) | min – max | CPU µs/read | runs |"
	echo "|---|---|---|---|---|---|"
	row "engine, sleeping in poll() on its eventfd" engine_poll 32
	row "synchronous pread" pread 1
	row "posix_fadvise(WILLNEED) ahead, then pread" fadvise 8
	row "posix_fadvise(WILLNEED) ahead, then pread" fadvise 32
	row "engine, blocks already in the page cache" engine_warm 32
	row "plain liburing, blocks already in the page cache" plain_warm 32
	echo
	echo "Warm engine / plain (median of paired runs): $(paired engine_warm plain_warm 32)"
} > "$BUILD/table.md"

mkdir -p "$(dirname "$RESULTS")"
cp "$BUILD/table.md" "$RESULTS"
cat "$BUILD/table.md"
echo >&2
echo "written to $RESULTS" >&2
