#!/usr/bin/env bash
# make bench-stop: how promptly memspy run stops (issue 25: the summary
# printed and the files written within 1 s of the signal). A python3 loop
# runs under memspy run for WARM seconds (default 20), then its process
# group gets SIGINT, as Ctrl-C would send it; the table gives the seconds
# from the signal to memspy's exit, in each mode. python3 is run as the
# PATH finds it (a wrapper such as pyenv's shim makes it a process tree
# of dozens of programs), and in one row as the interpreter itself (and
# as /usr/bin/python3 when that is another).
set -euo pipefail
BIN=${BIN:-bin/memspy}
WARM=${WARM:-20}
command -v python3 >/dev/null || { echo "bench-stop needs python3"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
set -m # each background job in its own process group, as a shell's foreground job is
# stop LABEL PYTHON ARGS...: prints the seconds from the SIGINT to the
# exit of memspy run ARGS -- PYTHON (not in a subshell: the job needs the
# script's job control to have a process group of its own).
stop() {
  local label=$1 python=$2 pid t0 t1
  shift 2
  "$BIN" run "$@" -- "$python" -c 'while True: pass' >/dev/null 2>"$work/err" &
  pid=$!
  sleep "$WARM"
  t0=$(date +%s.%N)
  kill -INT -- -"$pid" || kill -KILL "$pid"
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL -- -"$pid"
    printf '%-44s %s\n' "$label" "no exit within 30 s of the signal (killed)"
    return
  fi
  wait "$pid" || true
  t1=$(date +%s.%N)
  printf '%-44s %s\n' "$label" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
}
interpreter=$(python3 -c 'import sys; print(sys.executable)')
printf '%-44s %s\n' mode 'signal→exit s'
stop plain python3
stop --where python3 --where
stop "--where --profile F" python3 --where --profile "$work/p.memspy"
stop "--where --procs 4" python3 --where --procs 4
stop "--where, $interpreter" "$interpreter" --where
# The system's own interpreter too, when PATH finds another (pyenv):
# Debian's python3 is what the corpus runs.
if [ -x /usr/bin/python3 ] && [ "$(readlink -f /usr/bin/python3)" != "$(readlink -f "$interpreter")" ]; then
  stop "--where, /usr/bin/python3" /usr/bin/python3 --where
  stop "--where --profile F, /usr/bin/python3" /usr/bin/python3 --where --profile "$work/p.memspy"
fi
