#!/usr/bin/env bash
# make bench-numa: FlashPoint's protocol monitoring against full monitoring
# (issue 5). Records the parallel blocked matrix multiply once, then
# simulates it on the flashpoint machine (16 processors in 8 NUMA nodes)
# without per-bin statistics, with --where (full monitoring: bookkeeping on
# every reference) and with --monitor protocol (bins kept in the directory,
# counted only in its miss handler), and checks that the two give the same
# NUMA misses per data bin.
set -euo pipefail
BIN=${BIN:-bin/memspy}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -pthread -o "$work/pmatmul" examples/parallel/pmatmul.c
"$BIN" run --cache L1:size=32k --record "$work/pm.mst" -- "$work/pmatmul" 192 48 >/dev/null 2>&1
. "$(dirname "$0")/timing.sh"
m=(--machine flashpoint)
plain=$(secs "$BIN" sim "$work/pm.mst" "${m[@]}")
full=$(secs "$BIN" sim "$work/pm.mst" "${m[@]}" --where --miss-only --profile "$work/full.memspy")
fullhits=$(secs "$BIN" sim "$work/pm.mst" "${m[@]}" --where)
proto=$(secs "$BIN" sim "$work/pm.mst" "${m[@]}" --monitor protocol --profile "$work/proto.memspy")
printf '%-34s %8s\n' simulation seconds
printf '%-34s %8.2f\n' "no per-bin statistics" "$plain" "full monitoring (--where)" "$fullhits" \
  "full, misses only (--where --miss-only)" "$full" "protocol monitoring" "$proto"
awk -v f="$fullhits" -v m="$full" -v p="$proto" 'BEGIN{printf "protocol / full: %.2f, protocol / full misses-only: %.2f\n", p/f, p/m}'
"$BIN" report "$work/full.memspy" numa --format csv --top 1000000 > "$work/full.csv"
"$BIN" report "$work/proto.memspy" numa --format csv --top 1000000 > "$work/proto.csv"
if cmp -s "$work/full.csv" "$work/proto.csv"; then
  echo "NUMA misses per node, processor, data bin and procedure x bin: identical ($(wc -l < "$work/full.csv") lines)"
else
  echo "NUMA statistics differ between full and protocol monitoring:"
  diff "$work/full.csv" "$work/proto.csv" | head -20
  exit 1
fi
