#!/usr/bin/env bash
# Installs fusebox the ways a user would and plays a verdict with each, from
# a folder outside the checkout with no FUSEBOX_* variable set:
#   1. cmake --install into a temp prefix, the prefix moved once (mv P Q):
#      `fusebox run ratelimit/retry_after_seconds` exits 0, and
#      `fusebox exec transient/http_503 -- sh -c CURL-LOOP` exits 0 with a
#      client that retries, 1 with one that gives up at the first 503;
#   2. the artefacts of scripts/package.sh (built here into a temp dist/):
#      the .deb unpacked into a fresh root (dpkg-deb -x) and run from there;
#      the npm tarballs installed offline into an empty project, then
#      `npx fusebox run ratelimit/retry_after_seconds` and the Node helper's
#      use('ratelimit/retry_after_seconds'); the wheel in a fresh venv
#      (--system-site-packages, for pytest) and a pytest file using the
#      `fusebox` fixture with no -p.
# Prints each step's time (install, install to first verdict) and each
# artefact's size.
# usage: bash scripts/smoke-install.sh [--build DIR] [--install-only]
# Exit 0 all passed, 1 a check failed, 77 a needed tool is absent (with
# FUSEBOX_TEST_STRICT=1: 1 instead).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
packages=1
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --install-only) packages=0; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "smoke-install.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
pass=0 fail=0 skipped=""
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
skip() {
  if [ "${FUSEBOX_TEST_STRICT:-0}" = 1 ]; then bad "$*"; else skipped="$skipped; $*"; echo "SKIP $*"; fi
}
have() { command -v "$1" > /dev/null 2>&1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f s", b - a }'; }

have cmake || { skip "cmake is not installed"; exit 77; }
have curl || { skip "curl is not installed"; exit 77; }
[ -x "$build/fusebox" ] || { echo "FAIL no fusebox in $build (build first: cmake --build build)"; exit 1; }

# Outside the checkout, with none of our variables.
tmp=$(mktemp -d /tmp/fusebox-smoke-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
case $tmp/ in "$src"/*) echo "FAIL the temp folder $tmp is inside the checkout"; exit 1 ;; esac
for v in $(compgen -e | grep '^FUSEBOX_'); do unset "$v"; done
mkdir -p "$tmp/cwd"
cd "$tmp/cwd" || exit 1

# A client that retries a 503 until answered (at most 6 tries, 0.3 s apart),
# and one that gives up at the first 503 (its exit status is its outcome).
BODY='{"model":"m","messages":[{"role":"user","content":"hi"}]}'
RETRYING='for i in 1 2 3 4 5 6; do c=$(curl -s -o /dev/null -w "%{http_code}" -X POST -H "content-type: application/json" -d '"'$BODY'"' "$OPENAI_BASE_URL/chat/completions"); [ "$c" = 200 ] && exit 0; sleep 0.3; done; exit 1'
ONCE='c=$(curl -s -o /dev/null -w "%{http_code}" -X POST -H "content-type: application/json" -d '"'$BODY'"' "$OPENAI_BASE_URL/chat/completions"); [ "$c" = 200 ]'

# verdict NAME BIN: runs the first verdict with BIN, checks exit 0.
verdict() {
  local what=$1 exe=$2 t0=$3
  "$exe" run ratelimit/retry_after_seconds > "$tmp/$what.run" 2>&1
  local rc=$?
  if [ $rc = 0 ] && grep -q "1 scenario: 1 passed" "$tmp/$what.run"; then
    ok "$what: fusebox run ratelimit/retry_after_seconds exits 0 (install to first verdict: $(since "$t0"))"
  else
    bad "$what: fusebox run ratelimit/retry_after_seconds exit $rc: $(tail -3 "$tmp/$what.run")"
  fi
}

echo "== cmake --install, then the prefix moved"
t0=$(now)
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.out" 2>&1 || { bad "cmake --install: $(tail -3 "$tmp/install.out")"; }
echo "     install: $(since "$t0"), $(du -sh "$tmp/prefix" | cut -f1) installed"
mv "$tmp/prefix" "$tmp/moved"
fb=$tmp/moved/bin/fusebox
for f in share/fusebox/scenarios/ratelimit/retry_after_seconds.lua share/fusebox/profiles/curl-retry.lua \
         share/fusebox/integrations/pytest/fusebox_pytest.py share/fusebox/integrations/node/fusebox.mjs \
         share/doc/fusebox/README.md share/doc/fusebox/install.md; do
  [ -f "$tmp/moved/$f" ] && ok "installed $f" || bad "not installed: $f"
done
[ ! -e "$tmp/moved/bin/fusebox-home" ] && ok "the build-tree marker is not installed" || bad "bin/fusebox-home was installed"
"$fb" --version | grep -qxF "library: $tmp/moved/share/fusebox (next to the binary)" &&
  ok "--version: the moved library, next to the binary" || bad "--version: $("$fb" --version 2>&1)"
verdict install "$fb" "$t0"
"$fb" exec transient/http_503 -- sh -c "$RETRYING" > "$tmp/exec.out" 2>&1
rc=$?
[ $rc = 0 ] && ok "exec transient/http_503 with a retrying curl exits 0" || bad "exec (retrying curl) exit $rc: $(tail -5 "$tmp/exec.out")"
"$fb" exec transient/http_503 -- sh -c "$ONCE" > "$tmp/exec1.out" 2>&1
rc=$?
[ $rc = 1 ] && ok "exec transient/http_503 with a curl that gives up exits 1" || bad "exec (one curl) exit $rc, not 1: $(tail -5 "$tmp/exec1.out")"
"$fb" run ratelimit/nope > "$tmp/nope.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -qF "(library: $tmp/moved/share/fusebox)" "$tmp/nope.out" &&
  ok "an unknown name exits 2 and names the library" || bad "unknown name: exit $rc: $(cat "$tmp/nope.out")"

if [ $packages = 0 ]; then
  echo "$pass passed, $fail failed (packages not tried: --install-only)"
  [ $fail = 0 ]; exit $?
fi

echo "== scripts/package.sh"
for t in dpkg-deb dpkg-shlibdeps npm /usr/bin/python3; do
  have "$t" || { skip "$t is not installed: no packages built"; echo "$pass passed, $fail failed"; [ $fail = 0 ] && exit 77; exit 1; }
done
t0=$(now)
if bash "$src/scripts/package.sh" --build "$build" --out "$tmp/dist" > "$tmp/package.out" 2>&1; then
  ok "package.sh ($(since "$t0"))"
else
  bad "package.sh: $(tail -5 "$tmp/package.out")"
fi
sed -n '/== sizes/,$p' "$tmp/package.out"
version=$(sed -n 's/^#define FUSEBOX_VERSION "\(.*\)"$/\1/p' "$src/cli/cli.h")

echo "== .deb, unpacked into a fresh root"
deb=$(ls "$tmp"/dist/fusebox_"$version"_*.deb 2> /dev/null | head -1)
if [ -n "$deb" ]; then
  t0=$(now)
  dpkg-deb -x "$deb" "$tmp/root" && ok "dpkg-deb -x ($(since "$t0"))" || bad "dpkg-deb -x $deb"
  verdict deb "$tmp/root/usr/bin/fusebox" "$t0"
  "$tmp/root/usr/bin/fusebox" --version | grep -qxF "library: $tmp/root/usr/share/fusebox (next to the binary)" &&
    ok "the unpacked binary finds /usr/share/fusebox of its root" || bad "deb --version: $("$tmp/root/usr/bin/fusebox" --version)"
  dep=$(dpkg-deb -f "$deb" Depends)
  # Every library the binary loads directly comes from a package it depends on.
  for lib in $(objdump -p "$tmp/root/usr/bin/fusebox" 2> /dev/null | awk '$1 == "NEEDED" { print $2 }'); do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
    [ -n "$path" ] || { bad "$lib: not found by ldconfig"; continue; }
    pkg=
    for p in "$path" "/usr$path" "$(readlink -f "$path")"; do  # merged /usr: either name
      pkg=$(dpkg -S "$p" 2> /dev/null | head -1 | cut -d: -f1)
      [ -n "$pkg" ] && break
    done
    case ", $dep" in *", $pkg "*|*", $pkg,"*) ok "Depends names $pkg ($lib)" ;; *) bad "Depends ($dep) lacks $pkg for $lib" ;; esac
  done
  [ "$(dpkg-deb -f "$deb" Recommends)" = faketime ] && ok "Recommends: faketime" || bad "Recommends: $(dpkg-deb -f "$deb" Recommends)"
else
  bad "no .deb in $tmp/dist"
fi

echo "== npm, installed offline into an empty project"
if have node && have npx; then
  mkdir -p "$tmp/npmproj" && cd "$tmp/npmproj" || exit 1
  printf '{ "name": "smoke", "version": "1.0.0", "private": true, "type": "module" }\n' > package.json
  t0=$(now)
  if npm install --offline --no-audit --no-fund "$tmp/dist/fusebox-linux-x64-$version.tgz" \
       "$tmp/dist/fusebox-$version.tgz" > "$tmp/npm.out" 2>&1; then
    ok "npm install --offline ($(since "$t0"))"
  else
    bad "npm install: $(tail -5 "$tmp/npm.out")"
  fi
  npx fusebox run ratelimit/retry_after_seconds > "$tmp/npx.out" 2>&1
  rc=$?
  [ $rc = 0 ] && grep -q "1 scenario: 1 passed" "$tmp/npx.out" &&
    ok "npx fusebox run ratelimit/retry_after_seconds exits 0 (install to first verdict: $(since "$t0"))" ||
    bad "npx fusebox run: exit $rc: $(tail -3 "$tmp/npx.out")"
  npx fusebox run ratelimit/nope > /dev/null 2>&1
  [ $? = 2 ] && ok "npx fusebox passes exit 2 through" || bad "npx fusebox: exit status not passed through"
  FUSEBOX_BINARY=/bin/false npx fusebox --version > /dev/null 2>&1
  [ $? = 1 ] && ok "FUSEBOX_BINARY names another binary" || bad "FUSEBOX_BINARY ignored"
  cat > helper.mjs <<'EOF'
import { startFusebox } from 'fusebox';
const fb = await startFusebox({ keep: null });
const name = await fb.session('smoke').use('ratelimit/retry_after_seconds');
console.log(`used: ${name}`);
process.exit((await fb.stop()) === 0 ? 0 : 1);
EOF
  node helper.mjs > "$tmp/helper.out" 2>&1 && grep -q "^used: 429 with Retry-After" "$tmp/helper.out" &&
    ok "the Node helper (import 'fusebox') uses a library name with the package's binary" ||
    bad "Node helper: $(tail -3 "$tmp/helper.out")"
  cd "$tmp/cwd" || exit 1
else
  skip "node/npx are not installed: npm packages not tried"
fi

echo "== wheel, in a fresh venv"
whl=$(ls "$tmp"/dist/fusebox-"$version"-py3-none-*.whl 2> /dev/null | head -1)
if [ -z "$whl" ]; then
  bad "no wheel in $tmp/dist"
elif ! /usr/bin/python3 -c 'import venv, pytest' > /dev/null 2>&1; then
  skip "/usr/bin/python3 lacks venv or pytest (Debian: python3-venv python3-pytest)"
else
  t0=$(now)
  /usr/bin/python3 -m venv --system-site-packages "$tmp/venv" &&
    "$tmp/venv/bin/python" -m pip install --no-index --no-deps --quiet "$whl" > "$tmp/pip.out" 2>&1 &&
    ok "venv + pip install --no-index ($(since "$t0"))" || bad "pip install: $(tail -5 "$tmp/pip.out")"
  "$tmp/venv/bin/fusebox" --version 2> /dev/null | grep -q "library: $tmp/venv/.*/fusebox_dist/share/fusebox (next to the binary)" &&
    ok "the wheel's fusebox command finds the wheel's library" || bad "wheel fusebox --version: $("$tmp/venv/bin/fusebox" --version 2>&1)"
  mkdir -p "$tmp/pyproj"
  cat > "$tmp/pyproj/test_smoke.py" <<'EOF'
import json
import time
import urllib.error
import urllib.request


def call(url):
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    req = urllib.request.Request(url + "/chat/completions", data=body, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers


def test_a_library_scenario_judged(fusebox):
    """A client that honours Retry-After, judged on the library's scenario."""
    assert fusebox.use("ratelimit/retry_after_seconds") == "429 with Retry-After: 2 (seconds) is honoured"
    status, headers = call(fusebox.openai_base_url)
    assert status == 429
    time.sleep(float(headers["retry-after"]) + 0.1)
    assert call(fusebox.openai_base_url)[0] == 200
    fusebox.assert_verdicts()
EOF
  (cd "$tmp/pyproj" && "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider test_smoke.py) > "$tmp/pytest.out" 2>&1
  rc=$?
  [ $rc = 0 ] && ok "pytest with the fusebox fixture, no -p (install to first verdict: $(since "$t0"))" ||
    bad "pytest in the venv: exit $rc: $(tail -8 "$tmp/pytest.out")"
fi

echo "$pass passed, $fail failed${skipped:+ (skipped$skipped)}"
[ $fail = 0 ] || exit 1
[ -z "$skipped" ] || exit 77
exit 0
