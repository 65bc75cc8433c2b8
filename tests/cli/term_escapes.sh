#!/usr/bin/env bash
# Terminal escapes (issue 11, item 4): ESC, BEL and other C0 controls from
# scenarios, logs and traces never reach the terminal through `check`,
# `list`, `import` errors or `report`'s stderr (sim_term_safe).
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd od grep
# clean FILE WHAT: FILE holds no ESC, BEL, BS or CR, but does hold text.
clean() {
  if [ ! -s "$1" ]; then bad "$2: nothing printed"; return; fi
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$1"; then
    bad "$2 printed control characters: $(od -c "$1" | head -3)"
  else ok; fi
}

cat > "$tmp/esc.lua" <<'LUA'
return scenario {
  name = "evil \27]0;PWNED\7 name \27[2J",
  doc = "doc \27[31mred\27[0m \8\8 and \r carriage",
  tags = { "t\27[1m" },
  provider = { chat { content = "x" } },
}
LUA
cat > "$tmp/err.lua" <<'LUA'
error("\27]0;PWNED\7\27[2J boom")
LUA
"$bin" list "$tmp/esc.lua" > "$tmp/list.out" 2>&1
clean "$tmp/list.out" "list"
"$bin" check "$tmp/esc.lua" > "$tmp/check.out" 2>&1
clean "$tmp/check.out" "check of a good scenario"
"$bin" check "$tmp/err.lua" > "$tmp/check2.out" 2>&1
[ $? = 2 ] && ok || bad "check of a failing scenario should exit 2"
clean "$tmp/check2.out" "check of a failing scenario"
"$bin" list "$tmp/err.lua" > "$tmp/list2.out" 2>&1
clean "$tmp/list2.out" "list of a failing scenario"

printf '{"status":0,"error":"\\u001b]0;PWNED\\u0007\\u001b[2J"}\n' > "$tmp/log.jsonl"
"$bin" import "$tmp/log.jsonl" -o "$tmp/imp.lua" > "$tmp/import.out" 2>&1
[ $? = 2 ] && ok || bad "import of a bad log should exit 2"
clean "$tmp/import.out" "import error"

printf '{"ev":"session","t":0,"scenario":"\\u001b]0;PWNED\\u0007","time_scale":1,"expect":{"\\u001b]0;PWNED\\u0007":2}}\n' > "$tmp/t.jsonl"
printf '\x1b]0;PWNED\x07{"ev":"session"}\n' > "$tmp/t2.jsonl"
"$bin" report "$tmp/t.jsonl" "$tmp/t2.jsonl" > "$tmp/report.out" 2> "$tmp/report.err"
clean "$tmp/report.err" "report's stderr"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$tmp/report.out"; then bad "report's stdout printed control characters"; else ok; fi

finish
