#!/usr/bin/env bash
# The best-practice verdicts `exec` judges have one home, the families table
# of reports/expect.c (rpt_expect_best_practice_list): `fusebox exec --help`
# prints that list, and README.md (the `fusebox exec` paragraph) and
# docs/exec.md must name exactly the same verdicts, each after the words
# "which hold for any client". A verdict added to or dropped from the table
# and not from the docs (or the other way round) fails here.
. "$(dirname "$0")/lib.sh"
need_fusebox

# names TEXT: the backticked names of the list after "which hold for any
# client...:", up to the sentence's end, one a line, sorted.
names() {
  tr '\n' ' ' | grep -o "which hold for any client[^:]*:[^.;]*" | head -1 |
    grep -o '`[a-z_]*`' | tr -d '`' | sort
}

cd "$tmp" || exit 1
"$bin" exec --help > help.out 2>&1
help=$(sed -n '/which hold for any client:/,/^and its outcome/p' help.out | sed '1d;$d' |
       tr ',' '\n' | tr -d ' ' | grep -v '^$' | sort)
[ -n "$help" ] && ok || bad "exec --help lists no best-practice verdicts: $(head -20 help.out)"
# The list is the families table's, not a copy: it holds the kinds exec keeps.
for v in no_retry_after retry_after_honoured side_effects; do
  echo "$help" | grep -qx "$v" && ok || bad "exec --help: $v missing from the list"
done
for v in attempts backoff within_deadline profile; do
  echo "$help" | grep -qx "$v" && bad "exec --help: $v (a client's own policy) in the list" || ok
done

for doc in README.md docs/exec.md; do
  got=$(names < "$src/$doc")
  if [ "$got" = "$help" ]; then ok
  else
    bad "$doc names other best-practice verdicts than exec --help:
  --help: $(echo $help)
  $doc: $(echo $got)"
  fi
done

# The comparison can fail: a doc with one name dropped, or one added.
sed 's/`herd`, //' "$src/README.md" > dropped.md
[ "$(names < dropped.md)" != "$help" ] && ok || bad "a dropped name went unnoticed"
sed 's/`cost`,/`cost`, `attempts`,/' "$src/docs/exec.md" > added.md
[ "$(names < added.md)" != "$help" ] && ok || bad "an added name went unnoticed"
finish
