#!/usr/bin/env bash
# Builds the libFuzzer targets fuzz/fuzz_*.c into fuzz/build/ (or $FUZZ_BUILD)
# with clang and -fsanitize=fuzzer,address,undefined. The library sources a
# target needs are compiled directly (not through CMake) with the same
# sanitizers, so coverage reaches into guard/, sim/, import/, reports/ and cli/.
#
#   bash fuzz/build.sh            build every target
#   bash fuzz/build.sh sse wire   build only these
#
# Objects are rebuilt when their source or any header of the tree is newer.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${FUZZ_BUILD:-$here/build}"
CC="${CC_FUZZ:-clang}"
JOBS="${JOBS:-$(nproc)}"

if ! command -v "$CC" >/dev/null; then
  echo "fuzz/build.sh: $CC not found (apt-get install -y clang)" >&2
  exit 2
fi
# libFuzzer ships with clang's runtime; check it links before compiling.
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' \
  >"$probe/p.c"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>"$probe/err"; then
  cat "$probe/err" >&2
  echo "fuzz/build.sh: no libFuzzer runtime (apt-get install -y libclang-rt-14-dev)" >&2
  exit 2
fi

PKGS="libcjson libcurl lua5.4 libcrypto libnghttp2 zlib" # libcrypto: SHA-256 in sim/keying.c; libnghttp2: sim/h2_bridge.c; zlib: CRC-32 in */eventstream.c
CFLAGS=(-std=gnu11 -g -O1 -fno-omit-frame-pointer
        -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
        -I"$root" $(pkg-config --cflags $PKGS)
        # Smaller Lua budgets than the server's, so an input that loops or
        # allocates without end costs milliseconds, not seconds. The CPU
        # budget too: the sanitizer build's default (8 s, so its memory limit
        # is reached first) let one call in a loop of string.rep outlast
        # libFuzzer's 10 s timeout on a loaded machine.
        -DFUSEBOX_LUA_INSN_MAX=1000000L '-DFUSEBOX_LUA_MEM_MAX=((size_t)16 << 20)'
        -DFUSEBOX_LUA_CPU_MAX_MS=250L)
LIB_WARN=(-Wall -Wextra -Wno-unused-parameter)
OWN_WARN=(-Wall -Wextra -Werror -Wno-unused-parameter)
LIBS=(-fsanitize=fuzzer,address,undefined $(pkg-config --libs $PKGS) -lpthread -lm)

