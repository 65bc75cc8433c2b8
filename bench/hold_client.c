/*
 * hold_client.c - opens N connections to a `fusebox serve` playing a
 * `hang {}` (or `delay { 5, ... }`) scenario, sends each a complete POST
 * /v1/chat/completions, waits until the server's trace shows N arrivals,
 * reads the server's memory, checks every connection is still open, then
 * closes them all and waits for the server to record N ends.
 *
 *   hold_client --port P --n N --pid SERVER_PID[,PID...] [--trace TRACE]
 *               [--batch 512] [--timeout-s 120] [--settle-ms 1000]
 *               [--expect-response]
 *
 * --pid may list several processes (nginx: master and workers): their
 * VmRSS/VmHWM are summed. Without --trace (a server that writes none, e.g.
 * nginx) the arrival and end counts are skipped. --expect-response (a
 * delayed answer, not a hang): after the memory reading and the check,
 * waits for every held connection to receive one complete HTTP response
 * (Content-Length or chunked) and counts those with status 200 as
 * completed; also the time from send to the last byte (min/p50/max).
 *
 * Prints one line of key=value results; exit 0 when all N were held with
 * no error, 1 otherwise, 2 on bad usage.
 */
#include <sys/epoll.h>

#include "common.h"

enum { C_CONNECTING, C_HELD, C_FAILED };

typedef struct conn {
  int fd;
  int state;
  int err; /* errno of the failure, or -1: closed by peer, -2: got data */
  double t_sent;
  /* --expect-response: the answer being read */
  char hdr[1024];
  int hlen;
  int status;
  int chunked;   /* body ends with "0\r\n\r\n" */
  long remain;   /* Content-Length bytes left; -1 before the headers */
  char tail[5];  /* last 5 body bytes, for the chunked end */
  int done;      /* 1 complete, -1 broken */
} conn;

/* Sum of a /proc/PID/status field over a comma-separated pid list. */
static long pids_kb(const char *pids, const char *key) {
  long sum = 0;
  const char *p = pids;
  while (*p) {
    long v = proc_status_kb(atoi(p), key);
    if (v > 0) sum += v;
    p = strchr(p, ',');
    if (p == NULL) break;
    p++;
  }
  return sum;
}

/* Sum of Pss (kB, /proc/PID/smaps_rollup) over a comma-separated pid
   list: shared pages (libraries, nginx's shared zones) are split between
   the processes that map them, so a master + workers sum counts them once. */
static long pids_pss_kb(const char *pids) {
  long sum = 0;
  const char *p = pids;
  while (*p) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", atoi(p));
    FILE *f = fopen(path, "r");
    if (f) {
      while (fgets(line, sizeof line, f))
        if (strncmp(line, "Pss:", 4) == 0) { sum += strtol(line + 4, NULL, 10); break; }
      fclose(f);
    }
    p = strchr(p, ',');
    if (p == NULL) break;
    p++;
  }
  return sum;
}

/* Feeds answer bytes; sets c->done when one response is complete. */
static void answer_bytes(conn *c, const char *b, size_t n) {
  size_t i = 0;
  if (c->remain < 0 && !c->chunked) {
    while (i < n && c->hlen < (int)sizeof c->hdr - 1) {
      c->hdr[c->hlen++] = b[i++];
      c->hdr[c->hlen] = '\0';
      if (c->hlen >= 4 && memcmp(c->hdr + c->hlen - 4, "\r\n\r\n", 4) == 0) break;
    }
    char *e = strstr(c->hdr, "\r\n\r\n");
    if (e == NULL) {
      if (c->hlen >= (int)sizeof c->hdr - 1) c->done = -1;
      return;
    }
    c->status = strncmp(c->hdr, "HTTP/1.1 ", 9) == 0 ? atoi(c->hdr + 9) : 0;
    for (char *h = c->hdr; *h; h++) *h = (char)(*h >= 'A' && *h <= 'Z' ? *h + 32 : *h);
    char *cl = strstr(c->hdr, "\r\ncontent-length:");
    if (strstr(c->hdr, "\r\ntransfer-encoding: chunked")) c->chunked = 1;
    else if (cl) c->remain = atol(cl + 17);
    else { c->done = -1; return; }
  }
  for (; i < n; i++) {
    if (c->chunked) {
      memmove(c->tail, c->tail + 1, 4);
      c->tail[4] = b[i];
      if (memcmp(c->tail, "0\r\n\r\n", 5) == 0) { c->done = 1; return; }
    } else {
      c->remain -= (long)(n - i);
      if (c->remain <= 0) c->done = c->remain == 0 ? 1 : -1;
      return;
    }
  }
  if (!c->chunked && c->remain == 0) c->done = 1;
}

static int arg_int(int argc, char **argv, const char *name, int def) {
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], name) == 0) return atoi(argv[i + 1]);
  return def;
}

static const char *arg_str(int argc, char **argv, const char *name) {
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], name) == 0) return argv[i + 1];
  return NULL;
}

