#!/usr/bin/env bash
# scripts/test.sh: build bgw_prefetch and run all of its tests.
#
#   sudo bash scripts/test.sh
#
# Steps: install the Debian packages (scripts/install-deps.sh; skipped with
# SKIP_DEPS=1), build with warnings as errors, install into the PostgreSQL 15
# directories, the library's exported symbols (nm -D against exports.txt),
# META.json (test/validate_meta.pl), static checks (cppcheck, clang-tidy
# with the repository's configs; not on 16), unit tests (make check-unit), then "make
# installcheck": the pg_regress tests on a temporary instance and the TAP
# tests under t/; then, on 15 and 17, test/clog_mutation.sh skip_write (the
# CLOG crash loop must fail on a writer that marks pages clean without
# writing them); last,
# test/package.sh (the Debian package built, installed with apt, its
# regression tests run against it, purged).
#
# initdb refuses to run as root, so when started as root everything but the
# package and library install runs as the "postgres" user in a copy of the
# tree under a private temporary directory, removed at the end (KEEP_TMP=1
# keeps it).  PROVE_TESTS="t/001_monitor_basic.pl ..." runs a subset of the
# TAP tests.  On a failure the relevant logs are printed; the exit status is
# non-zero if any step failed, and the last line counts the steps.
#
# It runs once per server major version in PG_VERSIONS (default "15 16 17
# 18"), one after the other, and ends with one line per version: 15 is
# Debian's package, 16-18 are built from source by scripts/build-pg.sh
# (cached: a version already built is not rebuilt) and the extension is
# installed into their prefixes.  On 15 every step runs; on 16-18 the
# package step does not (the package is built for Debian's 15).  Every TAP
# file runs on every version, unless PROVE_TESTS names some.  The exit
# status is non-zero if any version failed.
set -uo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# ---------------------------------------------------------------- versions
# Several versions, or another one than 15: run this script once per
# version (BGWP_TEST_VERSION tells the run which), then summarise.
VERSIONS_ASKED=${PG_VERSIONS:-}
PG_VERSIONS=${PG_VERSIONS:-15 16 17 18}
if [ -z "${BGWP_TEST_VERSION:-}" ] && [ "$PG_VERSIONS" != 15 ]; then
	versions_log=$(mktemp "${TMPDIR:-/tmp}/bgw_prefetch-versions.XXXXXX") ||
		bgwp_die "mktemp failed"
	summary=()
	status=0
	passed=0
	failed=0
	skipped=0
	for v in $PG_VERSIONS; do
		case $v in
			15 | 16 | 17 | 18) ;;
			*) bgwp_die "PG_VERSIONS: PostgreSQL $v is not supported (15, 16, 17, 18)" ;;
		esac
		# Without the sources of 16-18 (a checkout without ../shared/pgsrc)
		# the default run tests what it can; asked for by PG_VERSIONS, or
		# in CI, a version that cannot be built fails.
		if [ "$v" != 15 ] && [ -z "$VERSIONS_ASKED" ] && [ "${CI:-}" != true ] &&
			[ ! -r "$BGWP_PG_SOURCES/postgresql-$v.tar.gz" ] &&
			[ ! -x "$(bgwp_pg_prefix "$v")/bin/pg_config" ]; then
			bgwp_warn "PostgreSQL $v: skipped, no source in $BGWP_PG_SOURCES (set BGWP_PG_SOURCES)"
			skipped=$((skipped + 1))
			summary+=("$(printf '  PostgreSQL %-3s %-5s' "$v" SKIP) no source in $BGWP_PG_SOURCES")
			continue
		fi
		start=$SECONDS
		bgwp_log "PostgreSQL $v: running the test suite"
		BGWP_TEST_VERSION=$v bash "$0" 2>&1 | tee "$versions_log"
		rc=${PIPESTATUS[0]}
		if [ "$rc" -eq 0 ]; then
			passed=$((passed + 1))
		else
			status=1
			failed=$((failed + 1))
		fi
		summary+=("$(printf '  PostgreSQL %-3s %-5s %5ss  %s' "$v" \
			"$([ "$rc" -eq 0 ] && echo PASS || echo FAIL)" $((SECONDS - start)) \
			"$(grep '^steps: ' "$versions_log" | tail -n 1)")")
	done
	rm -f "$versions_log"
	echo
	echo "==================== bgw_prefetch versions summary ===================="
	printf '%s\n' "${summary[@]}"
	if [ "$skipped" -gt 0 ]; then
		echo "versions: $passed passed, $failed failed, $skipped skipped"
	else
		echo "versions: $passed passed, $failed failed"
	fi
	exit "$status"
