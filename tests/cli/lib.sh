# tests/cli/lib.sh - shared by the shell tests in tests/cli/: source it first,
#   . "$(dirname "$0")/lib.sh"
# It sets
#   src     the source tree ($FUSEBOX_SRC, else two folders up)
#   bin     the fusebox binary ($FUSEBOX_BIN, else $src/build/fusebox)
#   tmp     a scratch folder, removed at exit
#   pass, fail, ok, bad MSG, finish   the test's own count and its last line
#   at_exit CMD   runs CMD (with eval) at exit, before $tmp is removed
# and checks prerequisites, each stopping the test with ONE line that says
# what is missing and how to get it, instead of a page of behaviour diff:
#   need_fusebox             the fusebox binary is built and runs
#   need_cmd NAME...         programs on PATH (curl, timeout, ...)
#   need_python MOD...       python3 and these modules (json, httpx, ...)
#   need_node_pkg PKG...     node and these packages in examples/clients
#                            (npm ci there: sh examples/clients/install.sh)
#   need_chromium            sets $chrome (chromium or chromium-browser)
# A missing prerequisite is a skip: "SKIP: NAME: REASON", exit 77, which ctest
# shows as Skipped (tests/CMakeLists.txt sets SKIP_RETURN_CODE 77). With
# FUSEBOX_TEST_STRICT=1 (a CI gate whose machine must have everything) it is
# a failure instead: "FAIL: NAME: REASON", exit 1.

set -uo pipefail
src=${FUSEBOX_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${FUSEBOX_BIN:-$src/build/fusebox}
test_name=$(basename "$0" .sh)
tmp=$(mktemp -d)
pass=0 fail=0
_at_exit=()

at_exit() { _at_exit+=("$1"); }
_lib_cleanup() {
  local c
  for c in "${_at_exit[@]+"${_at_exit[@]}"}"; do eval "$c" 2>/dev/null; done
  rm -rf "$tmp"
}
trap _lib_cleanup EXIT

# wait_port_line FILE [PID]: waits until FILE holds the "port N" line that
# `fusebox serve` prints, for up to 30 s (a loaded 2-core machine, an ASan
# build), or until PID has exited. The caller reads the port from FILE.
wait_port_line() {
  local i
  # a count of turns, not $SECONDS: a wall clock that steps must not end the wait
  for ((i = 0; i < 1500; i++)); do
    grep -q '^port ' "$1" 2>/dev/null && return 0
    [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
    sleep 0.02
  done
  return 1
}
# serve_named NAME SCENARIO ARGS...: starts `fusebox serve SCENARIO --port 0
# --trace $tmp/NAME.jsonl ARGS` in the background (stdout $tmp/NAME.out,
# stderr $tmp/NAME.err), sets port_NAME and pid_NAME and adds the pid to the
# caller's array `pids`. A server that does not start stops the test with
# what it printed, whether it is still running, and if so where it waits.
serve_named() {
  local name=$1 sc=$2
  shift 2
  # emptied here, before the fork: the child's own redirect may come after the
  # wait below has read an earlier server's "port" line from the same file
  : > "$tmp/$name.out"
  "$bin" serve "$sc" --port 0 --trace "$tmp/$name.jsonl" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" &
  local p=$! port=
  pids+=("$p")
  eval "pid_$name=$p"
  wait_port_line "$tmp/$name.out" "$p" && port=$(awk '/^port /{print $2; exit}' "$tmp/$name.out")
  if [ -z "$port" ]; then
    local state=running
    kill -0 "$p" 2>/dev/null || { wait "$p"; state="exited with status $?"; }
    echo "server $name did not start ($state): serve $sc $*"
    echo "stdout:"; cat "$tmp/$name.out"; echo "stderr:"; cat "$tmp/$name.err"
    # still running yet silent: where it waits says why (gdb is on CI's machines)
    if kill -0 "$p" 2>/dev/null && command -v gdb > /dev/null; then
      gdb -p "$p" -batch -ex 'thread apply all bt' 2>&1 | grep -E '^#|^Thread' | head -80
    fi
    exit 1
  fi
  eval "port_$name=$port"
}
# stop_named NAME: SIGINT to the server serve_named started, and waits for it.
stop_named() { local p; p=$(eval echo "\$pid_$1"); kill -INT "$p"; wait "$p" 2>/dev/null; }
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# finish: the count line; exit 0 when nothing failed.
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ] && exit 0
  exit 1
}

# missing REASON: stops the test, one line.
missing() {
  if [ "${FUSEBOX_TEST_STRICT:-0}" = 1 ]; then
    echo "FAIL: $test_name: $*"
    exit 1
  fi
  echo "SKIP: $test_name: $*"
  exit 77
}

need_fusebox() {
  [ -x "$bin" ] || missing "no fusebox binary at $bin (build first: cmake --build build)"
  "$bin" --version > /dev/null 2>&1 || missing "$bin does not run: $("$bin" --version 2>&1 | head -1)"
}

need_cmd() {
  local c
  for c in "$@"; do
    command -v "$c" > /dev/null 2>&1 || missing "needs the program '$c' (scripts/setup.sh installs it)"
  done
}

need_python() {
  command -v python3 > /dev/null 2>&1 || missing "needs python3 (scripts/setup.sh installs it)"
  local m
  for m in "$@"; do
    python3 -c "import $m" > /dev/null 2>&1 \
      || missing "needs the python module '$m' (python3 -c 'import $m' fails; scripts/setup.sh installs it)"
  done
}

need_node_pkg() {
  command -v node > /dev/null 2>&1 || missing "needs node (scripts/setup.sh installs it)"
  local p dir="$src/examples/clients/node"
  for p in "$@"; do
    [ -f "$dir/node_modules/$p/package.json" ] \
      || missing "needs the node package '$p' in $dir/node_modules (run: sh examples/clients/install.sh)"
  done
}

need_chromium() {
  chrome=$(command -v chromium || command -v chromium-browser || true)
  [ -n "$chrome" ] || missing "needs chromium (scripts/setup.sh installs it)"
}
