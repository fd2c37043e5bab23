#!/usr/bin/env bash
# Proves the README's commands on a fresh machine: clones the committed HEAD
# of this repository into a temporary directory and runs .ci/run there as CI
# does (CI=true, no standard input) with a fresh HOME, so with an empty Go
# module cache, an empty build cache, no go env file and no staticcheck.
# Everything must come from the Go toolchain and the Go module proxy.
#
#   scripts/fresh-check.sh          clone HEAD, run .ci/run, report the wall time
#   scripts/fresh-check.sh --keep   keep the temporary directory (logs, caches)
#
# Uncommitted changes are not part of the check: commit first. Run it before
# every submission; docs/build.md notes how long it takes.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

keep=
case "${1:-}" in
--keep) keep=1 ;;
"") ;;
*) echo "usage: $0 [--keep]" >&2; exit 2 ;;
esac

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "fresh-check: uncommitted changes are not checked (it clones HEAD $(git rev-parse --short HEAD))" >&2
fi

goroot=$(go env GOROOT)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gofault-fresh.XXXXXX")
cleanup() {
	if [ -n "$keep" ]; then
		echo "fresh-check: kept $tmp"
		return
	fi
	# The module cache is read-only by design; make it removable.
	chmod -R u+w "$tmp" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

git clone --quiet --no-local "$repo" "$tmp/gofault"
# CI clones main with shared/ beside it.
if [ -d "$repo/../shared" ]; then
	cp -r "$repo/../shared" "$tmp/shared"
fi
mkdir -p "$tmp/home" "$tmp/tmp"

echo "fresh-check: $(git rev-parse --short HEAD) in $tmp, HOME=$tmp/home"
start=$(date +%s)
set +e
# A clean environment: only what a CI machine has, a fresh HOME (so the
# default GOPATH, GOMODCACHE, GOCACHE and go env file all start empty) and
# the Go toolchain on PATH.
env -i \
	HOME="$tmp/home" \
	TMPDIR="$tmp/tmp" \
	PATH="$goroot/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
	LANG=C.UTF-8 \
	CI=true \
	bash "$tmp/gofault/.ci/run" </dev/null 2>&1 | tee "$tmp/ci.log"
rc=${PIPESTATUS[0]}
set -e
wall=$(($(date +%s) - start))
printf 'fresh-check: .ci/run exited %d after %dm%02ds (limit for CI: 90m)\n' "$rc" $((wall / 60)) $((wall % 60))
exit "$rc"
