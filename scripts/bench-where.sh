#!/usr/bin/env bash
# make bench-where: the cost of where-and-why attribution on `memspy run`, in
# one run: plain, --where (every hit counted per access point, byte masks)
# and --where --miss-only (misses only: MemSpy's statistics on cache misses),
# on a 256x256 double matrix multiply and the blocked self-interference
# example. --miss-only must be visibly faster than --where.
set -euo pipefail
BIN=${BIN:-bin/memspy}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -o "$work/matmul" examples/c/matmul.c
gcc -O1 -g -o "$work/selfint" examples/where/selfint.c

. "$(dirname "$0")/timing.sh"
machine=(--cache 'L1I:size=32k,assoc=8,line=64,holds=instructions' --cache 'L1D:size=32k,assoc=8,line=64,holds=data'
  --cache 'LL:size=8m,assoc=16,line=64')
printf '%-14s %9s %9s %12s %14s %16s\n' program plain where where-misses where/plain where/miss-only
for prog in "matmul 256" "selfint"; do
  set -- $prog
  exe="$work/$1"; shift
  plain=$(secs "$BIN" run "${machine[@]}" -- "$exe" "$@")
  where=$(secs "$BIN" run --where "${machine[@]}" -- "$exe" "$@")
  miss=$(secs "$BIN" run --where --miss-only "${machine[@]}" -- "$exe" "$@")
  printf '%-14s %9.2f %9.2f %12.2f %14.2f %16.2f\n' "$prog" "$plain" "$where" "$miss" \
    "$(awk -v a="$where" -v b="$plain" 'BEGIN{print a/b}')" "$(awk -v a="$where" -v b="$miss" 'BEGIN{print a/b}')"
done
