# bench/lib/common.sh
#	Shell helpers of every cold-cache benchmark script (vacuum_bench.sh,
#	analyze_bench.sh, engine_rate.sh, calibrate_vs_fio.sh): usage and
#	option errors, die, log, the root check and the page cache drop.
#	They were copied from script to script; one copy keeps the messages
#	alike.
# shellcheck shell=bash
#
# Sourced, not run.  The sourcing script sets BENCH_NAME (its own file
# name, the prefix of its error messages) first; $0 stays the script, whose
# "# Usage:" comment block usage() prints.

# shellcheck disable=SC2034  # used by the sourcing scripts
PGBIN=/usr/lib/postgresql/15/bin

# The "# Usage:" block of the script's header comment, on stderr; exit 2.
usage()
{
	sed -n '/^# Usage:/,/^[^#]/s/^#[[:space:]]\{0,1\}//p' "$0" >&2
	exit 2
}

# The last case of an option loop: -h/--help, or an unknown option.
other_option()
{
	case "$1" in
		-h|--help) usage ;;
		*) echo "$BENCH_NAME: unknown option $1" >&2; usage ;;
	esac
}

# A bad option value: the message, exit 2 (as usage).
bad_usage() { echo "$BENCH_NAME: $*" >&2; exit 2; }

log() { printf '%s ==> %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }

# need_root WHY: root, and a writable drop_caches, or die saying why.
need_root()
{
	{ [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/vm/drop_caches ]; } ||
		die "must run as root: $1 (echo 3 > /proc/sys/vm/drop_caches)"
}

# Write back dirty pages, then drop the whole OS page cache.
drop_os_cache()
{
	sync
	echo 3 >/proc/sys/vm/drop_caches
}
