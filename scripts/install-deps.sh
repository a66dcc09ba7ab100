#!/usr/bin/env bash
# scripts/install-deps.sh: install what building, testing and demonstrating
# bgw_prefetch needs on Debian 12 (bookworm).  Idempotent: when everything is
# already installed it does nothing.  Needs root (or sudo).
#
# Installing postgresql-15 on a fresh machine makes Debian create and start a
# cluster "15/main" on port 5432.  bgw_prefetch's tests and demo never use it
# (they run their own throwaway servers), so a cluster that this script's
# install started is stopped again; clusters that were already running are
# left alone.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

PACKAGES=(
	build-essential
	postgresql-15
	postgresql-client-15		# psql, pgbench
	postgresql-server-dev-15	# PGXS, server headers
	postgresql-contrib			# pg_visibility, pg_prewarm for the benchmarks (amcheck is in postgresql-15)
	liburing-dev
	libipc-run-perl				# TAP tests (PostgreSQL::Test::Cluster)
	util-linux-extra			# fincore: page-cache residency in tests and benchmarks
	cppcheck
	clang-tidy
	gnuplot-nox					# benchmark plots
	debhelper					# the Debian package (test/package.sh)
	postgresql-server-dev-all	# pg_buildext's pgxs_loop, for the package
)

missing=()
for p in "${PACKAGES[@]}"; do
	if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ]; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	bgwp_log "dependencies: all ${#PACKAGES[@]} packages already installed"
	exit 0
fi

if ! bgwp_is_root; then
	command -v sudo >/dev/null 2>&1 || bgwp_die "run as root: apt-get install ${missing[*]}"
	exec sudo bash "$0" "$@"
fi

# Online clusters, one "version/name" per line.
online_clusters() {
	if command -v pg_lsclusters >/dev/null 2>&1; then
		pg_lsclusters -h 2>/dev/null | awk '$4 ~ /^online/ { print $1 "/" $2 }'
	fi
}

before=$(online_clusters)

export DEBIAN_FRONTEND=noninteractive
bgwp_log "dependencies: installing ${missing[*]}"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

# Stop only the clusters that this install started.
for c in $(online_clusters); do
	if ! grep -qxF "$c" <<<"$before"; then
		bgwp_log "dependencies: stopping cluster $c started by the package install"
		pg_ctlcluster "${c%%/*}" "${c#*/}" stop || bgwp_warn "could not stop cluster $c"
	fi
done

for p in "${PACKAGES[@]}"; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
		bgwp_die "package $p is still not installed"
done
[ -x "$PG_CONFIG" ] || bgwp_die "$PG_CONFIG not found after install"
bgwp_log "dependencies: installed"
