#!/usr/bin/env bash
# The steps of the composite GitHub Action (action.yml), as a script ctest
# runs on this machine too (tests/cli/action.sh).
#   bash scripts/action.sh install   builds fusebox from this checkout into
#       $FB_PREFIX (default $RUNNER_TEMP/fusebox), installing the build
#       packages with apt-get when pkg-config lacks one, and appends its bin/
#       to $GITHUB_PATH when that is set. Prints the prefix.
#   bash scripts/action.sh run       FB_COMMAND set: fusebox exec $FB_ARGS
#       --junit $FB_JUNIT --html $FB_HTML $FB_SCENARIOS -- sh -c "$FB_COMMAND";
#       unset or empty: fusebox run with the same reports. Exits
#       as fusebox does (0 pass, 1 a verdict failed, 2 usage or input), and
#       appends the --markdown summary to $GITHUB_STEP_SUMMARY when set.
# FB_SCENARIOS and FB_ARGS are split on blanks (library names and paths
# have none); FB_COMMAND is one shell command line.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
tmpbase=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
prefix=${FB_PREFIX:-$tmpbase/fusebox}

install() {
  local mods="libmicrohttpd libcurl libcjson lua5.4 cunit hiredis libcrypto zlib" missing=0 m
  command -v cmake > /dev/null && command -v cc > /dev/null && command -v pkg-config > /dev/null || missing=1
  for m in $mods; do [ $missing = 1 ] || pkg-config --exists "$m" || missing=1; done
  if [ $missing = 1 ]; then
    local sudo=
    [ "$(id -u)" = 0 ] || sudo=sudo
    echo "fusebox action: installing the build packages" >&2
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      build-essential cmake pkg-config libmicrohttpd-dev libcurl4-openssl-dev libssl-dev libcjson-dev \
      liblua5.4-dev libcunit1-dev libhiredis-dev zlib1g-dev > /dev/null
  fi
  local build=$tmpbase/fusebox-build
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
  cmake --build "$build" --target fusebox -j"$(nproc)" > /dev/null
  cmake --install "$build" --prefix "$prefix" --strip > /dev/null
  "$prefix/bin/fusebox" --version >&2
  [ -z "${GITHUB_PATH:-}" ] || echo "$prefix/bin" >> "$GITHUB_PATH"
  echo "$prefix"
}

run() {
  local fb=$prefix/bin/fusebox junit=${FB_JUNIT:-fusebox.xml} html=${FB_HTML:-fusebox.html} md rc=0
  [ -x "$fb" ] || fb=fusebox
  md=$(mktemp "$tmpbase/fusebox-summary-XXXXXX")
  # shellcheck disable=SC2086 # split on blanks, as documented
  if [ -n "${FB_COMMAND:-}" ]; then
    [ -n "${FB_SCENARIOS:-}" ] || { echo "fusebox action: 'command' needs 'scenarios'" >&2; exit 2; }
    "$fb" exec ${FB_ARGS:-} --junit "$junit" --html "$html" --markdown "$md" ${FB_SCENARIOS} -- sh -c "$FB_COMMAND" || rc=$?
  else
    "$fb" run ${FB_ARGS:-} --junit "$junit" --html "$html" --markdown "$md" ${FB_SCENARIOS:-} || rc=$?
  fi
  # The job summary: the failed verdicts with their evidence (a summary
  # file is appended to, as GitHub documents).
  [ -z "${GITHUB_STEP_SUMMARY:-}" ] || [ ! -s "$md" ] || cat "$md" >> "$GITHUB_STEP_SUMMARY"
  rm -f "$md"
  exit $rc
}

case ${1:-} in
  install) install ;;
  run) run ;;
  *) echo "usage: bash scripts/action.sh install|run" >&2; exit 2 ;;
esac
