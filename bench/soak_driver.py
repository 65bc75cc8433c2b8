#!/usr/bin/env python3
# bench/soak_driver.py PORT PID SECONDS EVERY SCENARIO - bench/soak.sh's
# traffic and sampler (see there). Raw sockets, so the aborts are real.
import os, random, socket, sys, time

port, pid, secs, every, scen = (int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]),
                                float(sys.argv[4]), open(sys.argv[5], "rb").read())
rnd = random.Random(29)
PACE = float(os.environ.get("SOAK_PACE", "0.001"))  # s between actions: a shared machine
BODY = b'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]%s}'


def conn():
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def http(method, path, body=b"", read_all=True):
    s = conn()
    s.sendall(b"%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
              % (method.encode(), path.encode(), len(body), body))
    data = b""
    while read_all:
        b = s.recv(65536)
        if not b:
            break
        data += b
    if not read_all:
        data = s.recv(64)  # the first bytes of the answer, then cut
    s.close()
    return data.split(b" ", 2)[1] if data.startswith(b"HTTP/1.1 ") else b"none"


def abort(session):
    s = conn()
    s.sendall(b"POST /__session/%s/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
              b"Content-Length: 1000\r\n\r\n" % session.encode() + b"0123456789"[:rnd.randint(0, 10)])
    s.close()


def status(field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])


def sample():
    return status("VmRSS:"), len(os.listdir("/proc/%d/fd" % pid))


counts, bad = {}, []
sessions = ["soak%d" % i for i in range(8)]


def one(i):
    se = sessions[i % len(sessions)]
    kind = rnd.choice(["chat", "chat", "chat", "abort", "abort", "cut", "put", "reset",
                       "report", "requests", "health"])
    counts[kind] = counts.get(kind, 0) + 1
    if kind == "abort":
        return abort(se)
    if kind == "chat":
        st = http("POST", "/__session/%s/v1/chat/completions" % se, BODY % b"")
        want = b"200"
    elif kind == "cut":
        st = http("POST", "/__session/%s/v1/chat/completions" % se, BODY % b',"stream":true', False)
        want = b"200"
    elif kind == "put":
        st, want = http("PUT", "/__fusebox/scenario?session=%s" % se, scen), b"200"
    elif kind == "reset":
        st, want = http("POST", "/__fusebox/reset?session=%s" % se), b"200"
    elif kind == "health":
        st, want = http("GET", "/__fusebox/health"), b"200"
    else:
        st, want = http("GET", "/__fusebox/%s?session=%s" % (kind, se)), b"200"
    if st != want:
        bad.append("%s %s: %s" % (kind, se, st.decode(errors="replace")))


for se in sessions:  # every session made, so its control requests find it
    if http("PUT", "/__fusebox/scenario?session=%s" % se, scen) != b"200":
        bad.append("PUT %s" % se)
for i in range(len(sessions) * 11):  # warm-up: every kind once or so
    one(i)
first = sample()
t0 = time.time()
nxt, i, samples = t0 + every, 0, [first]
print("soak: t=0 s RSS %d KB fds %d" % first, flush=True)
while time.time() - t0 < secs:
    one(i)
    i += 1
    time.sleep(PACE)
    if time.time() >= nxt:
        samples.append(sample())
        print("soak: t=%d s RSS %d KB fds %d (%d actions)" % ((time.time() - t0,) + samples[-1] + (i,)),
              flush=True)
        nxt += every
last = sample()
print("soak: %d actions in %.0f s: %s" % (i, time.time() - t0,
      ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
print("soak: RSS %d -> %d KB (max %d), fds %d -> %d (max %d)" % (
    first[0], last[0], max(s[0] for s in samples + [last]),
    first[1], last[1], max(s[1] for s in samples + [last])))
if bad:
    print("soak: %d unexpected answers, first: %s" % (len(bad), "; ".join(bad[:5])))
sys.exit(1 if bad else 0)
