# Sourced by the bench scripts: secs COMMAND... prints the wall seconds the
# command took (its output and failure are ignored).
secs() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}'
}

# best N COMMAND... prints the least wall seconds of N runs of the command:
# on a shared machine, noise only ever adds time.
best() {
  local n=$1 b="" t
  shift
  for _ in $(seq "$n"); do
    t=$(secs "$@")
    b=$(awk -v a="$t" -v b="$b" 'BEGIN{print (b == "" || a < b) ? a : b}')
  done
  echo "$b"
}
