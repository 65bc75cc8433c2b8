#!/usr/bin/env bash
# Library names on the command line (cli/library.c): from a folder outside
# the checkout a name resolves (NAME, NAME.lua, a folder NAME, a path below
# the library), in run, exec, serve, check, list and which alike; an
# existing path wins over a name; an unknown name exits 2 saying "no
# scenario or file named X (library: DIR)" with a "did you mean" when one is
# close and none when nothing is; the library is found next to a copied
# binary's ../share/fusebox, else in $FUSEBOX_HOME, else not at all (a binary
# with no marker and no share/ beside it), and --version and list say where.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd curl timeout
unset FUSEBOX_HOME FUSEBOX_SCENARIOS
mkdir -p "$tmp/work" && cd "$tmp/work" || exit 1
lib=$src/scenarios

"$bin" which ratelimit/retry_after_seconds > which.out 2>&1
[ $? = 0 ] && [ "$(cat which.out)" = "$lib/ratelimit/retry_after_seconds.lua" ] && ok || bad "which NAME: $(cat which.out)"
[ "$("$bin" which ratelimit/retry_after_seconds.lua)" = "$lib/ratelimit/retry_after_seconds.lua" ] && ok || bad "which NAME.lua"
[ "$("$bin" which scenarios/ratelimit/retry_after_seconds.lua)" = "$lib/ratelimit/retry_after_seconds.lua" ] && ok || bad "which scenarios/NAME.lua (below the library)"
n=$(ls "$lib"/ratelimit/*.lua | wc -l)
[ "$("$bin" which ratelimit | wc -l)" = "$n" ] && ok || bad "which FOLDER: not the $n files"

"$bin" run ratelimit/retry_after_seconds > run.out 2>&1
[ $? = 0 ] && grep -q "1 scenario: 1 passed" run.out && ok || bad "run NAME: $(tail -3 run.out)"
"$bin" check transient/http_503 > check.out 2>&1 && grep -q "^ok  $lib/transient/http_503.lua" check.out && ok || bad "check NAME: $(cat check.out)"
"$bin" exec transient/http_503 -- sh -c 'for i in 1 2 3 4 5; do c=$(curl -s -o /dev/null -w "%{http_code}" -X POST -H "content-type: application/json" -d "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}" "$OPENAI_BASE_URL/chat/completions"); [ "$c" = 200 ] && exit 0; sleep 0.3; done; exit 1' > exec.out 2>&1
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] && grep -q "transient/http_503" exec.out && ok || bad "exec NAME: exit $rc: $(tail -3 exec.out)"
timeout 2 "$bin" serve transient/http_503 --port 0 > serve.out 2>&1
grep -q "serving $lib/transient/http_503.lua" serve.out && ok || bad "serve NAME: $(cat serve.out)"

# An existing path wins over the library's name.
mkdir -p ratelimit
cat > ratelimit/retry_after_seconds.lua <<'LUA'
return scenario { name = "the local one", provider = { chat { content = "x" } } }
LUA
"$bin" check ratelimit/retry_after_seconds.lua | grep -q "the local one" && ok || bad "an existing path did not win"
[ "$("$bin" which ratelimit)" = "ratelimit/retry_after_seconds.lua" ] && ok || bad "an existing folder did not win"
rm -r ratelimit

# Unknown names: exit 2, the library named, a guess only when close.
"$bin" run ratelimit/retry_after_secnds > unk.out 2>&1
[ $? = 2 ] && ok || bad "an unknown name should exit 2"
grep -qF "fusebox: no scenario or file named ratelimit/retry_after_secnds (library: $src)" unk.out && ok || bad "unknown: $(cat unk.out)"
grep -qF "did you mean ratelimit/retry_after_seconds?" unk.out && ok || bad "no guess: $(cat unk.out)"
"$bin" exec http_503 -- true > unk2.out 2>&1
[ $? = 2 ] && grep -qF "did you mean transient/http_503?" unk2.out && ok || bad "exec: a file's own name should be guessed: $(cat unk2.out)"
"$bin" check zzzzqqqq > unk3.out 2>&1
[ $? = 2 ] && grep -qF "no scenario or file named zzzzqqqq" unk3.out && ! grep -q "did you mean" unk3.out && ok || bad "a far name: $(cat unk3.out)"
"$bin" serve zzzzqqqq > unk4.out 2>&1
[ $? = 2 ] && grep -qF "no scenario or file named zzzzqqqq" unk4.out && ok || bad "serve of an unknown name: $(cat unk4.out)"

# --version and list say where the library is, and list shows names.
"$bin" --version | grep -qxF "library: $src (the build tree's source)" && ok || bad "--version: $("$bin" --version)"
"$bin" list ratelimit > list.out
head -1 list.out | grep -qxF "library: $src (the build tree's source)" && grep -qx "ratelimit/retry_after_seconds" list.out && ok || bad "list: $(head -4 list.out)"

# A copied binary: next to ../share/fusebox it finds that; without it (and no
# marker) only $FUSEBOX_HOME; with neither, none, and says so.
mkdir -p p/bin p/share/fusebox/scenarios/only && cp "$bin" p/bin/fusebox
cp "$lib/transient/http_503.lua" p/share/fusebox/scenarios/only/one.lua
p/bin/fusebox --version | grep -qxF "library: $tmp/work/p/share/fusebox (next to the binary)" && ok || bad "next to the binary: $(p/bin/fusebox --version)"
[ "$(p/bin/fusebox which only/one)" = "$tmp/work/p/share/fusebox/scenarios/only/one.lua" ] && ok || bad "which under a prefix"
mkdir -p q && cp "$bin" q/fusebox
(cd / && "$tmp/work/q/fusebox" run) > none.out 2>&1
[ $? = 2 ] && grep -q "no standard library" none.out && ok || bad "no library: $(cat none.out)"
(cd / && FUSEBOX_HOME=$src "$tmp/work/q/fusebox" --version) | grep -qxF "library: $src (from \$FUSEBOX_HOME)" && ok || bad "FUSEBOX_HOME"
(cd / && FUSEBOX_SCENARIOS=$tmp/work/p/share/fusebox/scenarios "$tmp/work/q/fusebox" which only/one) | grep -q "only/one.lua$" && ok || bad "FUSEBOX_SCENARIOS"
finish
