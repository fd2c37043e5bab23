#!/usr/bin/env bash
# N13 (../README.md): nats-server answers "stream not found" to a message
# delete, get or purge of a stream whose assignment the meta leader holds
# only in flight (proposed, not yet applied), while the stream's own
# server already created it and answered its create.
#
#   targets/nats/repro/inflight/run.sh [VERSION]    (default v2.15.3)
#
# Copies nats-server VERSION from the Go module proxy into a temporary
# directory, adds gofault_inflight_test.go.in to its server package and
# runs that test (it fails while the bug is there), then again with
# fix.patch applied (it passes). About 3 minutes of compiling per run on
# 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-v2.15.3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nats-inflight.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
dir=$(go mod download -json "github.com/nats-io/nats-server/v2@$version" | grep '"Dir"' | cut -d'"' -f4)
cp -r "$dir" "$tmp/nats-server"
chmod -R u+w "$tmp/nats-server"
cp "$here/gofault_inflight_test.go.in" "$tmp/nats-server/server/gofault_inflight_test.go"
cd "$tmp/nats-server"
run() {
	GOTOOLCHAIN=local go test -count=1 -run TestGofaultAPIDuringInflightCreate -v ./server 2>&1 |
		grep -E '^(--- |    --- |ok|FAIL)|gofault_inflight_test.go:' || true
}
echo "== nats-server $version as released: msg-delete, msg-get and stream-purge answer \"stream not found\""
run
echo "== nats-server $version with fix.patch: every answer ok"
git apply "$here/fix.patch"
run
