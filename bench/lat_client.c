/*
 * lat_client.c - C concurrent keep-alive clients, each making R requests
 * to POST /v1/chat/completions on 127.0.0.1, measuring every latency on
 * CLOCK_MONOTONIC from the request's first byte sent to the response's
 * last byte received. In stream mode it also times the gap between
 * successive SSE events that carry a "tick" chunk, as received.
 *
 *   lat_client --port P --clients C --requests R [--think-ms T]
 *              [--spread-ms S] [--warmup W] [--timeout-s 60] [--samples FILE]
 *              [--path /v1/chat/completions]
 *
 * All clients connect first; client i then sends its first request at
 * i/C * S ms, and each next one T ms after the previous answer ended.
 * Each client's first W answers are a warm-up (connection accepted,
 * server memory touched) and are not counted.
 * Prints one key=value line: lat_* (ms, every request) and, when any
 * stream ticks were seen, gap_* (ms between ticks). Exit 1 on any error.
 */
#include <ctype.h>
#include <strings.h>
#include <sys/epoll.h>

#include "common.h"

enum { S_CONNECTING, S_IDLE, S_WAIT_HDR, S_BODY_CL, S_CHUNK_SIZE, S_CHUNK_DATA,
       S_CHUNK_CRLF, S_TRAILER, S_DONE };

typedef struct client {
  int fd;
  int state;
  int done_reqs;
  double next_send;  /* when the next request goes (ms); < 0: none planned */
  double t_sent;
  char *buf;         /* header bytes, or unconsumed chunk-size line */
  size_t blen, bcap;
  long remain;       /* body bytes (Content-Length) or chunk bytes left */
  int status;
  char ev[8192];     /* current SSE event (de-chunked), truncated */
  size_t evlen;
  int evlast_nl;     /* previous byte was '\n' */
  double last_tick;  /* time of the previous tick event in this response */
} client;

static int g_port, g_stream_ticks, g_warmup;
static const char *g_path = "/v1/chat/completions";
static double *lat, *gap;
static size_t nlat, ngap, capgap;
static long n_err_conn, n_err_status, n_err_proto;

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

static void buf_add(client *c, const char *p, size_t n) {
  if (c->blen + n + 1 > c->bcap) {
    while (c->blen + n + 1 > c->bcap) c->bcap = c->bcap ? c->bcap * 2 : 1024;
    c->buf = realloc(c->buf, c->bcap);
    if (c->buf == NULL) abort();
  }
  memcpy(c->buf + c->blen, p, n);
  c->blen += n;
  c->buf[c->blen] = '\0';
}

static void add_gap(double g) {
  if (ngap == capgap) {
    capgap = capgap ? capgap * 2 : 4096;
    gap = realloc(gap, capgap * sizeof *gap);
    if (gap == NULL) abort();
  }
  gap[ngap++] = g;
}

/* One byte of de-chunked SSE body at time t. */
static void sse_byte(client *c, char ch, double t) {
  if (c->evlen < sizeof c->ev - 1) c->ev[c->evlen++] = ch;
  int nl = ch == '\n';
  if (nl && c->evlast_nl) { /* "\n\n": an event is complete */
    c->ev[c->evlen] = '\0';
    if (strstr(c->ev, "tick") != NULL) {
      g_stream_ticks++;
      if (c->last_tick >= 0 && c->done_reqs >= g_warmup) add_gap(t - c->last_tick);
      c->last_tick = t;
    }
    c->evlen = 0;
    nl = 0;
  }
  c->evlast_nl = nl;
}

static int send_req(client *c, long seq) {
  char body[256], req[768];
  int blen = snprintf(body, sizeof body,
                      "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\","
                      "\"content\":\"latency %ld\"}],\"max_tokens\":16}",
                      seq);
  int rlen = snprintf(req, sizeof req,
                      "POST %s HTTP/1.1\r\n"
                      "Host: 127.0.0.1:%d\r\n"
                      "Content-Type: application/json\r\n"
                      "Content-Length: %d\r\n"
                      "\r\n%s",
                      g_path, g_port, blen, body);
  c->t_sent = now_ms();
  ssize_t w = send(c->fd, req, (size_t)rlen, MSG_NOSIGNAL);
  if (w != rlen) return -1;
  c->state = S_WAIT_HDR;
  c->blen = 0;
  c->evlen = 0;
  c->evlast_nl = 0;
  c->last_tick = -1;
  return 0;
}

/* Parses the status line and headers in c->buf; body bytes after the blank
   line are returned through *rest. */