fi
BGWP_TEST_VERSION=${BGWP_TEST_VERSION:-15}
bgwp_select_pg "$BGWP_TEST_VERSION"

TAP_TESTS_RUN=${PROVE_TESTS:-}

STEP_NAMES=()
STEP_RESULTS=()
STEP_TIMES=()
WORK=
TREE=

# record STEP RESULT: RESULT is PASS, FAIL, or why the step did not run.
# Steps run one after the other: a step's time is the time since the last
# record.
LAST_MARK=$SECONDS
record() {
	local took=$((SECONDS - LAST_MARK))
	LAST_MARK=$SECONDS
	STEP_NAMES+=("$1")
	STEP_RESULTS+=("$2")
	STEP_TIMES+=("${took}s")
	bgwp_log "$1: $2 (${took}s)"
}

cleanup() {
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		bgwp_stop_servers_under "$WORK"
		if [ "${KEEP_TMP:-0}" = 1 ]; then
			bgwp_log "kept $WORK"
		else
			rm -rf "$WORK"
		fi
	fi
}

# Print the step table and the closing line, clean up, exit.
finish() {
	local passed=0 failed=0 skipped=0 i
	echo
	echo "==================== bgw_prefetch test summary ===================="
	for i in "${!STEP_NAMES[@]}"; do
		printf '  %-14s %-8s %s\n' "${STEP_NAMES[$i]}" "${STEP_TIMES[$i]}" "${STEP_RESULTS[$i]}"
		case ${STEP_RESULTS[$i]} in
			PASS) passed=$((passed + 1)) ;;
			FAIL*) failed=$((failed + 1)) ;;
			*) skipped=$((skipped + 1)) ;;
		esac
	done
	cleanup
	trap - EXIT
	if [ "$skipped" -gt 0 ]; then
		echo "steps: $passed passed, $failed failed, $skipped skipped"
	else
		echo "steps: $passed passed, $failed failed"
	fi
	[ "$failed" -eq 0 ] && [ "${#STEP_NAMES[@]}" -gt 0 ]
	exit $?
}

# After a failure that makes the remaining steps pointless.
abort_after() {
	local s
	for s in "$@"; do
		record "$s" "not run"
	done
	finish
}

trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM

# Print a log file (or its last N lines) under a banner.
show_log() {
	local file=$1 lines=${2:-200}
	[ -s "$file" ] || return 0
	echo "---------------- ${file#"$TREE"/} (last $lines lines) ----------------"
	tail -n "$lines" "$file"
}

# ---------------------------------------------------------------- packages
if [ "${SKIP_DEPS:-0}" = 1 ]; then
	record deps "skipped (SKIP_DEPS=1)"
else
	if bash "$BGWP_ROOT/scripts/install-deps.sh"; then
		record deps PASS
	else
		record deps FAIL
		abort_after build install symbols meta cppcheck clang-tidy unit regress tap mutation package
	fi
fi

# A version other than Debian's 15: build it (or find it in the cache).
if [ "$BGWP_PG_MAJOR" != 15 ]; then
	if bash "$BGWP_ROOT/scripts/build-pg.sh" "$BGWP_PG_MAJOR"; then
		record "pg-$BGWP_PG_MAJOR" PASS
	else
		record "pg-$BGWP_PG_MAJOR" FAIL
		abort_after build install symbols meta cppcheck clang-tidy unit regress tap mutation package
	fi
	[ -x "$PG_CONFIG" ] || bgwp_die "$PG_CONFIG not found after scripts/build-pg.sh $BGWP_PG_MAJOR"
