#!/usr/bin/env bash
# Compares `memspy sim` with Dinero IV d4-7 on generated traces × 42
# hierarchies (scripts/dinerocmp), plus the public mm32 din trace
# ($SHARED/mm32.din.gz, when present). Dinero is
# built outside the repository, in $WORK (default /tmp/memspy-dinero), for
# 64-bit addresses, from $D4_TARBALL (the original d4-7.tar.gz) or, without
# it, from the copy in github.com/danluu/dineroIV (needs the network).
# Dinero's licence is non-commercial: it is only built and run here, never
# copied into memspy. The tests do not need it.
set -euo pipefail
WORK=${WORK:-/tmp/memspy-dinero}
BIN=${BIN:-bin/memspy}
SHARED=${SHARED:-../shared/traces}
mkdir -p "$WORK"
dinero=$WORK/d4-7/dineroIV
if [[ ! -x $dinero ]]; then
  tarball=${D4_TARBALL:-$WORK/d4-7.tar.gz}
  if [[ ! -s $tarball ]]; then
    curl -fsSL -o "$tarball" https://github.com/danluu/dineroIV/raw/master/d4-7.tar.gz
  fi
  tar -xzf "$tarball" -C "$WORK"
  (cd "$WORK/d4-7" && ./configure >/dev/null &&
    make CFLAGS='-O2 -w -I. -DD4ADDR="unsigned long"' >/dev/null)
fi
extra=()
if [[ -s $SHARED/mm32.din.gz ]]; then
  [[ -s $WORK/mm32.din ]] || gzip -dc "$SHARED/mm32.din.gz" > "$WORK/mm32.din"
  extra=(-extra "$WORK/mm32.din")
fi
go run ./scripts/dinerocmp -dinero "$dinero" -memspy "$BIN" -dir "$WORK" "${extra[@]}" "$@"
