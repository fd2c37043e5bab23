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
# Checksums: the test version exists only in the file proxy, so the checksum
# database cannot know it (and would refuse it). GONOSUMDB names only the
# gofault modules (github.com/gofault/gofault and the modules under it); every
# other module is still checked against the checksum database as usual.
# GOPRIVATE is not used: it would also make the go command bypass the proxy.
#
#   scripts/install-check.sh     a few minutes (everything is compiled from an
#                                empty build cache; 6.5 min to install alone on
#                                2 cores shared with a load average of 20-30)
#   GOFAULT_INSTALLCHECK_DIR=/tmp/ic scripts/install-check.sh
#                                keeps that directory and its caches (debugging)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
version=${GOFAULT_TEST_VERSION:-v0.1.0-installcheck}
usual_proxy=$(go env GOPROXY)
if [ -n "${GOFAULT_INSTALLCHECK_DIR:-}" ]; then
	# Debugging: keep the directory (and its caches) for another run.
	tmp=$GOFAULT_INSTALLCHECK_DIR
	rm -rf "$tmp/proxy" "$tmp/minikv" "$tmp/work" "$tmp/bin"
	mkdir -p "$tmp"
else
	tmp=$(mktemp -d)
	cleanup() { chmod -R u+w "$tmp" 2>/dev/null || true; rm -rf "$tmp"; }
	trap cleanup EXIT
fi
step() { printf '\n== %s (%ss)\n' "$*" "$SECONDS"; }

step "module proxy of this checkout: github.com/gofault/gofault@$version"
go run ./scripts/modproxy -dir "$tmp/proxy" -version "$version" -repo "$repo"

# A fresh Go environment: nothing cached, no settings of this machine's user.
export HOME="$tmp/home" GOPATH="$tmp/gopath" GOMODCACHE="$tmp/gopath/pkg/mod" \
	GOCACHE="$tmp/cache" GOBIN="$tmp/bin" GOENV=off GOFLAGS= GOWORK=off
export GOPROXY="file://$tmp/proxy,$usual_proxy"
export GONOSUMDB=github.com/gofault/gofault
unset GOPRIVATE GONOPROXY GONOSUMCHECK GOINSECURE 2>/dev/null || true
mkdir -p "$HOME"

step "go install github.com/gofault/gofault/cmd/gofault@$version"
(cd "$tmp" && go install "github.com/gofault/gofault/cmd/gofault@$version")
bin="$GOBIN/gofault"
info=$(go version -m "$bin")
echo "$info" | grep -E '^\s+(mod|dep)\s+github.com/gofault/'
echo "$info" | grep -qE "^\s+mod\s+github.com/gofault/gofault\s+$version\s" \
	|| { echo "the installed binary is not github.com/gofault/gofault@$version"; exit 1; }

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
