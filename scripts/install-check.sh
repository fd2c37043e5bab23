#!/usr/bin/env bash
# Checks that a user can install gofault with
#   go install github.com/gofault/gofault/cmd/gofault@<version>
# and run a campaign with it, with no checkout of gofault and no replace
# directive anywhere:
#
#   1. scripts/modproxy serves this checkout's modules (root and agent; the
#      files git tracks) from a file-based module proxy, the root at a test
#      version ($GOFAULT_TEST_VERSION) and the agent at the version the root
#      go.mod requires;
#   2. in a fresh HOME with empty GOPATH, GOMODCACHE and GOCACHE it runs
#      go install ...@<test version> through GOPROXY=file://<proxy>,<the usual proxy>;
#   3. it copies examples/minikv out of the checkout (without its go.work),
#      makes it require gofault at the test version, and runs a short
#      campaign there with the installed binary.
#
# Checksums: the test version exists only in the file proxy, so
# sum.golang.org cannot know it (and would refuse it). Nothing is exempted
# from the checksum check instead: scripts/modproxy -sumdb serves a checksum
# database of its own on 127.0.0.1 (signed with a key it makes for the run),
# and GOSUMDB="<its key> <its URL>" makes the go command check every module
# against it. It answers the gofault modules at the served versions from
# the zips it wrote, and every other module by a lookup in sum.golang.org
# through the first module proxy of `go env GOPROXY`, verified against
# sum.golang.org's signed tree with the key the go command has built in (so
# the chain of trust of real modules stays sum.golang.org's); an unknown
# module is refused. Its log (each lookup and its status) is printed when
# the check fails. Every GO* variable of the caller's is unset first, so
# none of them can exempt a module either.
#
#   scripts/install-check.sh     a few minutes (everything is compiled from an
#                                empty build cache; 6.5 min to install alone on
#                                2 cores shared with a load average of 20-30,
#                                3m44s in all at a load average of 11-16)
#   GOFAULT_INSTALLCHECK_DIR=/tmp/ic scripts/install-check.sh
#                                keeps that directory and its caches (debugging;
#                                28 s again with them)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
version=${GOFAULT_TEST_VERSION:-v0.1.0-installcheck}
usual_proxy=$(go env GOPROXY)
if [ -n "${GOFAULT_INSTALLCHECK_DIR:-}" ]; then
	# Debugging: keep the directory (and its caches) for another run.
	tmp=$GOFAULT_INSTALLCHECK_DIR
	mkdir -p "$tmp"
	# This run's checksum database has a new key and a new tree: drop the
	# go command's memory of the last one, and the gofault modules it
	# checked (the checkout may have changed since).
	chmod -R u+w "$tmp/gopath" 2>/dev/null || true
	rm -rf "$tmp/proxy" "$tmp/minikv" "$tmp/work" "$tmp/bin" "$tmp/gosumdb" \
		"$tmp/gopath/pkg/sumdb" "$tmp/gopath/pkg/mod/cache/download/sumdb" \
		"$tmp/gopath/pkg/mod/github.com/gofault" "$tmp/gopath/pkg/mod/cache/download/github.com/gofault"
else
	tmp=$(mktemp -d)
