/*
 * hold_client.c - opens N connections to a `fusebox serve` playing a
 * `hang {}` scenario, sends each a complete POST /v1/chat/completions,
 * waits until the server's trace shows N arrivals, reads the server's
 * memory, checks every connection is still open, then closes them all and
 * waits for the server to record N ends.
 *
 *   hold_client --port P --n N --pid SERVER_PID --trace TRACE
 *               [--batch 512] [--timeout-s 120] [--settle-ms 1000]
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
} conn;

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
  int pid = arg_int(argc, argv, "--pid", 0);
  const char *trace = arg_str(argc, argv, "--trace");
  int batch = arg_int(argc, argv, "--batch", 512);
  double timeout_ms = arg_int(argc, argv, "--timeout-s", 120) * 1000.0;
  double settle_ms = arg_int(argc, argv, "--settle-ms", 1000);
  if (port <= 0 || n <= 0 || pid <= 0 || trace == NULL || batch <= 0) {
    fprintf(stderr, "usage: hold_client --port P --n N --pid PID --trace FILE "
                    "[--batch 512] [--timeout-s 120] [--settle-ms 1000]\n");
    return 2;
  }
  long nofile = raise_nofile();
  if (nofile < n + 16) {
    fprintf(stderr, "hold_client: open-file limit %ld is too low for %ld sockets\n", nofile, n);
    return 2;
  }
  trace_counter tc;
  if (trace_counter_open(&tc, trace) != 0) {
    fprintf(stderr, "hold_client: cannot read trace %s\n", trace);
    return 2;
  }
  trace_counter_poll(&tc);
  long arrive0 = tc.arrive, end0 = tc.end;

  long idle_rss = proc_status_kb(pid, "VmRSS");
  long idle_hwm = proc_status_kb(pid, "VmHWM");

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
  while (tc.arrive - arrive0 < held && now_ms() < deadline) {
    int k = epoll_wait(epfd, evs, 1024, 20);
    for (int i = 0; i < k; i++) {
      long idx = (long)evs[i].data.u64;
      if (cs[idx].state == C_HELD) still_held(&cs[idx], &held, &nfail, epfd);
    }
    trace_counter_poll(&tc);
  }
  double t_arrived = now_ms() - t0;
  long arrived = tc.arrive - arrive0;

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
  long rss = proc_status_kb(pid, "VmRSS");
  long hwm = proc_status_kb(pid, "VmHWM");
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

  /* 6. Close all; the server should notice every hang-up and end them. */
  double tc0 = now_ms();
  for (long i = 0; i < n; i++)
    if (cs[i].fd >= 0) close(cs[i].fd);
  double end_deadline = tc0 + 30000;
  trace_counter_poll(&tc);
  while (tc.end - end0 < arrived && now_ms() < end_deadline) {
    sleep_ms(20);
    trace_counter_poll(&tc);
  }
  double t_ends = now_ms() - tc0;
  long ends = tc.end - end0;

  long errors = n - open_ok;
  printf("n=%ld held=%ld errors=%ld resets=%ld closed=%ld early_data=%ld other=%ld "
         "arrived=%ld connect_ms=%.0f arrive_ms=%.0f "
         "idle_rss_kb=%ld idle_hwm_kb=%ld rss_kb=%ld hwm_kb=%ld threads=%ld "
         "ends=%ld ends_ms=%.0f\n",
         n, open_ok, errors, resets, closed, data, other, arrived, t_connected, t_arrived,
         idle_rss, idle_hwm, rss, hwm, threads, ends, t_ends);
  trace_counter_close(&tc);
  free(cs);
  close(epfd);
  return errors == 0 && arrived == n ? 0 : 1;
}
