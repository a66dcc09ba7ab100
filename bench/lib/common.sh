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
# shellcheck disable=SC2034
PG_MAJOR=15

# select_pg N: the benchmarks' --pg N, run against PostgreSQL N: 15
# (Debian's package, the default) or 16, 17, 18 (built from source by
# scripts/build-pg.sh).  PGBIN is N's prefix as scripts/lib.sh's
# bgwp_pg_prefix gives it (sourced in a subshell: nothing else of lib.sh is
# kept); the sourcing script sets ROOT first.
select_pg()
{
	case "$1" in
		15|16|17|18) ;;
		*) bad_usage "--pg $1: 15, 16, 17 or 18" ;;
	esac
	PG_MAJOR=$1
	# shellcheck disable=SC1091  # scripts/lib.sh (only bgwp_pg_prefix is used)
	PGBIN=$(. "$ROOT/scripts/lib.sh" && bgwp_pg_prefix "$1")/bin
}

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

# Kernel knobs a benchmark sets for its run: set_knob_for_run FILE VALUE
# writes VALUE and remembers the old one (knob_old_value FILE prints it);
# the benchmark's EXIT trap calls restore_knobs, which puts every old value
# back, the last set first.
KNOBS_SET=()					# "FILE=OLD", in the order set
set_knob_for_run()
{
	local old
	old=$(cat "$1") && echo "$2" >"$1" || die "cannot set $1 to $2"
	KNOBS_SET+=("$1=$old")
	log "$1: $old -> $2 for this run"
}
knob_old_value()
{
	local e
	for e in "${KNOBS_SET[@]}"; do
		[ "${e%%=*}" = "$1" ] && { echo "${e#*=}"; return 0; }
	done
	return 1
}
restore_knobs()
{
	local i e
	for ((i = ${#KNOBS_SET[@]} - 1; i >= 0; i--)); do
		e=${KNOBS_SET[$i]}
		echo "${e#*=}" >"${e%%=*}" && log "${e%%=*}: back to ${e#*=}"
	done
	KNOBS_SET=()
}

# Free page reporting (virtio-balloon): the guest hands the memory it frees
# to the host, which drops it, and touching such a page again later costs a
# fault in the host.  A cold-cache run frees its page cache with the drop
# and then refills it, so with reporting on it pays those faults inside the
# timed part -- a server whose page cache stays allocated does not.
# disable_page_reporting turns it off for the benchmark (page_reporting_order
# above the largest page order) until restore_knobs.
PAGE_REPORTING_KNOB=/sys/module/page_reporting/parameters/page_reporting_order
PAGE_REPORTING_OFF=11			# above MAX_PAGE_ORDER (10): nothing reported
disable_page_reporting()
{
	[ -w "$PAGE_REPORTING_KNOB" ] || die "no $PAGE_REPORTING_KNOB here: this kernel does not report free pages"
	set_knob_for_run "$PAGE_REPORTING_KNOB" "$PAGE_REPORTING_OFF"
}
# page_reporting_meta: how free page reporting stood, for the result header
page_reporting_meta()
{
	local was
	if was=$(knob_old_value "$PAGE_REPORTING_KNOB"); then
		echo "free page reporting: off for the run (page_reporting_order $PAGE_REPORTING_OFF, was $was)"
	elif [ -r "$PAGE_REPORTING_KNOB" ]; then
		echo "free page reporting: on (page_reporting_order $(cat "$PAGE_REPORTING_KNOB"))"
	else
		echo "free page reporting: not in this kernel"
	fi
}

# Kernel readahead of the disk under a directory.  Every comparison against
# "off" depends on it: without prefetch, VACUUM's reads set off read_ahead_kb
# of readahead over the ranges it skips.  set_read_ahead KB DIR sets it for
# the benchmark until restore_knobs; read_ahead_meta says how it stood, for
# the result header.
# The whole disk under DIR (a partition's read_ahead_kb is its disk's)
read_ahead_knob()
{
	local src dev
	src=$(findmnt -n -o SOURCE -T "$1") || return 1
	dev=$(basename "$(readlink -f "$src")")
	[ -e "/sys/class/block/$dev/partition" ] &&
		dev=$(basename "$(readlink -f "/sys/class/block/$dev/..")")
	echo "/sys/block/$dev/queue/read_ahead_kb"
}
set_read_ahead()
{
	local knob
	knob=$(read_ahead_knob "$2") && [ -w "$knob" ] ||
		die "cannot set the readahead of the disk under $2 (${knob:-no device})"
	set_knob_for_run "$knob" "$1"
}
read_ahead_meta()
{
	local knob
	knob=$(read_ahead_knob "$1") && [ -r "$knob" ] || { echo "read_ahead_kb: unknown"; return; }
	echo "read_ahead_kb $(cat "$knob") ($(basename "$(dirname "$(dirname "$knob")")"))"
}
