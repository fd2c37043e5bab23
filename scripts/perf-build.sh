#!/usr/bin/env bash
# perf-build.sh measures gofault's build pipeline on the etcd profile and the
# cost of instrumentation at run time. Results for docs/performance.md.
#
#   scripts/perf-build.sh build       # analyse + instrument + build, per phase, warm cache
#   scripts/perf-build.sh throughput  # KV throughput: instrumented (no live sites) vs plain
#   scripts/perf-build.sh             # both
#
# Environment: ROUNDS (default 5), OPS (20000), CLIENTS (16), VERSION (the
# profile's target.version unless set), OUT (default bin/perf).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${OUT:-$root/bin/perf}
mkdir -p "$out"
cfg=$root/targets/etcd/gofault.yaml
sets=()
if [[ -n "${VERSION:-}" ]]; then sets=(--set "target.version=$VERSION"); fi

go build -o "$out/gofault" ./cmd/gofault
(cd targets/etcd && go build -o "$out/kvbench" ./kvbench)

build() {
	echo "== warm-up build (fills the build cache)"
	"$out/gofault" build --config "$cfg" "${sets[@]}" -o "$out/etcd" >/dev/null
	echo "== analyse + instrument + build, warm cache"
	/usr/bin/time -f 'wall %e s, max RSS of gofault or any go build child %M KiB' \
		"$out/gofault" build --config "$cfg" "${sets[@]}" -o "$out/etcd" --json | tee "$out/build.json"
	echo "== uninstrumented build, same versions"
	/usr/bin/time -f 'wall %e s' "$out/gofault" build --config "$cfg" "${sets[@]}" --uninstrumented -o "$out/etcd-plain"
	if "$out/gofault" help | grep -q '^  analyze'; then
		echo "== analysis alone (gofault analyze --json)"
		/usr/bin/time -f 'wall %e s, max RSS %M KiB' "$out/gofault" analyze --config "$cfg" "${sets[@]}" --json \
			>"$out/analyze.json" || true
		head -c 600 "$out/analyze.json"; echo
	fi
}

throughput() {
	[[ -x "$out/etcd" && -x "$out/etcd-plain" ]] || build
	echo "== KV throughput, one-node etcd on loopback, binaries alternating"
	"$out/kvbench" -etcd "$out/etcd-plain" -etcd "$out/etcd" \
		-rounds "${ROUNDS:-5}" -ops "${OPS:-20000}" -clients "${CLIENTS:-16}" --json | tee "$out/kvbench.json"
	echo "== summary (ratio of the instrumented binary to the plain one; ≥ 0.9 required)"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [print(f"{s[\"binary\"]}: median {s[\"median_ops_per_sec\"]:.0f} ops/s, ratio {s[\"ratio_to_first\"]:.3f}") for s in d["summary"]]' "$out/kvbench.json"
}

case "${1:-all}" in
build) build ;;
throughput) throughput ;;
all) build; throughput ;;
*) echo "usage: $0 [build|throughput|all]" >&2; exit 2 ;;
esac