fi
sumdb_pid=
cleanup() {
	status=$?
	if [ -n "$sumdb_pid" ]; then
		kill "$sumdb_pid" 2>/dev/null || true
		wait "$sumdb_pid" 2>/dev/null || true
	fi
	if [ "$status" != 0 ] && [ -f "$tmp/sumdb.log" ]; then
		echo "checksum database log:"
		cat "$tmp/sumdb.log"
	fi
	if [ -z "${GOFAULT_INSTALLCHECK_DIR:-}" ]; then
		chmod -R u+w "$tmp" 2>/dev/null || true
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
step() { printf '\n== %s (%ss)\n' "$*" "$SECONDS"; }

step "module proxy and checksum database of this checkout: github.com/gofault/gofault@$version"
go build -o "$tmp/modproxy" ./scripts/modproxy
"$tmp/modproxy" -dir "$tmp/proxy" -version "$version" -repo "$repo" \
	-sumdb 127.0.0.1:0 -sumdb-file "$tmp/gosumdb" -sumdb-cache "$tmp/sumdb-cache" \
	-goproxy "$usual_proxy" 2>"$tmp/sumdb.log" &
sumdb_pid=$!
for _ in $(seq 600); do
	[ -s "$tmp/gosumdb" ] && break
	kill -0 "$sumdb_pid" 2>/dev/null || { echo "scripts/modproxy exited"; exit 1; }
	sleep 0.1
done
[ -s "$tmp/gosumdb" ] || { echo "scripts/modproxy did not serve its checksum database within 60 s"; exit 1; }
gosumdb=$(cat "$tmp/gosumdb")
echo "GOSUMDB=$gosumdb"

# A fresh Go environment: nothing cached, no settings of this machine's user
# (no GO* variable of the caller's; GOFAULT_* are gofault's own).
while IFS= read -r name; do
	case $name in GOFAULT_*) ;; GO*) unset "$name" ;; esac
done < <(compgen -e)
export HOME="$tmp/home" GOPATH="$tmp/gopath" GOMODCACHE="$tmp/gopath/pkg/mod" \
	GOCACHE="$tmp/cache" GOBIN="$tmp/bin" GOENV=off GOFLAGS= GOWORK=off
export GOPROXY="file://$tmp/proxy,$usual_proxy" GOSUMDB="$gosumdb"
mkdir -p "$HOME"

step "go install github.com/gofault/gofault/cmd/gofault@$version"
(cd "$tmp" && go install "github.com/gofault/gofault/cmd/gofault@$version")
bin="$GOBIN/gofault"
info=$(go version -m "$bin")
echo "$info" | grep -E '^\s+(mod|dep)\s+github.com/gofault/'
echo "$info" | grep -qE "^\s+mod\s+github.com/gofault/gofault\s+$version\s" \
	|| { echo "the installed binary is not github.com/gofault/gofault@$version"; exit 1; }
# The go command checked the test version against the checksum database.
grep -qF "module=github.com/gofault/gofault@$version status=200" "$tmp/sumdb.log" \
	|| { echo "github.com/gofault/gofault@$version was not looked up in the checksum database"; exit 1; }

step "minikv outside the checkout, requiring gofault $version"
mkdir -p "$tmp/minikv"
git -C "$repo" ls-files -z examples/minikv | while IFS= read -r -d '' f; do
	rel=${f#examples/minikv/}
	case "$rel" in go.work | go.work.sum) continue ;; esac
	[ -e "$repo/$f" ] || continue
	mkdir -p "$tmp/minikv/$(dirname "$rel")"
	cp "$repo/$f" "$tmp/minikv/$rel"
done
cd "$tmp/minikv"
# Require the test version first: the go.mod's own version is not published
# yet, and go get would load it before changing it.
go mod edit -require "github.com/gofault/gofault@$version"
go mod tidy
grep -q replace go.mod && { echo "minikv's go.mod has a replace directive"; exit 1; }

step "a short minikv campaign with the installed gofault"
"$bin" run --config gofault.yaml --policy random --trials 2 --json \
	--set "workdir=$tmp/work" --set checkers.baseline=1 --set checkers.rerun_fault_free=-1 >"$tmp/summary.json"
cat "$tmp/summary.json"
field() { grep -oE "\"$1\": *[0-9]+" "$tmp/summary.json" | grep -oE '[0-9]+$'; }
[ "$(field trials)" = 2 ] || { echo "install check: $(field trials) trials, want 2"; exit 1; }
[ "$(field error_trials)" = 0 ] || { echo "install check: $(field error_trials) trials could not run"; exit 1; }
[ "$(field baseline_trials)" = 1 ] || { echo "install check: $(field baseline_trials) baseline trials, want 1"; exit 1; }
step "install check passed"