fi

[ -x "$PG_CONFIG" ] || bgwp_die "$PG_CONFIG not found: install postgresql-server-dev-15 (or run without SKIP_DEPS=1)"
bgwp_log "PostgreSQL: $("$PG_CONFIG" --version) ($PG_CONFIG)"
if bgwp_is_root; then
	id "$BGWP_PG_USER" >/dev/null 2>&1 || bgwp_die "user $BGWP_PG_USER does not exist (it comes with postgresql-15)"
fi

# ---------------------------------------------------------------- build
WORK=$(bgwp_make_workdir bgw_prefetch-test)
TREE=$WORK/bgw_prefetch
mkdir -p "$TREE"
bgwp_copy_tree "$TREE"
bgwp_log "testing a copy of $BGWP_ROOT in $TREE"

if bgwp_build "$TREE"; then
	record build PASS
else
	record build FAIL
	abort_after install symbols meta cppcheck clang-tidy unit regress tap mutation package
fi

if bgwp_install "$TREE"; then
	record install PASS
else
	record install FAIL
	abort_after symbols meta cppcheck clang-tidy unit regress tap mutation package
fi

# ---------------------------------------------------------------- symbols
# The library exports only the entry points listed in exports.txt: any
# other global symbol could interpose with another preloaded library's
# (libraries are loaded RTLD_GLOBAL).
if diff -u <(grep -v '^#' "$TREE/exports.txt" | sort) \
		<(nm -D --defined-only "$TREE/bgw_prefetch.so" | awk '{print $3}' | sort); then
	record symbols PASS
else
	record symbols FAIL
fi

# ---------------------------------------------------------------- META.json
if (cd "$TREE" && perl test/validate_meta.pl); then
	record meta PASS
else
	record meta FAIL
fi

# ---------------------------------------------------------------- static checks
# Not on 16: every version-specific branch the checks could see there is
# 15's or 17's (compat.h), except one call of GetRelationPath(), which the
# build compiles with warnings as errors.  Each check runs on both cores.
INCLUDEDIR_SERVER=$("$PG_CONFIG" --includedir-server)
if [ "$BGWP_PG_MAJOR" = 16 ]; then
	record cppcheck "skipped (16's code is 15's or 17's)"
	record clang-tidy "skipped (16's code is 15's or 17's)"
