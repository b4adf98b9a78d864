#!/usr/bin/env bash
# make eval-sample: the accuracy of 10% time sampling (issue 6) on the
# example programs, run long enough for sampling to be worth it (PROGS:
# 54 to 411 million references). Each program is traced once in full
# (memspy run --record); memspy sample-eval then compares the full
# simulation with the sampled one for every request in SPECS (by default
# samples of the default length, 500k references, with μ = 0.5 and with
# the dead-line μ), on a machine of data caches up to
# 128 KiB (L1D 32 KiB and L2 128 KiB, 8-way, 64 B lines). One row per
# program, request and cache: the true miss rate, the estimate, its
# relative error, and whether the truth lies within the bounds (μ in
# [0, 1]), the estimate's 95% interval from the spread of the samples, and
# the bounds widened by that sampling error; then the Pearson
# r of memory time over objects and functions and whether two objects above
# 2% (">2%") or 10% (">10%") of the stall time changed places ("tie": only
# objects within 5% of each other did). Targets (issue 6): relative error
# <= 5%, bounds holding, r >= 0.99, no such reordering.
set -euo pipefail
BIN=${BIN:-bin/memspy}
SPECS=${SPECS:-"ratio=0.1,mu=0.5 ratio=0.1"}
PROGS=${PROGS:-"jacobi 512 100|spmv 300 50|matmul 512|matmul 512 32|listwalk 1000000 10|selfint 384 16|aos aos 4000"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
caches=(--cache L1D:size=32k,assoc=8,line=64,holds=d --cache L2:size=128k,assoc=8,line=64,holds=d)

gcc -O2 -g -Itracer/valgrind/tool -o "$work/jacobi" examples/sampling/jacobi.c
gcc -O2 -g -o "$work/spmv" examples/sampling/spmv.c -lm
gcc -O2 -g -o "$work/matmul" examples/c/matmul.c
gcc -O2 -g -o "$work/listwalk" examples/c/listwalk.c
gcc -O1 -g -o "$work/selfint" examples/where/selfint.c
gcc -O1 -g -o "$work/aos" examples/where/aos.c

printf '%-20s %-26s %-4s %9s %9s %8s %21s %4s %21s %4s %21s %4s %7s %7s %5s\n' \
  program request cache true estimate rel.err bounds hold '95% interval' hold 'with sampling' hold r.obj r.fn reord
IFS='|' read -r -a progs <<<"$PROGS"
for prog in "${progs[@]}"; do
  set -- $prog
  exe="$work/$1"
  shift
  trace="$work/run.mst"
  "$BIN" run "${caches[@]}" --record "$trace" -- "$exe" "$@" >/dev/null 2>&1
  for spec in $SPECS; do
    "$BIN" sample-eval "${caches[@]}" --sample "$spec" --json "$work/eval.json" "$trace" >"$work/eval.txt" 2>&1 ||
      { cat "$work/eval.txt" >&2; exit 1; }
    # The cache rows of the text: name, size (two fields), true, in
    # samples, μ, estimate, relative error, then three intervals
    # ([lower, upper]: two fields) each with whether it holds.
    reord=none
    if grep -q '"reordered_above_10pct": true' "$work/eval.json"; then
      reord=">10%"
    elif grep -q '"tie": false' "$work/eval.json"; then
      reord=">2%"
    elif grep -q '"tie": true' "$work/eval.json"; then
      reord=tie
    fi
    awk -v prog="$prog" -v spec="$spec" -v reord="$reord" '
      /memory time pattern/ { robj = $6; rfn = $9 }
      /^ +L[0-9A-Z]+ +[0-9.]+ [KMG]?i?B / { n++; row[n] = sprintf("%-4s %9s %9s %8s %21s %4s %21s %4s %21s %4s", $1, $4, $7, $8, $9 " " $10, $11, $12 " " $13, $14, $15 " " $16, $17) }
      END {
        for (i = 1; i <= n; i++) {
          tail = (i == n) ? sprintf(" %7s %7s %5s", robj, rfn, reord) : ""
          printf "%-20s %-26s %s%s\n", prog, spec, row[i], tail
        }
      }' "$work/eval.txt"
  done
done
