#!/usr/bin/env bash
# scripts/build-pg.sh: build PostgreSQL servers of other major versions from
# source, for testing bgw_prefetch against them.
#
#   sudo bash scripts/build-pg.sh 16 17 18
#
# PostgreSQL 15 is Debian's package (scripts/install-deps.sh); 16, 17 and 18
# are built from the git-archive tarballs of their stable branches in
# $BGWP_PG_SOURCES (default ../shared/pgsrc/postgresql-N.tar.gz beside the checkout).  Each
# version is installed into its own prefix $BGWP_PG_CACHE/pg-N (default
# /var/cache/bgw_prefetch/pg-N) with the contrib modules the tests use
# (CONTRIB_MODULES), PGXS and the TAP test modules (PostgreSQL::Test::Cluster under
# lib/postgresql/pgxs/src/test/perl, where PGXS's prove_installcheck looks
# for them).
#
# The build is cached: the prefix holds a stamp with the tarball's sha256 and
# the configure options, and a version whose stamp matches is not rebuilt.
# Release-like build (no assertions) with debug symbols; --with-liburing where
# the version has it (18).  Needs root for the Debian build dependencies; the
# server binaries are later run as the postgres user (scripts/lib.sh), so the
# prefix is world-readable.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

BUILD_PACKAGES=(build-essential bison flex pkg-config libreadline-dev libicu-dev
	zlib1g-dev liburing-dev libipc-run-perl)
# The contrib modules the tests and benchmarks use
CONTRIB_MODULES=(amcheck pg_buffercache pg_prewarm pg_visibility)

[ $# -gt 0 ] || bgwp_die "usage: $0 VERSION... (16, 17 or 18)"

# Install the build dependencies that are missing (nothing when all are).
install_build_deps() {
	local missing=() p
	for p in "${BUILD_PACKAGES[@]}"; do
		if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ]; then
			missing+=("$p")
		fi
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	bgwp_log "build-pg: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	bgwp_as_root apt-get update -qq
	bgwp_as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The configure options of version $2 from tarball $1: --with-liburing only
# where its configure offers it (read from the tarball, not unpacked; read
# whole first: with pipefail, "tar | grep -q" fails when grep stops early).
configure_options() {
	local opts=(--enable-tap-tests --enable-debug --with-icu --with-readline)
	local configure
	configure=$(tar -xzOf "$1" "postgresql-$2/configure") ||
		bgwp_die "$1 has no postgresql-$2/configure"
	if grep -q -- '--with-liburing' <<<"$configure"; then
		opts+=(--with-liburing)
	fi
	printf '%s\n' "${opts[@]}"
}

# Build and install version $1 unless its stamp matches.
build_one() {
	local v=$1
	local tarball=$BGWP_PG_SOURCES/postgresql-$v.tar.gz
	local prefix build stamp sum opts want start pgxs
	prefix=$(bgwp_pg_prefix "$v")
	build=$BGWP_PG_CACHE/build-$v
	stamp=$prefix/.bgwp-build-stamp

	if [ ! -r "$tarball" ] && [ -x "$prefix/bin/pg_config" ]; then
		bgwp_log "build-pg: no $tarball; using the build in $prefix ($("$prefix/bin/pg_config" --version))"
		return 0
	fi
	[ -r "$tarball" ] || bgwp_die "no source for PostgreSQL $v: $tarball is missing"
	sum=$(sha256sum "$tarball" | cut -d' ' -f1)

	mapfile -t opts < <(configure_options "$tarball" "$v")
	want="sha256=$sum configure=${opts[*]}"

	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$prefix/bin/pg_config" ]; then
		bgwp_log "build-pg: PostgreSQL $v is up to date in $prefix ($("$prefix/bin/pg_config" --version))"
		return 0
	fi

	start=$SECONDS
	rm -rf "$build"
	mkdir -p "$build"
	tar -C "$build" -xzf "$tarball"
	[ -x "$build/postgresql-$v/configure" ] ||
		bgwp_die "$tarball does not unpack to postgresql-$v/"
	bgwp_log "build-pg: building PostgreSQL $v into $prefix (${opts[*]})"
	rm -rf "$prefix"
	(
		cd "$build/postgresql-$v"
		./configure --prefix="$prefix" "${opts[@]}" >"$build/configure.log" 2>&1 ||
			{ tail -n 40 "$build/configure.log"; exit 1; }
		# the server, its programs, the TAP modules and the contrib
		# modules the tests use, not the whole world
		{ make -s -j"$(nproc)" &&
			for m in "${CONTRIB_MODULES[@]}"; do make -s -j"$(nproc)" -C "contrib/$m" || exit 1; done; } \
			>"$build/make.log" 2>&1 ||
			{ tail -n 60 "$build/make.log"; exit 1; }
		{ make -s install &&
			for m in "${CONTRIB_MODULES[@]}"; do make -s -C "contrib/$m" install || exit 1; done; } \
			>"$build/install.log" 2>&1 ||
			{ tail -n 40 "$build/install.log"; exit 1; }
	) || bgwp_die "build of PostgreSQL $v failed (logs in $build)"

	# PGXS's prove_installcheck runs prove -I $(top_srcdir)/src/test/perl,
	# top_srcdir being the directory pgxs.mk is in, two levels up.
	pgxs=$("$prefix/bin/pg_config" --pgxs)
	pgxs=${pgxs%/src/makefiles/pgxs.mk}
	[ -f "$pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm" ] ||
		bgwp_die "PostgreSQL $v: the TAP modules were not installed under $pgxs"
	chmod -R a+rX "$prefix"
	printf '%s\n' "$want" >"$stamp"
	rm -rf "$build"
	bgwp_log "build-pg: PostgreSQL $v built in $((SECONDS - start))s: $("$prefix/bin/pg_config" --version)"
}

install_build_deps
mkdir -p "$BGWP_PG_CACHE"
for v in "$@"; do
	case $v in
		16 | 17 | 18) ;;
		*) bgwp_die "PostgreSQL $v: only 16, 17 and 18 are built from source (15 is Debian's package)" ;;
	esac
	# One build of a version at a time (two test runs may ask at once).
	exec 9>"$BGWP_PG_CACHE/pg-$v.lock"
	flock 9
	build_one "$v"
	exec 9>&-
done
