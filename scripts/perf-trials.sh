#!/usr/bin/env bash
# perf-trials.sh measures what a gofault trial costs on the etcd profile,
# for docs/performance.md:
#   1. bare: start 3 plain etcd members by hand, wait until healthy, run the
#      workload (no controller), stop the members — what any harness pays;
#   2. gofault trials with --parallel 1 and --parallel 2: median trial time
#      and trials per hour (build time excluded).
#
# Environment: ROUNDS (bare rounds, default 5), TRIALS (per gofault run,
# default 8), OUT (default bin/perf).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${OUT:-$root/bin/perf}
rounds=${ROUNDS:-5}
trials=${TRIALS:-8}
mkdir -p "$out"
cfg=$root/targets/etcd/gofault.yaml

go build -o "$out/gofault" ./cmd/gofault
"$out/gofault" build --config "$cfg" --uninstrumented -o "$out/etcd-plain" >/dev/null
(cd targets/etcd && go build -o "$out/etcd-workload" ./workload)

bare_round() {
	local dir; dir=$(mktemp -d)
	local base=$((20000 + RANDOM % 20000))
	local cluster="" i
	for i in 1 2 3; do cluster+="${cluster:+,}n$i=http://127.0.0.1:$((base + 2*i + 1))"; done
	local start; start=$(date +%s.%N)
	local pids=()
	for i in 1 2 3; do
		"$out/etcd-plain" --name "n$i" --data-dir "$dir/n$i" \
			--listen-client-urls "http://127.0.0.1:$((base + 2*i))" --advertise-client-urls "http://127.0.0.1:$((base + 2*i))" \
			--listen-peer-urls "http://127.0.0.1:$((base + 2*i + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((base + 2*i + 1))" \
			--initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token bare \
			--heartbeat-interval 100 --election-timeout 1000 --log-level warn >"$dir/n$i.log" 2>&1 &
		pids+=($!)
	done
	for i in 1 2 3; do
		until curl -sf "http://127.0.0.1:$((base + 2*i))/health" >/dev/null 2>&1; do sleep 0.05; done
	done
	local ready; ready=$(date +%s.%N)
	GOFAULT_NODES="[{\"name\":\"n1\",\"ports\":{\"client\":$((base + 2))}},{\"name\":\"n2\",\"ports\":{\"client\":$((base + 4))}},{\"name\":\"n3\",\"ports\":{\"client\":$((base + 6))}}]" \
		GOFAULT_SEED=1 ETCD_WORKLOAD_DURATION=5s "$out/etcd-workload" >/dev/null
	local worked; worked=$(date +%s.%N)
	for p in "${pids[@]}"; do kill -TERM "$p"; wait "$p" 2>/dev/null || true; done
	local stopped; stopped=$(date +%s.%N)
	rm -rf "$dir"
	printf 'bare: start %.2fs, workload %.2fs, stop %.2fs, total %.2fs\n' \
		"$(echo "$ready - $start" | bc)" "$(echo "$worked - $ready" | bc)" "$(echo "$stopped - $worked" | bc)" "$(echo "$stopped - $start" | bc)"
}

echo "== bare cluster start + workload + stop, $rounds rounds"
for _ in $(seq "$rounds"); do bare_round; done

for p in 1 2; do
	echo "== gofault run --trials $trials --parallel $p"
	work=$(mktemp -d)
	"$out/gofault" run --config "$cfg" --set "workdir=$work" --trials "$trials" --parallel "$p" --json >"$out/run-p$p.json"
	python3 - "$out/run-p$p.json" "$trials" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
n = s["trials"] + s["baseline_trials"]
run = s["seconds"] - s["build_seconds"]
print(f'median trial {s["median_trial_seconds"]:.2f}s; {n} trials in {run:.1f}s (build excluded) = {3600*n/run:.0f} trials/hour; '
      f'{s["injected_trials"]} injected, {s["findings"]} findings')
PY
	rm -rf "$work"
done
