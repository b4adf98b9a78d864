#!/usr/bin/env bash
# make bench-run: wall time of `memspy run` against `valgrind --tool=cachegrind`
# (same I1, D1 and LL), the tracer alone (memspy run --drain: the tool fills
# the ring as for memspy run, and memspy hands each chunk back undecoded)
# against `valgrind --tool=none`, and native, on a 512x512 double matrix
# multiply and a linked-list walk, in one run, each the best of 3.
# Targets (issue 3): memspy run / cachegrind <= 1.0, tracer / none <= 2.0.
set -euo pipefail
BIN=${BIN:-bin/memspy}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -o "$work/matmul" examples/c/matmul.c
gcc -O2 -g -o "$work/listwalk" examples/c/listwalk.c
printf '#include <stdio.h>\nint main(void){volatile double s=0;for(long i=0;i<300000000;i++)s+=i*0.5;printf("%%g\\n",s);return 0;}\n' > "$work/spin.c"
gcc -O1 -o "$work/spin" "$work/spin.c"

. "$(dirname "$0")/timing.sh"
# The hierarchy cachegrind simulates: split L1s and a unified LL.
machine=(--cache 'L1I:size=32k,assoc=8,line=64,holds=instructions' --cache 'L1D:size=32k,assoc=8,line=64,holds=data'
  --cache 'LL:size=8m,assoc=16,line=64')
printf '%-22s %9s %9s %9s %9s %9s %12s %12s\n' program native none tracer cachegrind memspy tracer/none memspy/cg
for prog in "matmul 512" "listwalk 1000000 4"; do
  set -- $prog
  exe="$work/$1"; shift
  n=$(best 3 "$exe" "$@")
  none=$(best 3 valgrind --tool=none -q "$exe" "$@")
  tracer=$(best 3 "$BIN" run "${machine[@]}" --drain -- "$exe" "$@")
  cg=$(best 3 valgrind --tool=cachegrind -q --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 --cachegrind-out-file=/dev/null "$exe" "$@")
  ms=$(best 3 "$BIN" run "${machine[@]}" -- "$exe" "$@")
  printf '%-22s %9.2f %9.2f %9.2f %9.2f %9.2f %12.2f %12.2f\n' "$prog" "$n" "$none" "$tracer" "$cg" "$ms" \
    "$(awk -v a="$tracer" -v b="$none" 'BEGIN{print a/b}')" "$(awk -v a="$ms" -v b="$cg" 'BEGIN{print a/b}')"
done
# memspy run needs a second core for the simulator to overlap the tracer:
# show how much two CPU-bound processes slow each other down here.
one=$(secs "$work/spin")
two=$(secs sh -c "'$work/spin' & '$work/spin' & wait")
printf 'two CPU-bound processes at once take %.2fx the time of one (1.0: two real cores, 2.0: one)\n' \
  "$(awk -v a="$two" -v b="$one" 'BEGIN{print a/b}')"
