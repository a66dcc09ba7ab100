#!/usr/bin/env bash
# test/clog_mutation.sh: does t/032_clog_crash_loop.pl catch a CLOG writer
# that breaks the SLRU write protocol?  (issue 16: the test must fail on
# the bug.)
#
#   sudo bash test/clog_mutation.sh [MUTATION...]
#
# For each mutation, a copy of the tree gets one deliberate bug in
# src/clog_slru.c, is built and installed into the server's directories
# (PostgreSQL 15's, or BGWP_TEST_VERSION's from scripts/test.sh), and
# t/032_clog_crash_loop.pl runs against it.  The mutation is "caught" only
# if the test fails one of its invariant checks (INVARIANT_RE below: the
# TPC-B invariant and amcheck after a crash, durability of what pgbench saw
# committed, pg_xact against the WAL).  A test that fails otherwise (a
# timeout, a server that does not start, a failed setup step) says nothing
# about the mutation: that is an error of the harness, reported as such,
# never counted as caught.  The control, "none", runs the test on the
# checkout as it is, which must pass.  At the end the checkout's own build
# is installed again (also on an error or Ctrl-C).  Mutations:
#	none		no change (the control)
#	skip_write	the writer marks the page clean instead of writing it
#			(a writer that believes a page is clean when it is
#			not): the statuses on it are lost when the page is
#			evicted, or by a crash after the next checkpoint
#	dirty_race	after SimpleLruWritePage() returns, the writer marks the
#			page clean: a status set while the page was being
#			written never reaches the disk unless it is written
#			again
#	no_wal_flush	before the write, the writer clears the page's group
#			LSNs: the write no longer flushes WAL up to the page's
#			asynchronous commits (WAL before data broken)
# Only none and skip_write run by default: dirty_race and no_wal_flush
# were not caught in one 30-cycle run each (doc/clog_writer.md, "Tests"
# says why), so they are there to be tried, not a check that passes.
# A run that has not ended after RUN_SECONDS (900) is stopped: a mutated
# writer can leave the server hung (a CHECKPOINT waiting forever was seen),
# and a hung server is a broken writer caught too, "hung".
# Exits 0 when the control passed and every mutation was caught, 2 if any
# run ended in a harness error, else 1.  Needs
# root (install) and the packages of scripts/install-deps.sh; takes about 4
# minutes a mutation.
set -uo pipefail

# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
# the server version scripts/test.sh is testing (15 when run by hand)
bgwp_select_pg "${BGWP_TEST_VERSION:-15}"

MUTATIONS=("$@")
RUN_SECONDS=${RUN_SECONDS:-900}
[ ${#MUTATIONS[@]} -gt 0 ] || MUTATIONS=(none skip_write)

bgwp_is_root || bgwp_die "run as root: the mutated builds are installed into the tested server's directories"

WORK=$(bgwp_make_workdir bgwp_mutation)
cleanup() {
	bgwp_stop_servers_under "$WORK"
	bgwp_log "reinstalling the checkout's build"
	mkdir -p "$WORK/own" && bgwp_copy_tree "$WORK/own" && bgwp_build "$WORK/own" &&
		bgwp_install "$WORK/own" || bgwp_warn "could not reinstall the checkout's build"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM

# mutate MUTATION FILE: apply one bug to clog_slru.c, or fail.
mutate() {
	local file=$2
	case $1 in
		none) return 0 ;;
		skip_write)
			perl -0pi -e 's/\t\t\tSimpleLruWritePage\(ClogCtl, slotno\);\n/\t\t\tshared->page_dirty[slotno] = false;\t\/* MUTATION *\/\n/' "$file" ;;
		dirty_race)
			perl -0pi -e 's/(\t\t\tSimpleLruWritePage\(ClogCtl, slotno\);\n)/$1\t\t\tshared->page_dirty[slotno] = false;\t\/* MUTATION *\/\n/' "$file" ;;
		no_wal_flush)
			perl -0pi -e 's/(\t\t\tSimpleLruWritePage\(ClogCtl, slotno\);\n)/\t\t\tmemset(&shared->group_lsn[slotno * shared->lsn_groups_per_page], 0, shared->lsn_groups_per_page * sizeof(XLogRecPtr));\t\/* MUTATION *\/\n$1/' "$file" ;;
		*) bgwp_die "unknown mutation $1" ;;
	esac
	grep -q MUTATION "$file"
}

# The TAP lines of a failed invariant check of t/032_clog_crash_loop.pl
# (the test names of tpcb_consistent_ok() in t/BgwPrefetchTest.pm and of the
# test itself), as the test's log has them: after a time stamp,
# "[14:52:16.491](0.581s) not ok 5 - cycle 1 ...".
INVARIANT_RE='(^|[[:space:]])not ok [0-9]+ - (cycle [0-9]+ \(synchronous_commit = (on|off)\): (balances add up|bt_index_check on the pgbench indexes|verify_heapam finds nothing|the [0-9]+ transactions pgbench saw committed are there)|pg_xact vs WAL: (no xid .* committed without a commit record|every commit record is committed in pg_xact))'

caught=0
errors=0
control=none-run
for m in "${MUTATIONS[@]}"; do
	tree=$WORK/$m
	mkdir -p "$tree"
	bgwp_copy_tree "$tree"
	mutate "$m" "$tree/src/clog_slru.c" || bgwp_die "mutation $m did not apply to src/clog_slru.c"
	bgwp_build "$tree" || bgwp_die "mutation $m does not build"
	bgwp_install "$tree" || bgwp_die "cannot install mutation $m"
	bgwp_log "mutation $m: running t/032_clog_crash_loop.pl"
	regress_log=$tree/tmp_check/log/regress_log_032_clog_crash_loop
	# passed; failed (an invariant check failed); hung (stopped after
	# RUN_SECONDS); or error (the test failed, but no invariant check did:
	# it cannot tell)
	# a mutation is caught at its first failed check: no more cycles then
	stop_early=1
	[ "$m" = none ] && stop_early=
	bgwp_as_pg "$tree" env BGWP_STOP_AT_FIRST_FAILURE=$stop_early \
		timeout --kill-after=30 "$RUN_SECONDS" \
		make -s installcheck PROVE_TESTS=t/032_clog_crash_loop.pl REGRESS= \
		>"$WORK/$m.log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		result=passed
	elif grep -Eq "$INVARIANT_RE" "$regress_log" 2>/dev/null; then
		result=failed
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		result=hung
		bgwp_stop_servers_under "$tree"
	else
		result=error
	fi
	bgwp_log "mutation $m: the test $result"
	grep -E 'not ok|# +(first|Failed test|got|expected)|Looks like|died|timed out' \
		"$regress_log" 2>/dev/null | head -n 12 | sed 's/^/    /'
	if [ "$result" = error ]; then
		errors=$((errors + 1))
		bgwp_warn "mutation $m: t/032 failed without failing an invariant check: an error of the harness, not a result; the end of its log:"
		tail -n 20 "$WORK/$m.log" | sed 's/^/    /'
	fi
	if [ "$m" = none ]; then
		control=$result
	elif [ "$result" = failed ] || [ "$result" = hung ]; then
		caught=$((caught + 1))
	fi
done
mutants=0
for m in "${MUTATIONS[@]}"; do [ "$m" = none ] || mutants=$((mutants + 1)); done
echo "control: ${control/none-run/not run}; mutations caught: $caught of $mutants; harness errors: $errors"
[ "$errors" -eq 0 ] || exit 2
{ [ "$control" = passed ] || [ "$control" = none-run ]; } && [ "$caught" -eq "$mutants" ]
