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

# Builds fusebox (RelWithDebInfo, build-bench/) when $FUSEBOX_BIN is that
# build's: always, since cmake rebuilds only what changed (a binary older
# than the checkout was measured once when it was built only if missing);
# a FUSEBOX_BIN given is used as it is. Then the bench clients (make only
# rebuilds what changed).
bench_build() {
  command -v gcc >/dev/null && command -v make >/dev/null ||
    die "needs gcc and make (apt-get install -y build-essential)"
  if [ "$FUSEBOX_BIN" = "$ROOT/build-bench/fusebox" ]; then
    [ -x "$FUSEBOX_BIN" ] || echo "bench: building fusebox into $ROOT/build-bench" >&2
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

# start_server SCENARIO TRACE [SERVE_ARGS...]: starts `fusebox serve` on an
# ephemeral loopback port (TRACE "" = no --trace at all); sets SRV_PID and
# SRV_PORT.
start_server() {
  local sc=$1 trace=$2 out="$WORK/serve.$RANDOM.out" i
  shift 2
  "${NICE[@]}" "$FUSEBOX_BIN" serve "$sc" --port 0 --bind 127.0.0.1 ${trace:+--trace "$trace"} "$@" >"$out" 2>&1 &
  SRV_PID=$!
  SERVER_PIDS+=("$SRV_PID")
  SRV_PORT=
  for i in $(seq 100); do
    SRV_PORT=$(awk '/^port [0-9]+$/ {print $2; exit}' "$out" 2>/dev/null) # not made yet: empty
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

# The server's event loop threads (they serve every connection; one per
# core: libmicrohttpd's own "MHD-*" threads before the loops of issue 13's
# fifth pass, "fbx-loop" since): prints "ONCPU_NS RUNQ_WAIT_NS" summed over
# them, from /proc/PID/task/TID/schedstat.
mhd_sched() {
  local t c=0 w=0 a b
  for t in /proc/"$SRV_PID"/task/*; do
    if grep -q '^MHD\|^fbx-loop' "$t/comm" 2>/dev/null; then
      read -r a b _ <"$t/schedstat"
      c=$((c + a)); w=$((w + b))
    fi
  done
  echo "$c $w"
}

# key=value lookup in a line of client output: kv LINE KEY
kv() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k {print $2; exit}'; }

bench_header() {
  echo "# $(date -u "+%Y-%m-%d %H:%M UTC") · checkout $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")" \
       "· $(nproc) cores · $(uname -r) · load $(cut -d' ' -f1-3 /proc/loadavg)" \
       "${BENCH_NICE:+· nice $BENCH_NICE}" "$([ "${BENCH_RT:-0}" = 1 ] && echo '· SCHED_FIFO 10')"
  echo "# fusebox: $FUSEBOX_BIN (built $(date -u -r "$FUSEBOX_BIN" "+%Y-%m-%d %H:%M UTC"))"
}

# ---- references (issue 6): nginx, WireMock, package installs ----

# need CMD PACKAGE: installs the Debian package when the command is missing.
need() {
  command -v "$1" >/dev/null && return 0
  echo "bench: installing $2 (for $1)" >&2
  apt-get install -y "$2" >/dev/null 2>&1 ||
    { apt-get update >/dev/null 2>&1 && apt-get install -y "$2" >/dev/null 2>&1; } ||
    die "cannot install $2; install it and retry"
}

# A free loopback TCP port (for servers that cannot take port 0), below
# the ephemeral range (so no client socket of this machine takes it between
# the check and the bind) and used by no socket at all.
free_port() {
  local p lo
  read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
  [ "$lo" -gt 11000 ] || lo=61000
  while :; do
    p=$((10000 + RANDOM % (lo - 10000)))
    ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null | grep -q . || { echo "$p"; return; }
  done
}

# wait_port PORT [SECONDS]: until 127.0.0.1:PORT accepts; 1 if never.
wait_port() {
  local i
  for i in $(seq $((${2:-30} * 20))); do
    (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# start_nginx NAME SERVER_BLOCK_BODY: Debian nginx (nginx-light plus the
# echo module, libnginx-mod-http-echo) on a free loopback port, with a
# config written under $WORK/NAME; the master runs in the foreground (so
# the EXIT trap stops it); workers = cores; no access log. Sets NGX_PID
# (the master) and NGX_PORT.
start_nginx() {
  local d="$WORK/$1" body=$2
  need nginx nginx-light
  [ -f /usr/lib/nginx/modules/ngx_http_echo_module.so ] ||
    apt-get install -y libnginx-mod-http-echo >/dev/null 2>&1 || die "cannot install libnginx-mod-http-echo"
  mkdir -p "$d/logs" "$d/tmp"
  NGX_PORT=$(free_port)
  cat >"$d/nginx.conf" <<NGXEOF
load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;
worker_processes auto;
worker_rlimit_nofile 65536;
pid $d/nginx.pid;
error_log $d/logs/error.log warn;
events { worker_connections 20000; multi_accept on; }
http {
  access_log off;
  client_body_temp_path $d/tmp/body;
  proxy_temp_path $d/tmp/proxy;
  fastcgi_temp_path $d/tmp/fcgi;
  uwsgi_temp_path $d/tmp/uwsgi;
  scgi_temp_path $d/tmp/scgi;
  keepalive_requests 1000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$NGX_PORT backlog=4096;
    $body
  }
}
NGXEOF
  "${NICE[@]}" nginx -p "$d" -c "$d/nginx.conf" -g 'daemon off;' >"$d/logs/stdout" 2>&1 &
  NGX_PID=$!
  SERVER_PIDS+=("$NGX_PID")
  wait_port "$NGX_PORT" 10 || { cat "$d/logs/error.log" "$d/logs/stdout" >&2; die "nginx did not start"; }
}

# stop_pid PID: stops a server this shell started (nginx master, WireMock,
# bare_mhd) and forgets it.
stop_pid() {
  local pid=$1 keep=() p
  kill -TERM "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
  for p in "${SERVER_PIDS[@]}"; do [ "$p" != "$pid" ] && keep+=("$p"); done
  SERVER_PIDS=("${keep[@]}")
}

# The WireMock standalone jar, from the npm package `wiremock` (it bundles
# build/wiremock-standalone-VERSION.jar; Maven Central is not reachable
# here). Sets WIREMOCK_JAR, or leaves it empty when java, npm or the
# package is unavailable, or NO_WIREMOCK=1 (the benches then skip it).
WIREMOCK_VERSION=${WIREMOCK_VERSION:-3.13.2}
wiremock_jar() {
  WIREMOCK_JAR=
  [ "${NO_WIREMOCK:-0}" = 1 ] && return 0
  command -v java >/dev/null || return 0
  local dir="$BENCH_OUT/wiremock"
  local jar="$dir/package/build/wiremock-standalone-$WIREMOCK_VERSION.jar"
  if [ ! -f "$jar" ]; then
    command -v npm >/dev/null || return 0
    mkdir -p "$dir"
    (cd "$dir" && timeout 300 npm pack "wiremock@$WIREMOCK_VERSION" >/dev/null 2>&1 &&
       tar xzf "wiremock-$WIREMOCK_VERSION.tgz") || return 0
  fi
  [ -f "$jar" ] && WIREMOCK_JAR=$jar
  return 0
}

# start_wiremock NAME MAPPING_JSON: WireMock standalone on a free loopback
# port with one stub mapping; tuned: no request journal, no request
# logging, async responses (a delay does not hold a Jetty thread).
# Sets WM_PID and WM_PORT.
start_wiremock() {
  local d="$WORK/$1"
  mkdir -p "$d/mappings" "$d/__files"
  printf '%s\n' "$2" >"$d/mappings/stub.json"
  WM_PORT=$(free_port)
  # shellcheck disable=SC2086
  "${NICE[@]}" java ${WIREMOCK_JAVA_OPTS:-} -jar "$WIREMOCK_JAR" --port "$WM_PORT" \
    --bind-address 127.0.0.1 --root-dir "$d" --no-request-journal --disable-request-logging \
    --disable-banner --async-response-enabled true --async-response-threads 64 \
    --container-threads 64 --jetty-acceptor-threads 2 >"$d/out" 2>&1 &
  WM_PID=$!
  SERVER_PIDS+=("$WM_PID")
  wait_port "$WM_PORT" 60 || { cat "$d/out" >&2; die "WireMock did not start"; }
}

# tree_rss_kb PID: VmRSS (kB) of a process plus its direct children
# (nginx: master and workers).
tree_rss_kb() {
  local p s=0 v
  for p in "$1" $(pgrep -P "$1"); do
    v=$(awk '/^VmRSS:/ {print $2}' /proc/"$p"/status 2>/dev/null)
    s=$((s + ${v:-0}))
  done
  echo "$s"
}

# cpu_ticks PID: clock ticks of CPU (user + system) PID and its children
# have used so far (nginx's workers are its master's children). A server's
# CPU per request is what a shared machine's noise moves least.
cpu_ticks() {
  local t=0 p v
  for p in "$1" $(pgrep -P "$1" 2>/dev/null); do
    v=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}') || v=0
    t=$((t + ${v:-0}))
  done
  echo "$t"
}
# Microseconds a clock tick of cpu_ticks (and of /proc/PID/stat) stands for.
TICK_US=$(( 1000000 / $(getconf CLK_TCK) ))

# wrk_stats URL SECONDS: wrk -t$THREADS -c$CONNS POSTing $WORK/post.lua's
# request; prints "rps p50_ms p99_ms non2xx sockerr requests".
wrk_stats() {
  local out
  out=$("${NICE[@]}" wrk -t"$THREADS" -c"$CONNS" -d"$2"s --timeout 5s --latency -s "$WORK/post.lua" \
        "$1" 2>&1) || true
  echo "$out" >>"${WRK_LOG:-/dev/null}"
  awk 'function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec:/ { rps = $2 }
    /^ +50%/ { p50 = ms($2) } /^ +99%/ { p99 = ms($2) }
    /Non-2xx/ { bad = $NF }
    /Socket errors:/ { gsub(/,/, ""); se = $4 + $6 + $8 + $10 }
    / requests in / { n = $1 }
    END { printf "%s %.3f %.3f %d %d %d\n", rps + 0, p50, p99, bad, se, n }' <<<"$out"
}

# aimock (issue 30), the LLM mock fusebox's users would otherwise pick:
# the npm package @copilotkit/aimock at the version pinned in
# bench/aimock/package.json and package-lock.json, installed with `npm ci`
# into bench/aimock/node_modules (not in git). Sets AIMOCK_BIN (its
# `llmock` command) and AIMOCK_VERSION, or leaves AIMOCK_BIN empty with
# AIMOCK_NOTE saying why (no node or npm, npm unreachable, NO_AIMOCK=1).
aimock_bin() {
  AIMOCK_BIN= AIMOCK_VERSION= AIMOCK_NOTE=
  local dir="$BENCH_DIR/aimock" pkg
  pkg="$dir/node_modules/@copilotkit/aimock/package.json"
  [ "${NO_AIMOCK:-0}" = 1 ] && { AIMOCK_NOTE="NO_AIMOCK=1"; return 0; }
  command -v node >/dev/null || { AIMOCK_NOTE="node is not installed"; return 0; }
  if [ ! -f "$pkg" ]; then
    command -v npm >/dev/null || { AIMOCK_NOTE="npm is not installed"; return 0; }
    (cd "$dir" && timeout 300 npm ci --no-audit --no-fund >/dev/null 2>&1) ||
      { AIMOCK_NOTE="npm ci failed (registry unreachable?)"; return 0; }
  fi
  AIMOCK_VERSION=$(node -p "require('$pkg').version" 2>/dev/null) || AIMOCK_VERSION=
  [ -x "$dir/node_modules/.bin/llmock" ] && [ -n "$AIMOCK_VERSION" ] ||
    { AIMOCK_NOTE="the package has no llmock command"; return 0; }
  AIMOCK_BIN=$dir/node_modules/.bin/llmock
}

# start_aimock NAME FIXTURE_JSON: aimock on a free loopback port with one
# fixture file, logging off. Sets AM_PID and AM_PORT.
start_aimock() {
  local d="$WORK/$1"
  mkdir -p "$d"
  printf '%s\n' "$2" >"$d/fixtures.json"
  AM_PORT=$(free_port)
  "${NICE[@]}" "$AIMOCK_BIN" --port "$AM_PORT" --host 127.0.0.1 --fixtures "$d/fixtures.json" \
    --log-level silent >"$d/out" 2>&1 &
  AM_PID=$!
  SERVER_PIDS+=("$AM_PID")
  wait_port "$AM_PORT" 30 || { cat "$d/out" >&2; die "aimock did not start"; }
}
