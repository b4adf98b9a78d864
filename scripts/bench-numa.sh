#!/usr/bin/env bash
# make bench-numa: FlashPoint's protocol monitoring against full monitoring
# (issue 5). Records the parallel blocked matrix multiply once, then
# simulates it on the flashpoint machine (16 processors in 8 NUMA nodes)
# without per-bin statistics, with --where (full monitoring: bookkeeping on
# every reference) and with --monitor protocol (bins kept in the directory,
# counted only in its miss handler, the function of a miss from its PC),
# and checks that the two give the same NUMA misses per data bin.
set -euo pipefail
BIN=${BIN:-bin/memspy}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -pthread -o "$work/pmatmul" examples/parallel/pmatmul.c
"$BIN" run --cache L1:size=32k,assoc=8 --record "$work/pm.mst" -- "$work/pmatmul" 192 48 >/dev/null 2>&1
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
# The node and processor tables (everything before the object table) must
# be identical: both count the same misses.
sed '/^object,/,$d' "$work/full.csv" > "$work/full.totals"
sed '/^object,/,$d' "$work/proto.csv" > "$work/proto.totals"
if ! cmp -s "$work/full.totals" "$work/proto.totals"; then
  echo "NUMA misses per node or processor differ between full and protocol monitoring:"
  diff "$work/full.totals" "$work/proto.totals" | head -20 || true
  exit 1
fi
echo "NUMA misses per node and per processor: identical"
# Per data bin: protocol monitoring charges a line to the bin of its first
# fill, so only bins sharing lines with others (small neighbours, stack
# frames) may differ.
objects() { sed -n '/^object,/,/^$/p' "$1" | awk -F, 'NR>1 && NF>=4 {print $1 "\t" $2+$3+$4}' | sort; }
objects "$work/full.csv" > "$work/full.obj"
objects "$work/proto.csv" > "$work/proto.obj"
join -t "$(printf '\t')" -a1 -a2 -e 0 -o 0,1.2,2.2 "$work/full.obj" "$work/proto.obj" | awk -F'\t' '
  { n++; total += $2; d = $2 - $3; if (d < 0) d = -d; if (d == 0) same++; else { diff += d; held += $2 } }
  END { printf "NUMA misses per data bin: %d of %d bins identical; the others hold %.2f%% of the misses, and differ by %.2f%% of all misses\n", same, n, 100*held/total, 100*diff/total }'
# Per function x data bin: protocol monitoring takes the function from the
# PC of the miss, full monitoring from the calling context, so misses move
# where the traced calls do not name the running function (a PLT stub: the
# function it jumps to).
pairs() { sed -n '/^function,object,/,/^$/p' "$1" | awk -F, 'NR>1 && NF>=5 {print $1 "|" $2 "\t" $3+$4+$5}' | sort; }
pairs "$work/full.csv" > "$work/full.pairs"
pairs "$work/proto.csv" > "$work/proto.pairs"
join -t "$(printf '\t')" -a1 -a2 -e 0 -o 0,1.2,2.2 "$work/full.pairs" "$work/proto.pairs" | awk -F'\t' '
  { n++; total += $2; same += ($2 < $3 ? $2 : $3); if ($2 == $3) eq++ }
  END { printf "NUMA misses per function x data bin: %d of %d pairs identical; %.2f%% of the misses on the same pair\n", eq, n, 100*same/total }'