static int parse_headers(client *c, const char **rest, size_t *restlen) {
  char *end = strstr(c->buf, "\r\n\r\n");
  if (end == NULL) return 0;
  *end = '\0';
  *rest = end + 4;
  *restlen = c->blen - (size_t)(end + 4 - c->buf);
  if (strncmp(c->buf, "HTTP/1.1 ", 9) != 0) return -1;
  c->status = atoi(c->buf + 9);
  long cl = -1;
  int chunked = 0;
  for (char *line = strstr(c->buf, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
    char *h = line + 2;
    if (strncasecmp(h, "content-length:", 15) == 0) cl = atol(h + 15);
    if (strncasecmp(h, "transfer-encoding:", 18) == 0 && strstr(h, "chunked")) chunked = 1;
  }
  if (chunked) c->state = S_CHUNK_SIZE;
  else if (cl >= 0) { c->state = S_BODY_CL; c->remain = cl; }
  else return -1;
  return 1;
}

/* Feeds body bytes; returns 1 when the response is complete, -1 on error. */
static int feed_body(client *c, const char *p, size_t n, double t) {
  size_t i = 0;
  while (i < n || c->state == S_BODY_CL) {
    switch (c->state) {
    case S_BODY_CL: {
      size_t take = (size_t)c->remain < n - i ? (size_t)c->remain : n - i;
      c->remain -= (long)take;
      i += take;
      if (c->remain == 0) { c->state = S_DONE; return i == n ? 1 : -1; }
      return 0;
    }
    case S_CHUNK_SIZE:
    case S_CHUNK_CRLF:
    case S_TRAILER: {
      buf_add(c, p + i, 1);
      i++;
      if (c->blen < 2 || c->buf[c->blen - 2] != '\r' || c->buf[c->blen - 1] != '\n') {
        if (c->blen > 64) return -1;
        continue;
      }
      if (c->state == S_CHUNK_CRLF) {
        if (c->blen != 2) return -1;
        c->state = S_CHUNK_SIZE;
      } else if (c->state == S_TRAILER) {
        if (c->blen == 2) { c->state = S_DONE; return i == n ? 1 : -1; }
      } else {
        c->remain = strtol(c->buf, NULL, 16);
        c->state = c->remain == 0 ? S_TRAILER : S_CHUNK_DATA;
      }
      c->blen = 0;
      break;
    }
    case S_CHUNK_DATA: {
      size_t take = (size_t)c->remain < n - i ? (size_t)c->remain : n - i;
      for (size_t k = 0; k < take; k++) sse_byte(c, p[i + k], t);
      c->remain -= (long)take;
      i += take;
      if (c->remain == 0) c->state = S_CHUNK_CRLF;
      break;
    }
    default:
      return -1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  g_port = arg_int(argc, argv, "--port", 0);
  int nc = arg_int(argc, argv, "--clients", 0);
  int nr = arg_int(argc, argv, "--requests", 0);
  double think = arg_int(argc, argv, "--think-ms", 0);
  double spread = arg_int(argc, argv, "--spread-ms", 0);
  int warmup = arg_int(argc, argv, "--warmup", 0);
  double timeout_ms = arg_int(argc, argv, "--timeout-s", 60) * 1000.0;
  const char *samples = arg_str(argc, argv, "--samples");
  if (arg_str(argc, argv, "--path")) g_path = arg_str(argc, argv, "--path");
  g_warmup = warmup;
  if (g_port <= 0 || nc <= 0 || nr <= 0 || warmup < 0) {
    fprintf(stderr, "usage: lat_client --port P --clients C --requests R [--think-ms T] "
                    "[--spread-ms S] [--warmup W] [--timeout-s 60] [--samples FILE]\n");
    return 2;
  }
  if (raise_nofile() < nc + 16) {
    fprintf(stderr, "lat_client: open-file limit too low for %d clients\n", nc);
    return 2;
  }
  client *cs = calloc((size_t)nc, sizeof *cs);
  nr += warmup; /* the first `warmup` answers of each client are not counted */
  lat = calloc((size_t)nc * (size_t)nr, sizeof *lat);
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (cs == NULL || lat == NULL || epfd < 0) return 2;
  double deadline = now_ms() + timeout_ms;

  /* Connect everyone first. */
  int connected = 0;
  for (int i = 0; i < nc; i++) {
    cs[i].fd = connect_loopback(g_port);
    if (cs[i].fd < 0) { n_err_conn++; cs[i].state = S_DONE; cs[i].done_reqs = nr; continue; }
    struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = (uint32_t)i};
    epoll_ctl(epfd, EPOLL_CTL_ADD, cs[i].fd, &ev);
  }
  struct epoll_event evs[1024];
  while (connected + n_err_conn < nc && now_ms() < deadline) {
    int k = epoll_wait(epfd, evs, 1024, 100);
    for (int j = 0; j < k; j++) {
      client *c = &cs[evs[j].data.u32];
      int soerr = 0;
      socklen_t sl = sizeof soerr;
      getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
      if (soerr) { n_err_conn++; close(c->fd); c->fd = -1; c->done_reqs = nr; c->state = S_DONE; continue; }
      struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = evs[j].data.u32};
      epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
      c->state = S_IDLE;
      connected++;
    }
  }
  double t0 = now_ms();
  for (int i = 0; i < nc; i++) cs[i].next_send = cs[i].state == S_IDLE ? t0 + spread * i / nc : -1;

  long seq = 0;
  int active = connected;
  char rbuf[65536];
  while (active > 0 && now_ms() < deadline) {
    /* Send whatever is due; find the nearest planned send. */
    double now = now_ms(), nearest = -1;
    for (int i = 0; i < nc; i++) {
      client *c = &cs[i];
      if (c->state != S_IDLE || c->next_send < 0) continue;
      if (c->next_send <= now) {
        c->next_send = -1;
        if (send_req(c, seq++) != 0) { n_err_conn++; c->state = S_DONE; active--; }
      } else if (nearest < 0 || c->next_send < nearest) {
        nearest = c->next_send;
      }
    }
    int to = nearest < 0 ? 100 : (int)(nearest - now_ms() + 0.999);
    if (to < 0) to = 0;
    int k = epoll_wait(epfd, evs, 1024, to);
    for (int j = 0; j < k; j++) {
      client *c = &cs[evs[j].data.u32];
      if (c->state == S_DONE || c->state == S_IDLE) {
        if (c->state == S_IDLE) { /* the server closed a kept-alive connection */
          n_err_conn++;
          c->state = S_DONE;
          active--;
        }
        epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
        continue;
      }
      for (;;) {
        ssize_t r = recv(c->fd, rbuf, sizeof rbuf, 0);
        double t = now_ms();
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (r <= 0) { n_err_conn++; c->state = S_DONE; active--; epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL); break; }
        const char *p = rbuf;
        size_t n = (size_t)r;
        int done = 0;
        if (c->state == S_WAIT_HDR) {
          buf_add(c, p, n);
          int h = parse_headers(c, &p, &n);
          if (h == 0) continue;
          if (h < 0) { n_err_proto++; c->state = S_DONE; active--; break; }
          char *copy = malloc(n + 1);
          memcpy(copy, p, n);
          c->blen = 0;
          done = feed_body(c, copy, n, t);
          free(copy);
        } else {
          done = feed_body(c, p, n, t);
        }
        if (done < 0) { n_err_proto++; c->state = S_DONE; active--; break; }
        if (done == 1) {
          if (c->done_reqs >= warmup) lat[nlat++] = t - c->t_sent;
          if (c->status != 200) n_err_status++;
          c->done_reqs++;
          if (c->done_reqs >= nr) { c->state = S_DONE; active--; break; }
          c->state = S_IDLE;
          c->next_send = t + think;
        }
      }
    }
  }
  double wall = now_ms() - t0;
  long timed_out = 0;
  for (int i = 0; i < nc; i++) {
    if (cs[i].state != S_DONE) timed_out++;
    if (cs[i].fd >= 0) close(cs[i].fd);
  }

  if (samples) {
    FILE *f = fopen(samples, "w");
    if (f) {
      for (size_t i = 0; i < nlat; i++) fprintf(f, "lat %.3f\n", lat[i]);
      for (size_t i = 0; i < ngap; i++) fprintf(f, "gap %.3f\n", gap[i]);
      fclose(f);
    }
  }
  qsort(lat, nlat, sizeof *lat, cmp_double);
  long errors = n_err_conn + n_err_status + n_err_proto + timed_out;
  printf("clients=%d requests=%zu errors=%ld wall_ms=%.0f "
         "lat_min=%.2f lat_p50=%.2f lat_p90=%.2f lat_p99=%.2f lat_max=%.2f",
         nc, nlat, errors, wall, nlat ? lat[0] : 0, pct(lat, nlat, 0.5), pct(lat, nlat, 0.9),
         pct(lat, nlat, 0.99), nlat ? lat[nlat - 1] : 0);
  if (ngap > 0) {
    qsort(gap, ngap, sizeof *gap, cmp_double);
    printf(" gaps=%zu gap_min=%.2f gap_p50=%.2f gap_p90=%.2f gap_p99=%.2f gap_max=%.2f", ngap,
           gap[0], pct(gap, ngap, 0.5), pct(gap, ngap, 0.9), pct(gap, ngap, 0.99),
           gap[ngap - 1]);
  }
  printf("\n");
  if (errors)
    fprintf(stderr, "lat_client: errors: connection %ld, status %ld, protocol %ld, "
                    "unfinished %ld\n", n_err_conn, n_err_status, n_err_proto, timed_out);
  return errors ? 1 : 0;
}
