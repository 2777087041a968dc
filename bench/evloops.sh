#!/usr/bin/env bash
# bench/evloops.sh: the event-loop engine's two targets (issue 17, "within
# one machine"), end to end in about 3.5 minutes on 2 vCPUs:
#
#   1. full speed, paired: wrk -t2 -c50 -d6s, schedscope load --users 50
#      --duration 6s (the event loops) and --engine goroutines, against the
#      same bench/hello target, RUNS_FULL rounds (default 3) in rotating
#      order; prints medians and each tool's median per-run ratio to wrk
#      ("paired"), 2xx/s and CPU us/req;
#   2. open model: schedscope load --rate 20000 --duration 10s --warmup 2s,
#      RUNS_OPEN runs (default 10) on one target warmed up once; prints the
#      send lag p99 of every run and in how many it was under 1 ms with every
#      request sent.
#
# Run from anywhere in the repository; needs Go and wrk (apt-get install
# wrk). BASE=<commit> also builds that commit's schedscope and runs it as
# schedscope-base in both experiments; ONE_LOOP=1 adds schedscope --procs 1
# (one event loop) to both. Each doubles the open model's time.
# Quote the load average it prints with the figures.
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
command -v wrk >/dev/null || { echo "evloops.sh: wrk not found (apt-get install wrk)" >&2; exit 1; }
runs_full=${RUNS_FULL:-3}
runs_open=${RUNS_OPEN:-10}
full_tools=wrk,schedscope,schedscope-goroutines
open_tools=schedscope
base=()
if [ -n "${BASE:-}" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git archive "$BASE" | tar -x -C "$tmp"
	(cd "$tmp" && go build -o "$tmp/schedscope-base" ./cmd/schedscope)
	base=(-base "$tmp/schedscope-base")
	full_tools=$full_tools,schedscope-base
	open_tools=$open_tools,schedscope-base
fi
if [ -n "${ONE_LOOP:-}" ]; then
	full_tools=$full_tools,schedscope-procs1
	open_tools=$open_tools,schedscope-procs1
fi
go build -o /dev/null ./bench/loadbench ./cmd/schedscope ./bench/hello # compile once, before any timing
echo "$(date -u +%FT%TZ) $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./bench/loadbench -experiments full -runs "$runs_full" -duration 6s -conns 50 -wrk-threads 2 \
	-tools "$full_tools" "${base[@]}"
go run ./bench/loadbench -experiments open -runs "$runs_open" -open-rate 20000 -open-duration 10s \
	-open-warmup 2s -fresh-target=false -quiet-wait 2s -open-tools "$open_tools" "${base[@]}"
