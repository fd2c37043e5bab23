#!/usr/bin/env bash
# perf-build.sh measures gofault's build pipeline on the etcd profile and the
# cost of instrumentation at run time. Results for docs/performance.md.
#
#   scripts/perf-build.sh build       # analyse + instrument + build, per phase, warm cache
#   scripts/perf-build.sh throughput  # KV throughput: instrumented (no live sites) vs plain
#   scripts/perf-build.sh coverage    # KV throughput: instrumented with and without coverage counters vs plain
#   scripts/perf-build.sh             # build and throughput
#
# Environment: ROUNDS (default 5), OPS (20000), CLIENTS (16), VERSION (the
# profile's target.version unless set), OUT (default bin/perf), ETCD_FLAGS
# (extra kvbench flags, e.g. "-etcd-flag=--unsafe-no-fsync").
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
	# A byte-identical copy of the plain binary, run as a third binary,
	# shows how much of a difference is noise (an A/A comparison).
	cp "$out/etcd-plain" "$out/etcd-plain-copy"
	kvbench "$out/etcd-plain" "$out/etcd" "$out/etcd-plain-copy"
}

# coverage compares the instrumented binary (coverage counters on, the
# default) with one built with faults.coverage: false, the plain binary and
# its copy.
coverage() {
	echo "== instrumented build without coverage counters (faults.coverage=false)"
	"$out/gofault" build --config "$cfg" "${sets[@]}" --set faults.coverage=false -o "$out/etcd-nocover" --json >"$out/build-nocover.json"
	echo "== instrumented build with coverage counters"
	"$out/gofault" build --config "$cfg" "${sets[@]}" -o "$out/etcd" --json >"$out/build.json"
	python3 -c 'import json,sys; [print(f, json.load(open(f)).get("stats", {}).get("blocks")) for f in sys.argv[1:]]' "$out/build-nocover.json" "$out/build.json" || true
	[[ -x "$out/etcd-plain" ]] || "$out/gofault" build --config "$cfg" "${sets[@]}" --uninstrumented -o "$out/etcd-plain"
	cp "$out/etcd-plain" "$out/etcd-plain-copy"
	kvbench "$out/etcd-plain" "$out/etcd-nocover" "$out/etcd" "$out/etcd-plain-copy"
}

# kvbench runs the KV benchmark over the given binaries, alternating, and
# prints every run and the summary; the first binary is the reference.
kvbench() {
	local args=()
	for b in "$@"; do args+=(-etcd "$b"); done
	echo "== KV throughput, one-node etcd on loopback, binaries alternating"
	"$out/kvbench" "${args[@]}" \
		-rounds "${ROUNDS:-5}" -ops "${OPS:-20000}" -clients "${CLIENTS:-16}" ${ETCD_FLAGS:-} --json >"$out/kvbench.json"
	echo "== summary (ratios to the first binary)"
	python3 - "$out/kvbench.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["runs"]:
    print(f'  round {r["round"]} {r["binary"].rsplit("/", 1)[-1]:16} {r["ops_per_sec"]:8.0f} ops/s  p50 {r["p50_ms"]:.2f} ms  p99 {r["p99_ms"]:.2f} ms  cpu {r.get("cpu_per_op_us", 0):.1f} us/op')
for s in d["summary"]:
    print(f'{s["binary"].rsplit("/", 1)[-1]:16} median {s["median_ops_per_sec"]:8.0f} ops/s  ratio {s["ratio_to_first"]:.3f}  '
          f'paired ratio {s["paired_ratio_to_first"]:.3f}  cpu {s["median_cpu_per_op_us"]:.1f} us/op (ratio {s["cpu_ratio_to_first"]:.3f})')
PY
}

case "${1:-all}" in
build) build ;;
throughput) throughput ;;
coverage) coverage ;;
all) build; throughput ;;
*) echo "usage: $0 [build|throughput|coverage|all]" >&2; exit 2 ;;
esac
