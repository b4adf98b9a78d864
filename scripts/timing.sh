# Sourced by the bench scripts: secs COMMAND... prints the wall seconds the
# command took (its output and failure are ignored).
secs() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}'
}
