#!/usr/bin/env bash
# fusebox report's memory (issue 11, item 12): a generated trace of 200,000
# attempts (2,000 logical requests of 100 attempts, each end with headers,
# an error code and a retry-after) is judged, with the HTML report, in
# bounded memory: peak resident size (getrusage of the child, a wide bound)
# under 40 MB. Before the reader kept each repeated string once it took
# about 130 MB; then about 68 MB; folded as it streams past (issue 29,
# reports/trace_fold.c: 5,000 attempts kept, at most 65,536 held open)
# about 21 MB (docs/security.md, "Reports"). The verdicts on it are checked
# too, so a smaller reader cannot drop what they need.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd python3
# Under AddressSanitizer (scripts/test.sh sets ASAN_OPTIONS) resident size
# measures the sanitizer: a tenth of the trace, and no bound on it.
n=200000 limit_kb=$((40 * 1024))
[ -n "${ASAN_OPTIONS:-}" ] && n=20000 limit_kb=0
python3 - "$tmp/t.jsonl" "$n" <<'PY'
import json, sys
n = int(sys.argv[2])
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"ev": "session", "t": 0, "scenario": "storm", "file": "storm.lua",
                        "time_scale": 1, "version": 1,
                        "expect": {"attempts": {"max": 3}}}) + "\n")
    for i in range(1, n + 1):
        f.write('{"ev":"arrive","t":%d,"id":%d,"key":"hash:%016x","attempt":%d,"provider":"primary",'
                '"method":"POST","path":"/v1/chat/completions","dialect":"openai-chat","stream":false,'
                '"model":"gpt-4o-mini","body_bytes":58}\n' % (2 * i, i, (i - 1) // 100, (i - 1) % 100 + 1))
        f.write('{"ev":"end","t":%d,"id":%d,"step":"fail","status":503,"how":"complete","bytes":127,'
                '"headers":{"x-request-id":"req_fbx%016x","retry-after":"1"},"retry_after_ms":1000,'
                '"tokens_in":0,"tokens_out":0,"chunks":0,"code":"server_error"}\n' % (2 * i + 1, i, i))
    f.write('{"ev":"done","t":%d}\n' % (2 * n + 2))
PY
[ $? = 0 ] && ok || bad "could not write the trace"
python3 - "$bin" "$tmp/t.jsonl" "$tmp/r.html" "$tmp/r.out" "$n" "$limit_kb" <<'PY'
import resource, subprocess, sys
bin, trace, html, out, n, limit = sys.argv[1:5] + [int(x) for x in sys.argv[5:7]]
with open(out, "w") as o:
    rc = subprocess.call([bin, "report", trace, "--html", html], stdout=o, stderr=subprocess.STDOUT)
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("report of %d attempts: exit %d, max RSS %d KB" % (n, rc, kb))
sys.exit(0 if rc == 1 and (limit == 0 or kb < limit) else 1)
PY
[ $? = 0 ] && ok || bad "report's peak memory or exit status: $(tail -3 "$tmp/r.out")"
groups=$((n / 100))
grep -q "100 attempts for request hash:0000000000000000, expected 0..3 (and $((groups - 1)) more of $groups requests)" "$tmp/r.out" \
  && ok || bad "the attempts verdict changed: $(grep attempts "$tmp/r.out")"
finish
