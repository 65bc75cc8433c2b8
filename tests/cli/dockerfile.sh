#!/usr/bin/env bash
# The Dockerfile, tested without docker (no base images here): its build
# stage's script (scripts/docker-build-stage.sh) builds and installs on this
# machine and the result plays a verdict from outside the checkout; the
# runtime stage installs exactly the packages of the libraries the binary
# links (dpkg -S of each NEEDED entry; libc6 is in debian:12-slim), and the
# build stage's packages are the README's build set (scripts/setup.sh);
# every COPY source exists.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd cmake objdump dpkg ldconfig
df=$src/Dockerfile

# The apt-get install list of a stage (1: build, 2: runtime).
stage_pkgs() {
  awk -v want="$1" '/^FROM /{ n++ } n == want && /apt-get install/ { on = 1 }
    on { for (i = 1; i <= NF; i++) { if ($i == "&&" && seen) { on = 0; break }
         if ($i ~ /^[a-z0-9][a-z0-9.+-]+$/ && $i != "apt-get" && $i != "install") { print $i; seen = 1 } } }' "$df" | sort -u
}
# Debian packages of the libraries a binary links directly.
linked_pkgs() {
  local lib path p pkg
  for lib in $(objdump -p "$1" | awk '$1 == "NEEDED" { print $2 }'); do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
    for p in "$path" "/usr$path" "$(readlink -f "$path")"; do
      pkg=$(dpkg -S "$p" 2> /dev/null | head -1 | cut -d: -f1)
      [ -n "$pkg" ] && { echo "$pkg"; break; }
    done
  done | sort -u
}

build_pkgs=$(stage_pkgs 1)
for p in $build_pkgs; do
  grep -qw -- "$p" "$src/scripts/setup.sh" && ok || bad "build stage package $p is not in scripts/setup.sh"
done
[ -n "$build_pkgs" ] && ok || bad "no build stage packages found in the Dockerfile"
for s in $(awk '$1 == "COPY" && $2 !~ /^--/ { for (i = 2; i < NF; i++) print $i }' "$df"); do
  [ -e "$src/$s" ] && ok || bad "COPY $s: not in the source tree"
done
grep -q '^ENTRYPOINT \["fusebox"\]$' "$df" && ok || bad "no ENTRYPOINT [\"fusebox\"]"
grep -q '^RUN bash scripts/docker-build-stage.sh /out/usr/local ' "$df" && ok || bad "the build stage does not run scripts/docker-build-stage.sh"

# The build stage's commands, here, into a fresh build tree.
bash "$src/scripts/docker-build-stage.sh" "$tmp/out/usr/local" "$tmp/build" > "$tmp/stage.out" 2>&1
rc=$?
[ $rc = 0 ] && ok || bad "docker-build-stage.sh exit $rc: $(tail -5 "$tmp/stage.out")"
fb=$tmp/out/usr/local/bin/fusebox
ldd "$fb" | grep -q "not found" && bad "unresolved libraries: $(ldd "$fb" | grep "not found")" || ok
# The runtime stage installs what the stage's binary links (not $bin: that
# may be a sanitizer build linking libasan).
want=$(linked_pkgs "$fb" | grep -vx libc6)
got=$(stage_pkgs 2)
[ -n "$want" ] && [ "$want" = "$got" ] && ok ||
  bad "runtime stage installs [$(echo $got)], the binary links [$(echo $want)] (+ libc6)"
mkdir -p "$tmp/cwd"
(cd "$tmp/cwd" && env -u FUSEBOX_HOME -u FUSEBOX_SCENARIOS "$fb" run ratelimit/retry_after_seconds) > "$tmp/run.out" 2>&1
[ $? = 0 ] && grep -q "1 scenario: 1 passed" "$tmp/run.out" && ok || bad "the stage's binary: $(tail -3 "$tmp/run.out")"
finish
