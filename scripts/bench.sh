#!/usr/bin/env bash
# make bench: references per second of `memspy sim` on ../shared/traces/mat_20M.bz2
# (decompressed first, as text din and as .mst) with a split L1 (32KB 8-way each)
# and a 256KB 8-way L2 at 64 B lines, with and without --classify 3c, on one core
# (GOMAXPROCS=1, pinned with taskset when available). Reports the best of RUNS runs
# and the peak resident memory. Targets (issue 2): >= 250 M refs/s from .mst,
# >= 60 M refs/s from text din, RSS <= 200 MB.
set -euo pipefail
BIN=${BIN:-bin/memspy}
SHARED=${SHARED:-../shared/traces}
BENCHDIR=${BENCHDIR:-/tmp/memspy-bench}
RUNS=${RUNS:-3}
mkdir -p "$BENCHDIR"
din=$BENCHDIR/mat_20M.din
mst=$BENCHDIR/mat_20M.mst
if [[ ! -s $din ]]; then
  echo "preparing $din and $mst (once)"
  "$BIN" convert "$SHARED/mat_20M.bz2" -o "$din"
fi
[[ -s $mst ]] || "$BIN" convert "$din" -o "$mst"
ls -l "$din" "$mst"

pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
machine=(--cache 'L1I:size=32k,assoc=8,line=64,holds=instructions'
         --cache 'L1D:size=32k,assoc=8,line=64,holds=data'
         --cache 'L2:size=256k,assoc=8,line=64')

run() { # label, file, extra args...
  local label=$1 file=$2; shift 2
  local best=0 line rate rss
  for ((i = 0; i < RUNS; i++)); do
    line=$(GOMAXPROCS=1 "${pin[@]}" "$BIN" sim "$file" "${machine[@]}" --stats "$@" 2>&1 >/dev/null | grep 'events/s')
    rate=$(sed -E 's/.*: ([0-9.]+) M events\/s.*/\1/' <<<"$line")
    rss=$(sed -E 's/.*peak RSS (.*)$/\1/' <<<"$line")
    if awk -v a="$rate" -v b="$best" 'BEGIN{exit !(a>b)}'; then best=$rate; fi
  done
  printf '%-22s %8s M refs/s   peak RSS %s\n' "$label" "$best" "$rss"
}
echo "best of $RUNS runs, one core:"
run "din"            "$din"
run "din --classify 3c" "$din" --classify 3c
run "mst"            "$mst"
run "mst --classify 3c" "$mst" --classify 3c
