#!/usr/bin/env bash
# Builds the release artefacts of fusebox into dist/ (or --out DIR), offline:
#   fusebox_VERSION_ARCH.deb            dpkg-deb; Depends: the runtime libraries
#                                       (dpkg-shlibdeps), Recommends: faketime
#   fusebox-VERSION.tgz                 npm: the Node helper (main) and a fusebox bin
#   fusebox-linux-x64-VERSION.tgz       npm: the binary and share/fusebox, an
#                                       optional dependency of the one above
#   fusebox-VERSION-py3-none-PLAT.whl   the pytest plugin (pytest11 entry point)
#                                       with the binary and share/fusebox inside
# usage: bash scripts/package.sh [--build DIR] [--out DIR]
#   --build DIR   the build tree to package (default build/; configured and
#                 built here as the README does)
#   --out DIR     where the artefacts go (default dist/, gitignored)
# lintian checks the .deb when it is installed (it is not installed here on
# purpose: say so, never install it). docs/install.md says how to use each.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
out=$src/dist
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --out) mkdir -p "$2"; out=$(cd "$2" && pwd); shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
for t in cmake dpkg-deb dpkg-shlibdeps npm /usr/bin/python3; do
  command -v "$t" > /dev/null || { echo "package.sh: needs $t" >&2; exit 2; }
done

version=$(sed -n 's/^#define FUSEBOX_VERSION "\(.*\)"$/\1/p' "$src/cli/cli.h")
[ -n "$version" ] || { echo "package.sh: no FUSEBOX_VERSION in cli/cli.h" >&2; exit 2; }
# The helpers' own metadata must say the same version.
for f in "$src/integrations/node/package.json" "$src/integrations/pytest/pyproject.toml"; do
  grep -q "\"$version\"" "$f" || { echo "package.sh: $f does not say version $version (cli/cli.h)" >&2; exit 2; }
done
grep -q "\"fusebox-linux-x64\": \"$version\"" "$src/integrations/node/package.json" ||
  { echo "package.sh: integrations/node/package.json: optionalDependencies is not fusebox-linux-x64 $version" >&2; exit 2; }
arch=$(dpkg --print-architecture)
case $(uname -m) in x86_64) npm_arch=x64 ;; aarch64) npm_arch=arm64 ;; *) npm_arch=$(uname -m) ;; esac
[ "$npm_arch" = x64 ] || echo "package.sh: note: the npm main package names fusebox-linux-x64 only; this is $npm_arch"

if [ "$build" = "$src/build" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
fi
cmake --build "$build" -j"$(nproc)" > /dev/null
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One stripped install tree, copied into each artefact.
cmake --install "$build" --prefix "$work/prefix" --strip > /dev/null
rm -f "$work/prefix/share/fusebox/integrations/node/node_modules"

echo "== deb"
root=$work/deb
mkdir -p "$root/DEBIAN" "$root/usr"
cp -a "$work/prefix/." "$root/usr/"
# The runtime libraries, as Debian names them (dpkg-shlibdeps reads the
# binary's NEEDED entries and the shlibs/symbols files of their packages).
mkdir -p "$work/shlibs/debian"
printf 'Source: fusebox\n\nPackage: fusebox\nArchitecture: any\n' > "$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O -e "$root/usr/bin/fusebox" 2> /dev/null |
          sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "package.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
installed_kb=$(du -sk "$root/usr" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: fusebox
Version: $version
Architecture: $arch
Maintainer: fusebox maintainers <fusebox@localhost>
Installed-Size: $installed_kb
Depends: $depends
Recommends: faketime
Section: devel
Priority: optional
Description: fault-injection harness for LLM API clients
 A fake OpenAI/Anthropic provider that plays Lua scenarios (429s with
 Retry-After, 5xx, hangs, dropped streams, broken tool calls), a built-in
 guarded client, and verdicts on what a client did on the wire.
 The standard scenarios and profiles are in /usr/share/fusebox.
EOF
mkdir -p "$root/usr/share/doc/fusebox"
printf 'fusebox %s\n\nSee /usr/share/doc/fusebox/README.md.\n' "$version" > "$root/usr/share/doc/fusebox/copyright"
deb=$out/fusebox_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" > /dev/null
echo "   $deb (Depends: $depends)"
if command -v lintian > /dev/null; then
  lintian "$deb" || echo "   lintian reported the above"
else
  echo "   lintian is not installed: not checked"
fi

echo "== npm"
plat=$work/npm-plat
mkdir -p "$plat"
cp -a "$work/prefix/bin" "$work/prefix/share" "$plat/"
cat > "$plat/package.json" <<EOF
{
  "name": "fusebox-linux-$npm_arch",
  "version": "$version",
  "description": "The fusebox binary and its library for Linux $npm_arch (glibc; built on Debian 12): an optional dependency of fusebox",
  "os": ["linux"],
  "cpu": ["$npm_arch"],
  "files": ["bin", "share"],
  "preferUnplugged": true
}
EOF
printf 'The fusebox binary for Linux %s; install the `fusebox` package, not this one.\n' "$npm_arch" > "$plat/README.md"
main=$work/npm-main
mkdir -p "$main/bin"
cp "$src/integrations/node/package.json" "$src/integrations/node/fusebox.mjs" "$main/"
cp "$src/integrations/node/bin/fusebox.js" "$main/bin/"
cp "$src/integrations/README.md" "$main/README.md"
(cd "$plat" && npm pack --silent --pack-destination "$out" > /dev/null)
(cd "$main" && npm pack --silent --pack-destination "$out" > /dev/null)
echo "   $out/fusebox-$version.tgz"
echo "   $out/fusebox-linux-$npm_arch-$version.tgz"

echo "== wheel"
py=$work/wheel
mkdir -p "$py"
cp "$src/integrations/pytest/pyproject.toml" "$src/integrations/pytest/setup.py" \
   "$src/integrations/pytest/fusebox_pytest.py" "$py/"
cp -a "$src/integrations/pytest/fusebox_dist" "$py/"
rm -rf "$py/fusebox_dist/__pycache__"
cp -a "$work/prefix/bin" "$work/prefix/share" "$py/fusebox_dist/"
rm -rf "$py/fusebox_dist/share/doc"
cp "$src/integrations/README.md" "$py/README.md"
rm -f "$out"/fusebox-"$version"-*.whl
(cd "$py" && PIP_NO_INDEX=1 /usr/bin/python3 -m pip wheel --no-index --no-build-isolation --no-deps \
   --quiet -w "$out" . ) 2>&1 | grep -v "^$" || true
whl=$(ls "$out"/fusebox-"$version"-py3-none-*.whl 2> /dev/null | head -1)
[ -n "$whl" ] || { echo "package.sh: pip wheel made no wheel" >&2; exit 1; }
echo "   $whl"

echo "== sizes"
(cd "$out" && ls -l fusebox_"$version"_"$arch".deb fusebox-"$version".tgz \
   fusebox-linux-"$npm_arch"-"$version".tgz "$(basename "$whl")" | awk '{ printf "   %8.1f KiB  %s\n", $5 / 1024, $9 }')
