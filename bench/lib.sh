# bench/lib.sh - sourced by the bench scripts: builds what they need,
# starts and stops `fusebox serve` (every server is stopped on exit), and
# reads a thread's scheduler counters. Loopback only.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
FUSEBOX_BIN=${FUSEBOX_BIN:-$ROOT/build-bench/fusebox}
BENCH_OUT=${BENCH_OUT:-$ROOT/build-bench/bench}
WORK=$(mktemp -d /tmp/fusebox-bench.XXXXXX)
# On a shared machine other jobs steal the CPU from the server (the MHD
# cpu/wait column of delay.sh shows it). BENCH_NICE=-10 runs servers and
# clients at that nice level; BENCH_RT=1 runs them SCHED_FIFO priority 10
# (root only; both only make waiting for a CPU rarer). Default: neither.
NICE=()
[ -n "${BENCH_NICE:-}" ] && NICE=(nice -n "$BENCH_NICE")
[ "${BENCH_RT:-0}" = 1 ] && NICE=(chrt -f 10 "${NICE[@]}")
SERVER_PIDS=()

cleanup() {
  local p
  for p in "${SERVER_PIDS[@]}"; do
    kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "bench: $*" >&2; exit 2; }

# Builds fusebox (RelWithDebInfo, build-bench/) if $FUSEBOX_BIN is missing,
# and the two bench clients (always: make only rebuilds what changed).
bench_build() {
  command -v gcc >/dev/null && command -v make >/dev/null ||
    die "needs gcc and make (apt-get install -y build-essential)"
  if [ ! -x "$FUSEBOX_BIN" ]; then
    echo "bench: building fusebox into $ROOT/build-bench" >&2
    cmake -S "$ROOT" -B "$ROOT/build-bench" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
      cmake --build "$ROOT/build-bench" --target fusebox -j2 >/dev/null ||
      die "cannot build fusebox; set FUSEBOX_BIN to a built binary"
  fi
  make -s -C "$BENCH_DIR" OUT="$BENCH_OUT" >/dev/null || die "cannot build the bench clients"
}

# Raises this shell's open-file limit (soft to hard, and the hard one too
# when root) so that $1 sockets fit; children inherit it.
bench_nofile() {
  local need=$1
  if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$need" ]; then
    ulimit -Hn "$need" 2>/dev/null || die "hard open-file limit $(ulimit -Hn) < $need"
  fi
  ulimit -Sn "$(ulimit -Hn)"
}

# start_server SCENARIO TRACE: starts `fusebox serve` on an ephemeral
# loopback port; sets SRV_PID and SRV_PORT.
start_server() {
  local sc=$1 trace=$2 out="$WORK/serve.$RANDOM.out" i
  "${NICE[@]}" "$FUSEBOX_BIN" serve "$sc" --port 0 --bind 127.0.0.1 --trace "$trace" >"$out" 2>&1 &
  SRV_PID=$!
  SERVER_PIDS+=("$SRV_PID")
  SRV_PORT=
  for i in $(seq 100); do
    SRV_PORT=$(awk '/^port [0-9]+$/ {print $2; exit}' "$out")
    [ -n "$SRV_PORT" ] && break
    kill -0 "$SRV_PID" 2>/dev/null || break
    sleep 0.05
  done
  [ -n "$SRV_PORT" ] || { cat "$out" >&2; die "fusebox serve did not start"; }
}

stop_server() {
  kill -TERM "$SRV_PID" 2>/dev/null
  wait "$SRV_PID" 2>/dev/null
  local keep=() p
  for p in "${SERVER_PIDS[@]}"; do [ "$p" != "$SRV_PID" ] && keep+=("$p"); done
  SERVER_PIDS=("${keep[@]}")
}

# The server's MHD thread (the one that serves every connection): prints
# "ONCPU_NS RUNQ_WAIT_NS" from /proc/PID/task/TID/schedstat.
mhd_sched() {
  local t
  for t in /proc/"$SRV_PID"/task/*; do
    if grep -q '^MHD' "$t/comm" 2>/dev/null; then
      awk '{print $1, $2}' "$t/schedstat"
      return
    fi
  done
  echo "0 0"
}

# key=value lookup in a line of client output: kv LINE KEY
kv() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k {print $2; exit}'; }

bench_header() {
  echo "# $(date -u "+%Y-%m-%d %H:%M UTC") · checkout $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")" \
       "· $(nproc) cores · $(uname -r) · load $(cut -d' ' -f1-3 /proc/loadavg)" \
       "${BENCH_NICE:+· nice $BENCH_NICE}" "$([ "${BENCH_RT:-0}" = 1 ] && echo '· SCHED_FIFO 10')"
  echo "# fusebox: $FUSEBOX_BIN (built $(date -u -r "$FUSEBOX_BIN" "+%Y-%m-%d %H:%M UTC"))"
}
