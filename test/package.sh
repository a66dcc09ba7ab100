#!/usr/bin/env bash
# test/package.sh: build the Debian package the way apt.postgresql.org builds
# extensions (debian/, pg_buildext), install it with apt, run the regression
# tests against the installed package (debian/tests/installcheck: pg_buildext
# installcheck), and purge it.  The machine is left as it was: the package is
# purged on any exit, and the checkout's own build, which "make install" had
# put where the package's files go, is installed again.
#
#   bash test/package.sh        (as root: apt; the build and the tests run as
#                                the server user, as initdb requires)
#
# Needs the packages of scripts/install-deps.sh (debhelper and
# postgresql-server-dev-all among them).  Takes about a minute.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

bgwp_is_root || bgwp_die "run as root: the package is installed and purged with apt"

version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$BGWP_ROOT/debian/changelog")
upstream=${version%-*}
arch=$(dpkg --print-architecture)
package=postgresql-$BGWP_PG_MAJOR-bgw-prefetch
deb=${package}_${version}_${arch}.deb

WORK=$(bgwp_make_workdir bgwp_package)
SRC=$WORK/bgw-prefetch-$upstream
cleanup() {
	if [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" = installed ]; then
		bgwp_log "package: purging $package"
		apt-get purge -y -qq "$package" >/dev/null || bgwp_warn "could not purge $package"
	fi
	bgwp_log "package: reinstalling the checkout's build"
	mkdir -p "$WORK/own" && bgwp_copy_tree "$WORK/own" && bgwp_build "$WORK/own" &&
		bgwp_install "$WORK/own" || bgwp_warn "could not reinstall the checkout's build"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM

mkdir -p "$SRC"
bgwp_copy_tree "$SRC"
bgwp_log "package: dpkg-buildpackage -us -uc -b in $SRC"
bgwp_as_pg "$SRC" dpkg-buildpackage -us -uc -b >"$WORK/build.log" 2>&1 || {
	tail -n 80 "$WORK/build.log"
	bgwp_die "dpkg-buildpackage failed"
}
[ -f "$WORK/$deb" ] || bgwp_die "dpkg-buildpackage did not make $deb: $(ls "$WORK")"
bgwp_log "package: built $deb"

# What it installs: the module, its control and SQL files (read whole
# first: with pipefail, "dpkg-deb | grep -q" fails when grep stops early).
contents=$(dpkg-deb -c "$WORK/$deb" | awk '{print $6}')
grep -E '\.(so|control|sql)$' <<<"$contents" | sort
for f in "lib/postgresql/$BGWP_PG_MAJOR/lib/bgw_prefetch.so" \
	"share/postgresql/$BGWP_PG_MAJOR/extension/bgw_prefetch.control" \
	"share/postgresql/$BGWP_PG_MAJOR/extension/bgw_prefetch--1.0.sql"; do
	grep -qx "\./usr/$f" <<<"$contents" || bgwp_die "$deb lacks /usr/$f"
done

bgwp_log "package: apt-get install $deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$WORK/$deb" >/dev/null
[ "$(dpkg-query -W -f='${db:Status-Status}' "$package")" = installed ] ||
	bgwp_die "$package is not installed"

bgwp_log "package: debian/tests/installcheck against the installed package"
bgwp_as_pg "$SRC" sh debian/tests/installcheck
bgwp_log "package: passed"
