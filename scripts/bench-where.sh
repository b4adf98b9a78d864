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
# cachegrind with the same first and last caches, and --where --miss-only
# with the first-level caches in the engine (--l1-in-tool=false) beside it
# in the tool (the default): miss-only/cg is the issue's ratio (<= 1.2).
cg=(valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64
  --cachegrind-out-file=/dev/null)
printf '%-14s %9s %9s %9s %12s %12s %14s %16s %14s\n' program cachegrind plain where where-misses 'misses-l1off' \
  where/plain where/miss-only miss-only/cg
for prog in "matmul 256" "selfint"; do
  set -- $prog
  exe="$work/$1"; shift
  cgs=$(secs "${cg[@]}" "$exe" "$@")
  plain=$(secs "$BIN" run "${machine[@]}" -- "$exe" "$@")
  where=$(secs "$BIN" run --where "${machine[@]}" -- "$exe" "$@")
  miss=$(secs "$BIN" run --where --miss-only "${machine[@]}" -- "$exe" "$@")
  off=$(secs "$BIN" run --where --miss-only --l1-in-tool=false "${machine[@]}" -- "$exe" "$@")
  printf '%-14s %9.2f %9.2f %9.2f %12.2f %12.2f %14.2f %16.2f %14.2f\n' "$prog" "$cgs" "$plain" "$where" "$miss" "$off" \
    "$(awk -v a="$where" -v b="$plain" 'BEGIN{print a/b}')" "$(awk -v a="$where" -v b="$miss" 'BEGIN{print a/b}')" \
    "$(awk -v a="$miss" -v b="$cgs" 'BEGIN{print a/b}')"
done

# Bounded memory and a fast end (issue 27): peak RSS of --where, the seconds
# from the end of the simulation to the results written (as --stats
# reports them), the size of the compressed profile,
# and the time and peak RSS of `memspy report` on it. The programs above,
# python3 -c pass when /usr/bin/python3 is there, and a generated pinatrace
# trace of 2e6 references by 1e6 distinct PCs (memspy sim).
awk 'BEGIN { s = 1; for (i = 0; i < 2000000; i++) {
    s = (s * 69069 + 1) % 4294967296; pc = int(s / 4096) % 1000000 # exact in doubles
    if (i % 2 == 0) pc = pc % 62501 # half of them in a hot sixteenth
    printf "0x%x: %s 0x%x; TID: 1\n", 4194304 + 4 * pc, (int(s / 256) % 4 == 0) ? "W" : "R", 268435456 + (pc % 65536) * 4096 + (i % 512) * 8
  }; print "#eof" }' >"$work/pcs.out"
# measure LABEL COMMAND ARGS...: one run of memspy COMMAND (run or sim)
# with --stats --profile and ARGS.
measure() {
  local label=$1 cmd=$2 wall sim rss size rwall rrss
  shift 2
  /usr/bin/time -f '%e %M' -o "$work/time" "$BIN" "$cmd" --stats --profile "$work/p.memspy" "$@" >/dev/null 2>"$work/err" || true
  read -r wall rss <"$work/time"
  sim=$(sed -n 's/.* events in \([0-9.]*\) s.*/\1/p' "$work/err" | tail -1)
  end=$(sed -n 's/.* results built and written in \([0-9.]*\) s.*/\1/p' "$work/err" | tail -1)
  size=$(stat -c %s "$work/p.memspy" 2>/dev/null || echo 0)
  /usr/bin/time -f '%e %M' -o "$work/time" "$BIN" report "$work/p.memspy" >/dev/null 2>&1 || true
  read -r rwall rrss <"$work/time"
  printf '%-14s %9.2f %9.2f %11.0f %11.2f %11.1f %9.2f %11.0f\n' "$label" "$wall" "${sim:-0}" "$((rss / 1024))" \
    "${end:-0}" "$(awk -v a="$size" 'BEGIN{print a/1e6}')" "$rwall" "$((rrss / 1024))"
}
printf '\n%-14s %9s %9s %11s %11s %11s %9s %11s\n' program wall sim 'peak MiB' 'results s' 'profile MB' report 'report MiB'
measure "matmul 256" run --where "${machine[@]}" -- "$work/matmul" 256
measure selfint run --where "${machine[@]}" -- "$work/selfint"
if [ -x /usr/bin/python3 ]; then
  measure "python3 pass" run --where "${machine[@]}" -- /usr/bin/python3 -c pass
fi
measure "1e6 PCs" sim --where "${machine[@]}" "$work/pcs.out"