# What each target links, beyond its own fuzz_NAME.c.
GUARD=("$root"/guard/*.c)
REPORTS=("$root"/reports/*.c)
COMMON=("$root"/common/*.c)
SIM_LUA=("$root"/sim/lua_*.c "$root"/sim/step.c "$root"/sim/dialect*.c
         "$root"/sim/keying.c "$root"/sim/errors.c "$root"/sim/ratelimit.c
         "$root"/sim/trace.c "$root"/sim/redact.c "$root"/sim/term_safe.c
         "$root"/sim/env.c "$root"/sim/srcmap.c "$root"/sim/http_date.c
         "$root"/sim/provider_name.c "$root"/sim/blob.c "$root"/sim/sse_text.c
         "$root"/sim/json_write.c "$root"/sim/eventstream.c)
declare -A SRC XLIBS
SRC[scenario]="${SIM_LUA[*]} ${REPORTS[*]} ${COMMON[*]}"
SRC[request]="${SIM_LUA[*]} ${COMMON[*]}"
SRC[sse]="${GUARD[*]}"
SRC[wire]="${GUARD[*]}"
SRC[frames]="${GUARD[*]}"
SRC[trace]="${REPORTS[*]} ${COMMON[*]}"
SRC[record]="$root/import/record_note.c $root/import/import_read.c $root/sim/upstream.c $root/sim/env.c $root/sim/redact.c $root/sim/term_safe.c $root/sim/keying.c $root/sim/errors.c"
# Every sim/ source: the server itself (sim__request_read, the sessions and
# the Redis state behind the control API), with libmicrohttpd and hiredis.
SIM_ALL=("$root"/sim/*.c)
SRC[api]="${SIM_ALL[*]} ${COMMON[*]}"
XLIBS[api]="$(pkg-config --libs libmicrohttpd hiredis)"
XLIBS[control]="${XLIBS[api]}"
SRC[merge]="${REPORTS[*]} ${COMMON[*]} $root/sim/redact.c $root/sim/keying.c $root/sim/errors.c"
SRC[control]="${SIM_ALL[*]} ${REPORTS[*]} ${COMMON[*]} $root/cli/control.c $root/cli/control_journal.c $root/cli/scenario_load.c $root/cli/client_config.c ${GUARD[*]}"
# sim/ against the fake hiredis of fuzz_redis.c (libhiredis not linked).
SRC[redis]="${SIM_ALL[*]} ${COMMON[*]}"
XLIBS[redis]="$(pkg-config --libs libmicrohttpd)"
# The body scanner alone, held to cJSON (in PKGS).
SRC[body]="$root/sim/body_scan.c"
# The HTTP/2 bridge alone, with libnghttp2 (in PKGS).
SRC[h2]="$root/sim/h2_bridge.c $root/sim/h2c.c"
if [ -f "$root/import/import.c" ]; then
  SRC[import]="$(echo "$root"/import/import*.c) ${SIM_LUA[*]} ${COMMON[*]}"
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$here"/fuzz_*.c; do
    t="$(basename "$f" .c)"
    t="${t#fuzz_}"
    [ -n "${SRC[$t]:-}" ] && targets+=("$t")
  done
fi

mkdir -p "$out/obj"
newest_header="$(find "$root/guard" "$root/sim" "$root/import" "$root/reports" "$root/cli" "$root/common" "$here" \
                   -maxdepth 1 -name '*.h' -printf '%T@\n' | sort -n | tail -1)"

obj_of() { echo "$out/obj/$(echo "${1#$root/}" | tr / _ | sed 's/\.c$/.o/')"; }

# Compiles src into out/obj unless the object is newer than it and every header.
compile() {
  local src="$1" obj warn
  obj="$(obj_of "$src")"
  if [ -f "$obj" ]; then
    local o s
    o="$(stat -c %Y "$obj")"
    s="$(stat -c %Y "$src")"
    if [ "$o" -ge "$s" ] && [ "$o" -ge "${newest_header%.*}" ]; then
      return 0
    fi
  fi
  case "$src" in "$here"/*) warn=("${OWN_WARN[@]}") ;; *) warn=("${LIB_WARN[@]}") ;; esac
  "$CC" "${CFLAGS[@]}" "${warn[@]}" -c "$src" -o "$obj"
}

all_src=()
for t in "${targets[@]}"; do
  if [ -z "${SRC[$t]:-}" ] || [ ! -f "$here/fuzz_$t.c" ]; then
    echo "fuzz/build.sh: unknown target '$t'" >&2
    exit 2
  fi
  all_src+=("$here/fuzz_$t.c" ${SRC[$t]})
done
# Compile every distinct source once, JOBS at a time.
failed=0
pids=()
while read -r src; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  compile "$src" &
  pids+=($!)
done < <(printf '%s\n' "${all_src[@]}" | sort -u)
for p in "${pids[@]}"; do wait "$p" || failed=1; done
if [ "$failed" -ne 0 ]; then
  echo "fuzz/build.sh: compilation failed" >&2
  exit 1
fi

for t in "${targets[@]}"; do
  objs=()
  for s in "$here/fuzz_$t.c" ${SRC[$t]}; do objs+=("$(obj_of "$s")"); done
  # shellcheck disable=SC2086
  "$CC" "${objs[@]}" "${LIBS[@]}" ${XLIBS[$t]:-} -o "$out/fuzz_$t"
  echo "built $out/fuzz_$t"
done