static void fail_conn(conn *c, int err, long *nfail, int epfd) {
  if (c->state == C_FAILED) return;
  c->state = C_FAILED;
  c->err = err;
  (*nfail)++;
  if (c->fd >= 0) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
  }
}

/* An event on a held connection: data, EOF or an error ends the hold;
   returns 1 when the connection is still fine (spurious wake-up). */
static int still_held(conn *c, long *held, long *nfail, int epfd) {
  char b;
  ssize_t r = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
  int e = r > 0 ? -2 : r == 0 ? -1 : errno;
  (*held)--;
  fail_conn(c, e, nfail, epfd);
  return 0;
}

/* Sends the whole request (small: one write on a fresh socket). */
static int send_request(int fd, int port, long i) {
  char body[256], req[768];
  int blen = snprintf(body, sizeof body,
                      "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\","
                      "\"content\":\"hold %ld\"}],\"max_tokens\":16}",
                      i);
  int rlen = snprintf(req, sizeof req,
                      "POST /v1/chat/completions HTTP/1.1\r\n"
                      "Host: 127.0.0.1:%d\r\n"
                      "Content-Type: application/json\r\n"
                      "Authorization: Bearer sk-bench\r\n"
                      "Content-Length: %d\r\n"
                      "\r\n%s",
                      port, blen, body);
  ssize_t w = send(fd, req, (size_t)rlen, MSG_NOSIGNAL);
  return w == rlen ? 0 : (w < 0 ? errno : EIO);
}

