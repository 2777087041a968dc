#!/usr/bin/env bash
# bench/analyze.sh: speed and memory of schedscope's trace analyzers.
#
# Takes a trace, then times, on the same file and interleaved:
#   bare     a bare golang.org/x/exp/trace read (every event, nothing else)
#   analyze  every schedscope analyzer (analyze.TraceFile)
#   before   the same with another build of bench/analyze/read (BEFORE=binary),
#            to compare two versions of the analyzers in one run
# RUNS times each (default 5), and reports medians of wall time, CPU time
# (user+sys) and peak RSS, with the analyze/bare ratios (also the median of
# each run's own ratio, which cancels the machine's drift between runs).
# Then it runs `go tool trace -pprof=sched|syscall|sync|net` once each for
# scale and prints their totals beside schedscope's cmd/trace-compatible
# totals (GOTOOL=0 skips that; KINDS="sched" runs only some).
#
# The trace:
#   TRACE=FILE         use FILE as it is
#   GEN=busy (default) bench/analyze/gen's synthetic busy trace, bench/out/busy.trace,
#                      generated when missing or under SIZE_MB (default 32)
#   GEN=http           bench/analyze/httpgen's busy HTTP server, bench/out/http.trace,
#                      generated when missing (SIZE_MB default 60)
#
# Usage: bench/analyze.sh [RUNS]
#   e.g. GEN=http bench/analyze.sh 5;  TRACE=/tmp/big.trace GOTOOL=0 bench/analyze.sh 3
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
gen=${GEN:-busy}
out=bench/out
mkdir -p "$out"

go build -o "$out/analyze-read" ./bench/analyze/read
if [[ -n ${TRACE:-} ]]; then
  trace=$TRACE
elif [[ $gen == http ]]; then
  size_mb=${SIZE_MB:-60}
  trace=$out/http.trace
  if [[ ! -f $trace ]] || (( $(stat -c %s "$trace") < size_mb * 1000000 )); then
    go build -o "$out/analyze-httpgen" ./bench/analyze/httpgen
    "$out/analyze-httpgen" -o "$trace" -size $((size_mb * 1000000))
  fi
else
  size_mb=${SIZE_MB:-32}
  trace=$out/busy.trace
  if [[ ! -f $trace ]] || (( $(stat -c %s "$trace") < size_mb * 1000000 )); then
    go build -o "$out/analyze-gen" ./bench/analyze/gen
    "$out/analyze-gen" -o "$trace" -size $((size_mb * 1024 * 1024))
  fi
fi
modes="bare analyze"
if [[ -n ${BEFORE:-} ]]; then
  modes="bare analyze before"
fi
echo "trace: $trace, $(stat -c %s "$trace") bytes"
echo "load before: $(uptime)"

times=$out/analyze-times.txt
: > "$times"
for ((i = 1; i <= runs; i++)); do
  for mode in $modes; do
    bin=$out/analyze-read m=$mode
    if [[ $mode == before ]]; then bin=$BEFORE m=analyze; fi
    # run, mode, %e wall s, %U user s, %S sys s, %M max RSS KB
    /usr/bin/time -f "$i $mode %e %U %S %M" -a -o "$times" "$bin" -mode "$m" "$trace" > /dev/null
  done
done
echo "load after:  $(uptime)"

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
col() { awk -v m="$1" -v c="$2" '$2==m {print $c}' "$times"; }
cpu() { awk -v m="$1" '$2==m {print $4+$5}' "$times"; }
# paired MODE COLUMN: the median over runs of MODE's figure / bare's in the same run
paired() {
  awk -v m="$1" -v c="$2" '$2=="bare" {b[$1]=(c=="cpu") ? $4+$5 : $c} $2==m {v[$1]=(c=="cpu") ? $4+$5 : $c}
    END {for (r in v) if (b[r] > 0) print v[r] / b[r]}' "$times" | median
}
bw=$(col bare 3 | median); bc=$(cpu bare | median); br=$(col bare 6 | median)
printf '\n%-8s %8s %8s %8s %12s %11s %10s   (medians of %d interleaved runs)\n' mode wall_s cpu_s rss_MB wall_ratio cpu_ratio rss_delta "$runs"
printf '%-8s %8.2f %8.2f %8.0f\n' bare "$bw" "$bc" "$(echo "$br / 1024" | bc -l)"
for mode in $modes; do
  [[ $mode == bare ]] && continue
  w=$(col "$mode" 3 | median); c=$(cpu "$mode" | median); r=$(col "$mode" 6 | median)
  printf '%-8s %8.2f %8.2f %8.0f %5.2fx/%5.2fx %5.2fx/%5.2fx %+8.0f MB\n' "$mode" "$w" "$c" "$(echo "$r / 1024" | bc -l)" \
    "$(echo "$w / $bw" | bc -l)" "$(paired "$mode" 3)" "$(echo "$c / $bc" | bc -l)" "$(paired "$mode" cpu)" "$(echo "($r - $br) / 1024" | bc -l)"
done
echo "ratios: of the medians / median of the per-run ratios. Targets: wall <= 1.5x, peak RSS <= bare + 30 MB."

[[ ${GOTOOL:-1} == 0 ]] && exit 0
echo
echo "go tool trace -pprof=KIND on the same file, for scale, beside schedscope's compat totals:"
"$out/analyze-read" -mode compat "$trace" > "$out/analyze-compat.txt"
printf '%-8s %8s %8s %9s %12s %18s %12s %18s %s\n' kind wall_s cpu_s rss_MB gotool_count gotool_total_ns ours_count ours_total_ns equal
for kind in ${KINDS:-sched syscall sync net}; do
  /usr/bin/time -f "%e %U %S %M" -o "$out/analyze-gotool-time.txt" \
    go tool trace -pprof="$kind" "$trace" > "$out/analyze-$kind.pb.gz" 2> /dev/null
  read -r w u s m < "$out/analyze-gotool-time.txt"
  read -r gc gt _ < <("$out/analyze-read" -mode pprofsum "$out/analyze-$kind.pb.gz")
  read -r _ oc ot < <(grep "^$kind " "$out/analyze-compat.txt")
  eq=no; [[ $gc == "$oc" && $gt == "$ot" ]] && eq=yes
  printf '%-8s %8.2f %8.2f %9.0f %12s %18s %12s %18s %s\n' "$kind" "$w" "$(echo "$u + $s" | bc -l)" "$(echo "$m / 1024" | bc -l)" "$gc" "$gt" "$oc" "$ot" "$eq"
done
echo "load at end: $(uptime)"
