#!/usr/bin/env python3
# bench/gen_trace.py FILE MB - writes a realistic `fusebox serve` trace of
# about MB megabytes (docs/trace.md) and prints its number of attempts.
# Logical requests cycle through four shapes: answered at once; a 503 with
# Retry-After then an answer; a stream cut mid-way then an answer; three
# 429s (a client that gives up). Every attempt carries request headers and
# its end response headers, as a real SDK's do.
import sys

path, mb = sys.argv[1], float(sys.argv[2])
limit = int(mb * 1024 * 1024)
# An OpenAI SDK's own headers plus an OpenTelemetry context, as the traces of
# issue 29's measurement carried (1.1 GB for 450,000 attempts: ~2.4 KB each).
HEAD = ('"headers":{"user-agent":"OpenAI/Python 1.54.0","content-type":"application/json",'
        '"accept":"application/json","accept-encoding":"gzip, deflate","connection":"keep-alive",'
        '"x-stainless-lang":"python","x-stainless-package-version":"1.54.0","x-stainless-os":"Linux",'
        '"x-stainless-arch":"x64","x-stainless-runtime":"CPython","x-stainless-runtime-version":"3.12.7",'
        '"x-stainless-async":"false","x-stainless-read-timeout":"600","x-stainless-retry-count":"%d",'
        '"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",'
        '"baggage":"' + ",".join("k%02d=%s" % (i, "v" * 40) for i in range(22)) + '",'
        '"authorization":"[redacted]"}')
RESP = ('"openai-version":"2020-10-01","openai-processing-ms":"412","x-ratelimit-limit-requests":"10000",'
        '"x-ratelimit-remaining-requests":"9999","x-ratelimit-reset-requests":"6ms",'
        '"x-ratelimit-limit-tokens":"30000000","x-ratelimit-remaining-tokens":"29999975",'
        '"x-ratelimit-reset-tokens":"0s"')
SHAPES = [["ok"], ["503", "ok"], ["cut", "ok"], ["429", "429", "429"]]
t, aid, key, size = 0.0, 0, 0, 0
with open(path, "w") as f:
    def w(s):
        global size
        f.write(s)
        size += len(s)
    w('{"ev":"session","t":0,"version":1,"scenario":"bench mix","file":"bench.lua",'
      '"time_scale":1,"start":"2026-12-02T12:00:00Z","port":40123,"seed":1,'
      '"expect":{"attempts":{"max":3},"retry_after_honoured":true,"no_stream_splice":true,"max_requests":1000000000}}\n')
    while size < limit:
        key += 1
        stream = key % 4 == 2
        for n, step in enumerate(SHAPES[key % 4], 1):
            aid += 1
            t += 1.5
            w('{"ev":"arrive","t":%.1f,"id":%d,"key":"hash:%016x","attempt":%d,"provider":"primary",'
              '"method":"POST","path":"/v1/chat/completions","dialect":"openai-chat","stream":%s,'
              '"model":"gpt-4o-mini","body_bytes":%d,%s}\n'
              % (t, aid, key, n, "true" if stream else "false", 90 + key % 50, HEAD % (n - 1)))
            t += 2.5
            if step == "ok":
                w('{"ev":"end","t":%.1f,"id":%d,"step":"%s","status":200,"how":"complete","state":"ok",'
                  '"bytes":%d,"headers":{"x-request-id":"req_%012x","content-type":"application/json",%s},'
                  '"tokens_in":12,"tokens_out":7,"chunks":%d}\n'
                  % (t, aid, "stream" if stream else "chat", 300 + key % 100, aid, RESP, 5 if stream else 0))
            elif step == "cut":
                w('{"ev":"end","t":%.1f,"id":%d,"step":"stream","status":200,"how":"cut",'
                  '"state":"cut_mid_stream","bytes":211,"headers":{"x-request-id":"req_%012x",%s},'
                  '"tokens_in":12,"tokens_out":2,"chunks":2}\n' % (t, aid, aid, RESP))
            else:
                w('{"ev":"end","t":%.1f,"id":%d,"step":"fail","status":%s,"how":"complete",'
                  '"state":"error_status","bytes":182,"headers":{"retry-after":"1","x-request-id":'
                  '"req_%012x",%s},"retry_after_ms":1000,"tokens_in":0,"tokens_out":0,"chunks":0,'
                  '"code":"server_error"}\n' % (t, aid, step, aid, RESP))
    w('{"ev":"done","t":%.1f,"arrivals":%d}\n' % (t + 1, aid))
print(aid)
