#!/usr/bin/env bash
# queue-test.sh runs gofault test --queue on the planted retry bug
# (gotest/testdata/retrystore, RETRYSTORE_BUG=drop) with gofault workers on
# this machine, for docs/gotest.md and docs/distributed.md:
#
#   scripts/queue-test.sh workers N [FLAGS]   N workers (--parallel 1 each):
#       fault trials a minute (fault trials / fault_seconds), FLAGS going
#       to gofault test (default --trials 40)
#   scripts/queue-test.sh resume              two workers; the coordinator
#       (and its embedded server) SIGKILLed once KILLAT (default 16) of
#       its 40 fault trials are stored, then resumed with --resume: the
#       store must hold every trial index once, in order, and the workers
#       must still be running
#
# Environment: OUT (default bin/queue-test: the gofault binary and each
# run's work dir), PORT (default 14333). Needs jq and sqlite3.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${OUT:-$root/bin/queue-test}
port=${PORT:-14333}
q=nats://127.0.0.1:$port
mkdir -p "$out"
go build -o "$out/gofault" ./cmd/gofault
gf=$out/gofault

# workers N DIR: starts N workers, their pids in $pids.
pids=()
start_workers() {
	local i
	for ((i = 0; i < $1; i++)); do
		"$gf" worker --queue "$q" --dir "$2/w$i" --name "w$i" --ack-wait 6s >"$2/w$i.log" 2>&1 &
		pids+=($!)
	done
}
stop_workers() {
	kill -TERM "${pids[@]}" 2>/dev/null || true
	wait "${pids[@]}" 2>/dev/null || true
}
trap stop_workers EXIT

test_flags=(--module "$root/gotest/testdata/retrystore" --env RETRYSTORE_BUG=drop)

case "${1:-}" in
workers)
	n=${2:?workers N}
	shift 2
	[ $# -gt 0 ] || set -- --trials 40
	dir=$(mktemp -d "$out/workers-$n.XXXX")
	start_workers "$n" "$dir"
	"$gf" test --queue "$q" "$@" "${test_flags[@]}" --workdir "$dir/co" --json . >"$dir/co.json" 2>"$dir/co.log"
	jq -r '"\(.trials) fault trials (\(.failed) failed), by worker \(.workers | tostring); fault trials \(.fault_seconds | . * 10 | round / 10) s: \(.trials * 60 / .fault_seconds | round) a minute; campaign \(.seconds | . * 10 | round / 10) s"' "$dir/co.json"
	;;
resume)
	dir=$(mktemp -d "$out/resume.XXXX")
	args=(test --queue "$q" --trials 40 "${test_flags[@]}" --workdir "$dir/co")
	start_workers 2 "$dir"
	"$gf" "${args[@]}" . >/dev/null 2>"$dir/co1.log" &
	co=$!
	until [ "$(grep -c '^trial ' "$dir/co1.log")" -ge "${KILLAT:-16}" ]; do
		kill -0 $co 2>/dev/null || { echo "the coordinator ended before the kill" >&2; exit 1; }
		sleep 0.1
	done
	kill -KILL $co
	wait $co 2>/dev/null || true
	echo "coordinator killed after $(grep -c '^trial ' "$dir/co1.log") fault trials stored"
	sleep 2
	"$gf" "${args[@]}" --resume --json . >"$dir/co2.json" 2>"$dir/co2.log"
	jq -r '"resumed: \(.resumed_trials) fault trials stored before, \(.remote_trials) run now, by worker \(.workers | tostring); \(.trials) in all, \(.failed) failed"' "$dir/co2.json"
	idx=$(sqlite3 "$dir/co/gofault.db" 'select idx from trials order by rowid')
	if [ "$idx" != "$(seq 1 46)" ]; then
		echo "FAIL: stored indices are not 1..46 once each, in order: $(echo $idx)" >&2
		exit 1
	fi
	for p in "${pids[@]}"; do
		kill -0 "$p" || { echo "FAIL: worker $p is gone" >&2; exit 1; }
	done
	echo "ok: trial indices 1..46 stored once each, in order; both workers still running"
	echo "the workers' dropped deliveries of the killed coordinator's trials, by why:"
	grep -h 'trial dropped' "$dir"/w*.log | sed 's/.*why="dropped: \([a-z ]*: [a-z ]*\).*/\1/' | sort | uniq -c
	;;
*)
	echo "usage: $0 workers N [gofault test flags] | resume" >&2
	exit 2
	;;
esac
