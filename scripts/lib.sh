# scripts/lib.sh: shell helpers shared by install-deps.sh, test.sh and demo.sh.
# shellcheck shell=bash
# Sourced, not run.  Needs bash.

# The PostgreSQL major version bgw_prefetch is built and tested for by
# default: Debian's package.
BGWP_PG_MAJOR=15
BGWP_PG_BINDIR=/usr/lib/postgresql/$BGWP_PG_MAJOR/bin
# Always the version-15 pg_config, even if other server versions are installed.
PG_CONFIG=${PG_CONFIG:-$BGWP_PG_BINDIR/pg_config}
export PG_CONFIG

# Versions 16-18 are built from source by scripts/build-pg.sh, one prefix
# per version under BGWP_PG_CACHE, from the tarballs in BGWP_PG_SOURCES.
BGWP_PG_CACHE=${BGWP_PG_CACHE:-/var/cache/bgw_prefetch}
# shared/ lies beside the checkout (as on the developers' machines and in CI).
BGWP_PG_SOURCES=${BGWP_PG_SOURCES:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/shared/pgsrc}

# The installation prefix of major version $1 (Debian's for 15).
bgwp_pg_prefix() {
	if [ "$1" = 15 ]; then
		printf '%s\n' /usr/lib/postgresql/15
	else
		printf '%s\n' "$BGWP_PG_CACHE/pg-$1"
	fi
}

# Make major version $1 the one the other helpers build, install and test
# against: sets BGWP_PG_MAJOR, BGWP_PG_BINDIR and PG_CONFIG.
bgwp_select_pg() {
	BGWP_PG_MAJOR=$1
	BGWP_PG_BINDIR=$(bgwp_pg_prefix "$1")/bin
	PG_CONFIG=$BGWP_PG_BINDIR/pg_config
	export PG_CONFIG
}

# The unprivileged user that runs the servers (initdb refuses root); created
# by the postgresql-15 package.
BGWP_PG_USER=${BGWP_PG_USER:-postgres}

# Repository root (the directory above scripts/).
BGWP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

bgwp_log() { printf '==> %s\n' "$*"; }
bgwp_warn() { printf 'WARNING: %s\n' "$*" >&2; }
bgwp_die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

bgwp_is_root() { [ "$(id -u)" -eq 0 ]; }

# Run a command as root: directly when we are root, else through sudo.
bgwp_as_root() {
	if bgwp_is_root; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		bgwp_die "need root for: $* (run this script with sudo)"
	fi
}

# Run a command as the server user when we are root, else as ourselves.
# HOME points into the work directory so that nothing tries to use /root.
# Extra environment is passed as NAME=value words before the command:
#   bgwp_as_pg DIR [NAME=value ...] command args...
bgwp_as_pg() {
	local dir=$1
	shift
	if bgwp_is_root; then
		(cd "$dir" && runuser -u "$BGWP_PG_USER" -- env HOME="$dir" PG_CONFIG="$PG_CONFIG" "$@")
	else
		(cd "$dir" && env HOME="${HOME:-$dir}" PG_CONFIG="$PG_CONFIG" "$@")
	fi
}

# Make a private temporary directory that the server user owns.
#   bgwp_make_workdir PREFIX  -> prints the path
bgwp_make_workdir() {
	local dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || bgwp_die "mktemp failed"
	if bgwp_is_root; then
		chown "$BGWP_PG_USER": "$dir" || bgwp_die "cannot chown $dir to $BGWP_PG_USER"
	fi
	printf '%s\n' "$dir"
}

# Stop at once every server whose data directory is under DIR, and only
# those: what a test or script interrupted at the wrong moment leaves
# running.
bgwp_stop_servers_under() {
	local dir=$1 pidfile
	while IFS= read -r pidfile; do
		bgwp_as_pg "$dir" "$BGWP_PG_BINDIR/pg_ctl" -D "${pidfile%/postmaster.pid}" \
			-m immediate -w stop >/dev/null 2>&1 || true
	done < <(find "$dir" -name postmaster.pid 2>/dev/null)
}

# Copy the source tree (without .git and build or test outputs) into DIR,
# owned by the server user, so that it can build and write test output
# there whatever the permissions of the checkout are.
bgwp_copy_tree() {
	local dest=$1
	tar -C "$BGWP_ROOT" \
		--exclude=./.git --exclude='./tmp_check*' --exclude=./results \
		--exclude=./log --exclude='./regression.*' \
		--exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=./exports.list \
		-cf - . | tar -C "$dest" -xf - || bgwp_die "cannot copy the tree to $dest"
	if bgwp_is_root; then
		chown -R "$BGWP_PG_USER": "$dest" || bgwp_die "cannot chown $dest"
	fi
}

# Build the copy of the tree in DIR (as the server user; PG_CFLAGS in the
# Makefile makes every warning an error), without stale unit-test binaries.
bgwp_build() {
	bgwp_as_pg "$1" make -s -j"$(nproc)" && bgwp_as_pg "$1" make -s -C test/unit clean
}

# Install the library and the extension files into the PostgreSQL 15
# directories (needs root).
bgwp_install() {
	bgwp_as_root make -s -C "$1" install PG_CONFIG="$PG_CONFIG"
}