else
	# cppcheck checks one configuration, the real build's (gcc on x86-64
	# Linux): that keeps it fast and lets it see that elog(ERROR) and
	# proc_exit() do not return.
	bgwp_log "cppcheck $(cppcheck --version 2>/dev/null)"
	if (cd "$TREE" && cppcheck --quiet --error-exitcode=1 -j 2 \
			--enable=warning,performance,portability \
			--std=c99 --language=c --library=gnu --inline-suppr \
			--suppressions-list=.cppcheck-suppressions \
			-D__GNUC__=12 -D__x86_64__ -D__linux__ \
			-Isrc -I"$INCLUDEDIR_SERVER" src/*.c); then
		record cppcheck PASS
	else
		record cppcheck FAIL
	fi

	# clang-tidy reads .clang-tidy (checks and why some are disabled); two
	# processes, a few files each (xargs fails if any of them does).
	bgwp_log "clang-tidy $(clang-tidy --version 2>/dev/null | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -n 1)"
	tidy_flags="$("$PG_CONFIG" --cppflags) -I$INCLUDEDIR_SERVER -Isrc"
	# shellcheck disable=SC2016
	if (cd "$TREE" && printf '%s\n' src/*.c |
			xargs -P 2 -n 4 sh -c 'exec clang-tidy --quiet "$@" -- '"$tidy_flags" clang-tidy) \
			2> >(grep -v 'warnings\{0,1\} generated\.$' >&2); then
		record clang-tidy PASS
	else
		record clang-tidy FAIL
	fi
fi

# ---------------------------------------------------------------- unit tests
if bgwp_as_pg "$TREE" make -s check-unit; then
	record unit PASS
else
	record unit FAIL
fi

# ---------------------------------------------------------------- make installcheck
# "make installcheck" runs pg_regress (temporary instance, test/regress.conf)
# and then prove on t/*.pl.  It is run in two goes, each disabling the other
# half, so that a pg_regress failure does not hide the TAP results.
# Each half has a time limit, so that a hung server cannot eat the whole of
# a CI run (90 minutes); the normal run takes a few minutes.
if bgwp_as_pg "$TREE" timeout -k 30 1200 make installcheck TAP_TESTS=; then
	record regress PASS
else
	record regress FAIL
	show_log "$TREE/regression.diffs" 400
	show_log "$TREE/log/initdb.log" 50
	show_log "$TREE/log/postmaster.log" 200
fi

tap_args=()
[ -n "$TAP_TESTS_RUN" ] && tap_args+=("PROVE_TESTS=$TAP_TESTS_RUN")
# --timer: each file's time in the output, to see where CI's time goes.
if bgwp_as_pg "$TREE" timeout -k 30 1800 make installcheck REGRESS= PROVE_FLAGS=--timer "${tap_args[@]}" |
		tee "$WORK/tap.out"; then
	record tap PASS
else
	record tap FAIL
	# The logs of the failed test files only (prove's summary names them),
	# else of all of them.
	failed_tests=$(sed -n 's|^t/\([^ ]*\)\.pl  *(Wstat.*|\1|p' "$WORK/tap.out" | sort -u)
	if [ -z "$failed_tests" ]; then
		for f in "$TREE"/tmp_check/log/regress_log_*; do
			[ -e "$f" ] && failed_tests+=" ${f##*/regress_log_}"
		done
	fi
	for t in $failed_tests; do
		show_log "$TREE/tmp_check/log/regress_log_$t" 300
		for f in "$TREE/tmp_check/log/${t}"_*.log; do
			[ -e "$f" ] && show_log "$f" 150
		done
	done
fi

# ---------------------------------------------------------------- mutation
# Does the CLOG crash loop catch a broken writer?  test/clog_mutation.sh
# installs a build whose writer marks pages clean without writing them,
# runs t/032 against it (it must fail), and reinstalls this tree's build.
# Once per CLOG SLRU layout: 15's (one control lock, 15 and 16) and 17's
# (banks, 17 and 18), where the writer's code differs (compat.h).  Not when
# PROVE_TESTS chose the TAP files; only as root.
if [ -n "${PROVE_TESTS:-}" ]; then
	record mutation "skipped (PROVE_TESTS)"
elif [ "$BGWP_PG_MAJOR" = 16 ] || [ "$BGWP_PG_MAJOR" = 18 ]; then
	record mutation "skipped (the CLOG layout of $((BGWP_PG_MAJOR - 1)), tested there)"
elif ! bgwp_is_root; then
	record mutation "skipped (needs root)"
elif bash "$BGWP_ROOT/test/clog_mutation.sh" skip_write; then
	record mutation PASS
else
	record mutation FAIL
fi

# ---------------------------------------------------------------- package
# The Debian package: built with dpkg-buildpackage, installed with apt, its
# regression tests run against it, purged (test/package.sh).  Debian's own
# PostgreSQL 15 only, as root, with the whole suite.
if [ -n "${PROVE_TESTS:-}" ]; then
	record package "skipped (PROVE_TESTS)"
elif ! bgwp_is_root; then
	record package "skipped (needs root)"
elif [ "$BGWP_PG_MAJOR" != 15 ]; then
	record package "skipped (PostgreSQL $BGWP_PG_MAJOR is not Debian's)"
elif bash "$BGWP_ROOT/test/package.sh"; then
	record package PASS
else
	record package FAIL
fi

finish