int main(int argc, char **argv) {
  int port = arg_int(argc, argv, "--port", 0);
  long n = arg_int(argc, argv, "--n", 0);
  const char *pids = arg_str(argc, argv, "--pid");
  int pid = pids ? atoi(pids) : 0;
  const char *trace = arg_str(argc, argv, "--trace");
  int expect = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--expect-response") == 0) expect = 1;
  int batch = arg_int(argc, argv, "--batch", 512);
  double timeout_ms = arg_int(argc, argv, "--timeout-s", 120) * 1000.0;
  double settle_ms = arg_int(argc, argv, "--settle-ms", 1000);
  if (port <= 0 || n <= 0 || pid <= 0 || batch <= 0) {
    fprintf(stderr, "usage: hold_client --port P --n N --pid PID[,PID...] [--trace FILE] "
                    "[--batch 512] [--timeout-s 120] [--settle-ms 1000] [--expect-response]\n");
    return 2;
  }
  long nofile = raise_nofile();
  if (nofile < n + 16) {
    fprintf(stderr, "hold_client: open-file limit %ld is too low for %ld sockets\n", nofile, n);
    return 2;
  }
  trace_counter tc;
  memset(&tc, 0, sizeof tc);
  if (trace && trace_counter_open(&tc, trace) != 0) {
    fprintf(stderr, "hold_client: cannot read trace %s\n", trace);
    return 2;
  }
  if (trace) trace_counter_poll(&tc);
  long arrive0 = tc.arrive, end0 = tc.end;

  long idle_rss = pids_kb(pids, "VmRSS");
  long idle_hwm = pids_kb(pids, "VmHWM");
  long idle_pss = pids_pss_kb(pids);

  conn *cs = calloc((size_t)n, sizeof *cs);
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event evs[1024];
  if (cs == NULL || epfd < 0) return 2;

  /* 1. Connect and send, at most `batch` connects in flight at once. */
  double t0 = now_ms(), deadline = t0 + timeout_ms;
  long next = 0, inflight = 0, held = 0, nfail = 0;
  while ((next < n || inflight > 0) && now_ms() < deadline) {
    while (next < n && inflight < batch) {
      conn *c = &cs[next];
      c->fd = connect_loopback(port);
      if (c->fd < 0) {
        c->state = C_FAILED;
        c->err = errno;
        nfail++;
      } else {
        struct epoll_event ev = {.events = EPOLLOUT, .data.u64 = (uint64_t)next};
        epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
        inflight++;
      }
      next++;
    }
    int k = epoll_wait(epfd, evs, 1024, 100);
    for (int i = 0; i < k; i++) {
      long idx = (long)evs[i].data.u64;
      conn *c = &cs[idx];
      if (c->state == C_CONNECTING) {
        inflight--;
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        if (soerr == 0) soerr = send_request(c->fd, port, idx);
        c->t_sent = now_ms();
        c->remain = -1;
        if (soerr != 0) {
          fail_conn(c, soerr, &nfail, epfd);
          continue;
        }
        c->state = C_HELD;
        held++;
        /* From now on any event (data, FIN, RST) is a failure. */
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = (uint64_t)idx};
        epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
      } else if (c->state == C_HELD) {
        still_held(c, &held, &nfail, epfd);
      }
    }
  }
  double t_connected = now_ms() - t0;

  /* 2. Wait for the server to have seen every request. */
  while (trace && tc.arrive - arrive0 < held && now_ms() < deadline) {
    int k = epoll_wait(epfd, evs, 1024, 20);
    for (int i = 0; i < k; i++) {
      long idx = (long)evs[i].data.u64;
      if (cs[idx].state == C_HELD) still_held(&cs[idx], &held, &nfail, epfd);
    }
    trace_counter_poll(&tc);
  }
  double t_arrived = now_ms() - t0;
  long arrived = trace ? tc.arrive - arrive0 : held;

  /* 3. Settle, still watching for early answers or closes. */
  double settle_end = now_ms() + settle_ms;
  while (now_ms() < settle_end) {
    int k = epoll_wait(epfd, evs, 1024, 20);
    for (int i = 0; i < k; i++) {
      long idx = (long)evs[i].data.u64;
      if (cs[idx].state == C_HELD) still_held(&cs[idx], &held, &nfail, epfd);
    }
  }

  /* 4. Memory while holding. */
  long rss = pids_kb(pids, "VmRSS");
  long hwm = pids_kb(pids, "VmHWM");
  long pss = pids_pss_kb(pids);
  long threads = proc_status_kb(pid, "Threads");

  /* 5. Every held socket must be established, without data, error or EOF. */
  long open_ok = 0, resets = 0, closed = 0, data = 0, other = 0;
  for (long i = 0; i < n; i++) {
    conn *c = &cs[i];
    if (c->state != C_HELD) continue;
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    struct tcp_info ti;
    sl = sizeof ti;
    memset(&ti, 0, sizeof ti);
    getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &sl);
    char b;
    ssize_t r = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (soerr == 0 && ti.tcpi_state == TCP_ESTABLISHED && r < 0 &&
        (errno == EAGAIN || errno == EWOULDBLOCK)) {
      open_ok++;
    } else if (soerr == ECONNRESET || (r < 0 && errno == ECONNRESET)) {
      resets++;
    } else if (r == 0 || ti.tcpi_state != TCP_ESTABLISHED) {
      closed++;
    } else if (r > 0) {
      data++;
    } else {
      other++;
    }
  }
  for (long i = 0; i < n; i++) {
    if (cs[i].state != C_FAILED) continue;
    if (cs[i].err == ECONNRESET) resets++;
    else if (cs[i].err == -1) closed++;
    else if (cs[i].err == -2) data++;
    else other++;
  }

  /* 5b. --expect-response: every open one must now get its answer. */
  long completed = 0, bad_answers = 0;
  double *lat = calloc((size_t)n, sizeof *lat);
  if (expect && lat) {
    long waiting = 0;
    for (long i = 0; i < n; i++) if (cs[i].state == C_HELD) waiting++;
    double answer_deadline = now_ms() + timeout_ms;
    char rb[4096];
    while (waiting > 0 && now_ms() < answer_deadline) {
      int k = epoll_wait(epfd, evs, 1024, 100);
      for (int j = 0; j < k; j++) {
        conn *c = &cs[evs[j].data.u64];
        if (c->state != C_HELD || c->done) continue;
        for (;;) {
          ssize_t r = recv(c->fd, rb, sizeof rb, MSG_DONTWAIT);
          if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
          if (r <= 0) { c->done = -1; break; }
          answer_bytes(c, rb, (size_t)r);
          if (c->done) break;
        }
        if (c->done) {
          waiting--;
          epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
          if (c->done == 1 && c->status == 200) lat[completed++] = now_ms() - c->t_sent;
          else bad_answers++;
        }
      }
    }
    qsort(lat, (size_t)completed, sizeof *lat, cmp_double);
  }

  /* 6. Close all; the server should notice every hang-up and end them. */
  double tc0 = now_ms();
  for (long i = 0; i < n; i++)
    if (cs[i].fd >= 0) close(cs[i].fd);
  double end_deadline = tc0 + 30000;
  if (trace) trace_counter_poll(&tc);
  while (trace && tc.end - end0 < arrived && now_ms() < end_deadline) {
    sleep_ms(20);
    trace_counter_poll(&tc);
  }
  double t_ends = now_ms() - tc0;
  long ends = trace ? tc.end - end0 : arrived;

  long errors = n - open_ok + (expect ? n - completed : 0);
  printf("n=%ld held=%ld errors=%ld resets=%ld closed=%ld early_data=%ld other=%ld "
         "arrived=%ld connect_ms=%.0f arrive_ms=%.0f "
         "idle_rss_kb=%ld idle_hwm_kb=%ld rss_kb=%ld hwm_kb=%ld threads=%ld "
         "ends=%ld ends_ms=%.0f idle_pss_kb=%ld pss_kb=%ld",
         n, open_ok, errors, resets, closed, data, other, arrived, t_connected, t_arrived,
         idle_rss, idle_hwm, rss, hwm, threads, ends, t_ends, idle_pss, pss);
  if (expect)
    printf(" completed=%ld bad_answers=%ld answer_min_ms=%.1f answer_p50_ms=%.1f "
           "answer_max_ms=%.1f", completed, bad_answers, completed ? lat[0] : 0,
           pct(lat, (size_t)completed, 0.5), completed ? lat[completed - 1] : 0);
  printf("\n");
  free(lat);
  if (trace) trace_counter_close(&tc);
  free(cs);
  close(epfd);
  return errors == 0 && arrived == n ? 0 : 1;
}
