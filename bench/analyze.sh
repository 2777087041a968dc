#!/usr/bin/env bash
# bench/analyze.sh: speed and memory of schedscope's trace analyzers.
#
# Generates a busy trace of at least 30 MB (bench/out/busy.trace, not
# committed), then times, on the same file and interleaved:
#   bare     a bare golang.org/x/exp/trace read (every event, nothing else)
#   analyze  every schedscope analyzer (analyze.AnalyzeFile)
# RUNS times each (default 5), and reports medians of wall time, CPU time
# (user+sys) and peak RSS, with the analyze/bare ratios. Then it runs
# `go tool trace -pprof=sched|syscall|sync|net` once each for scale and
# prints their totals beside schedscope's cmd/trace-compatible totals.
#
# Usage: bench/analyze.sh [RUNS]      (SIZE_MB=30 to change the trace size)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
size_mb=${SIZE_MB:-32}
out=bench/out
mkdir -p "$out"
trace=$out/busy.trace

go build -o "$out/analyze-gen" ./bench/analyze/gen
go build -o "$out/analyze-read" ./bench/analyze/read
if [[ ! -f $trace ]] || (( $(stat -c %s "$trace") < size_mb * 1000000 )); then
  "$out/analyze-gen" -o "$trace" -size $((size_mb * 1024 * 1024))
fi
echo "trace: $trace, $(stat -c %s "$trace") bytes"
echo "load before: $(uptime)"

: > "$out/analyze-times.txt"
for ((i = 1; i <= runs; i++)); do
  for mode in bare analyze; do
    # %e wall s, %U user s, %S sys s, %M max RSS KB
    /usr/bin/time -f "$mode %e %U %S %M" -a -o "$out/analyze-times.txt" \
      "$out/analyze-read" -mode "$mode" "$trace" > /dev/null
  done
done
echo "load after:  $(uptime)"

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
col() { awk -v m="$1" -v c="$2" '$1==m {print $c}' "$out/analyze-times.txt"; }
cpu() { awk -v m="$1" '$1==m {print $3+$4}' "$out/analyze-times.txt"; }
bw=$(col bare 2 | median); aw=$(col analyze 2 | median)
bc=$(cpu bare | median); ac=$(cpu analyze | median)
br=$(col bare 5 | median); ar=$(col analyze 5 | median)
printf '\n%-8s %10s %10s %10s   (medians of %d runs)\n' mode wall_s cpu_s rss_MB "$runs"
printf '%-8s %10.2f %10.2f %10.0f\n' bare "$bw" "$bc" "$(echo "$br / 1024" | bc -l)"
printf '%-8s %10.2f %10.2f %10.0f\n' analyze "$aw" "$ac" "$(echo "$ar / 1024" | bc -l)"
printf 'ratio analyze/bare: wall %.2fx, cpu %.2fx (target <= 2x); analyze peak RSS %.0f MB (target <= 150 MB)\n' \
  "$(echo "$aw / $bw" | bc -l)" "$(echo "$ac / $bc" | bc -l)" "$(echo "$ar / 1024" | bc -l)"

echo
echo "go tool trace -pprof=KIND on the same file, for scale, beside schedscope's compat totals:"
"$out/analyze-read" -mode compat "$trace" > "$out/analyze-compat.txt"
printf '%-8s %8s %8s %9s %12s %18s %12s %18s %s\n' kind wall_s cpu_s rss_MB gotool_count gotool_total_ns ours_count ours_total_ns equal
for kind in sched syscall sync net; do
  /usr/bin/time -f "%e %U %S %M" -o "$out/analyze-gotool-time.txt" \
    go tool trace -pprof="$kind" "$trace" > "$out/analyze-$kind.pb.gz" 2> /dev/null
  read -r w u s m < "$out/analyze-gotool-time.txt"
  read -r gc gt _ < <("$out/analyze-read" -mode pprofsum "$out/analyze-$kind.pb.gz")
  read -r _ oc ot < <(grep "^$kind " "$out/analyze-compat.txt")
  eq=no; [[ $gc == "$oc" && $gt == "$ot" ]] && eq=yes
  printf '%-8s %8.2f %8.2f %9.0f %12s %18s %12s %18s %s\n' "$kind" "$w" "$(echo "$u + $s" | bc -l)" "$(echo "$m / 1024" | bc -l)" "$gc" "$gt" "$oc" "$ot" "$eq"
done
echo "load at end: $(uptime)"
