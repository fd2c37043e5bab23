#!/usr/bin/env bash
# Runs every test of gofault: vet and tests of its seven Go modules (gofault,
# the stdlib-only agent, the etcd, hashicorp/raft, NATS and Consul targets,
# the minikv example), the race
# detector on the packages with concurrency, a short run of the protocol fuzz
# target, and the end-to-end tests: instrumented etcd builds, a real 3-member
# etcd cluster, real gofault campaigns on etcd, on hashicorp/raft (about a minute),
# on NATS JetStream (about two minutes), on Consul (about three minutes,
# most of it building Consul) and on the planted-bug example.
#
#   scripts/test.sh            everything (about 43 minutes on 2 cores from a
#                              fresh clone; minikv's planted-bug campaigns,
#                              two at a time, about 17.5 of them, the
#                              oracles' fast set and the exported
#                              regression test included)
#   GOFAULT_SHORT=1 scripts/test.sh   unit tests only (-short)
#   GOFAULT_LONG=1 scripts/test.sh    also the long campaigns (minikv's
#                                     targeted ones and their controls, e.g.
#                                     waitall: 2 × 50 random trials of 6 s;
#                                     about an hour more)
set -euo pipefail
cd "$(dirname "$0")/.."

short=()
[ -n "${GOFAULT_SHORT:-}" ] && short=(-short)

step() { printf '\n== %s\n' "$*"; }

step "gofmt, go vet, staticcheck"
unformatted=$(gofmt -l $(git ls-files '*.go' | grep -v '/testdata/') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
	echo "not gofmt'ed:"; echo "$unformatted"; exit 1
fi
# staticcheck, pinned, built from the module proxy into the Go bin dir.
staticcheck="$(go env GOPATH)/bin/staticcheck"
if ! "$staticcheck" -version 2>/dev/null | grep -q "(0.8.2)"; then
	GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
for m in . agent targets/etcd targets/raft targets/nats targets/consul examples/minikv; do
	# targets/consul keeps its replace directives and no go.work (it is
	# loaded in single-module mode only; see docs/build.md).
	gowork=; [ "$m" = targets/consul ] && gowork=off
	(cd "$m" && GOWORK=$gowork go vet ./... && GOWORK=$gowork "$staticcheck" ./...)
done

step "agent module (race detector), protocol fuzzing"
(cd agent && go test -race -count=1 ./...)
(cd agent && go test -run '^$' -fuzz FuzzReader -fuzztime 10s ./wire)

step "gofault module"
go test -count=1 -timeout 40m "${short[@]}" ./...

step "race detector on the concurrent packages"
go test -race -short -count=1 ./controller ./policy ./cluster ./workload ./store ./campaign ./fleet ./gotest

step "etcd target module"
(cd targets/etcd && go test -count=1 -timeout 20m "${short[@]}" ./...)

step "hashicorp/raft target module (a fault-free and a random campaign)"
(cd targets/raft && go test -count=1 -timeout 10m "${short[@]}" ./...)

step "NATS JetStream target module (a fault-free and a random campaign)"
(cd targets/nats && go test -count=1 -timeout 15m "${short[@]}" ./...)

step "Consul target module (a fault-free and a random campaign)"
(cd targets/consul && GOWORK=off go test -count=1 -timeout 15m "${short[@]}" ./...)

step "bundled example (minikv, planted bugs)"
# 17.5 minutes measured on 2 cores (fresh-check, 2026-12-06; 33 when
# its campaigns ran one at a time), the oracles' fast set
# (TestCampaigns/oracle/...) and TestExportGoTest included: the campaigns
# run two at a time (t.Parallel), as they mostly wait. 40 leaves room for
# a slower machine; the long campaigns add about an hour.
minikv_timeout=40m
[ -n "${GOFAULT_LONG:-}" ] && minikv_timeout=120m
(cd examples/minikv && go test -count=1 -timeout "$minikv_timeout" "${short[@]}" ./...)
