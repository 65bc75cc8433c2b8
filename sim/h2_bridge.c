/*
 * h2_bridge.c - serves one cleartext HTTP/2 connection (prior knowledge,
 * or an HTTP/1.1 request's h2c Upgrade: its request is stream 1) by turning each of its streams into an HTTP/1.1 request to fusebox's own
 * HTTP/1.1 listener, so HTTP/2 feeds exactly the request path, sessions,
 * trace, steps and verdicts HTTP/1.1 does. The answer comes back as
 * HEADERS and DATA frames; a response the HTTP/1.1 side ends early (drop,
 * reset, cut) becomes RST_STREAM(INTERNAL_ERROR), as a proxy would send.
 *
 * One thread per HTTP/2 connection; poll() over the client socket and one
 * socket per open stream (sim__h2_serve). The session itself takes bytes
 * and writes frames through a function (sim__h2_new, sim__h2_recv,
 * sim__h2_pump), so fuzz/fuzz_h2.c drives the same code from memory. Every buffer is bounded: headers (H2B_MAX_HEAD),
 * a request body (SIM_MAX_BODY + 1: the HTTP/1.1 side answers 413), the
 * response bytes not yet framed (H2B_MAX_PENDING: reading the stream's
 * socket pauses meanwhile), streams (H2B_MAX_STREAMS, also advertised).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sim/h2_bridge.h"
#include "sim/h2c.h"
#include "sim/sim_int.h"

#define H2B_MAX_STREAMS 64
#define H2B_MAX_HEAD (16 * 1024)       /* request or response head, as HTTP/1.1's pool */
#define H2B_MAX_BODY (1024 * 1024 + 1) /* one byte past SIM_MAX_BODY: the 413 is HTTP/1.1's */
#define H2B_MAX_PENDING (64 * 1024)

typedef struct h2b_stream {
  int32_t id;
  int fd;             /* to the HTTP/1.1 listener; -1 before END_STREAM */
  char head[H2B_MAX_HEAD]; /* the HTTP/1.1 request head being built */
  size_t head_len;
  int head_over;
  char *body;
  size_t body_len;
  char authority[256];
  /* the response */
  char rhead[H2B_MAX_HEAD];
  size_t rhead_len;
  int answered;       /* HEADERS submitted */
  char *pend;         /* decoded body bytes not yet framed */
  size_t pend_len, pend_off;
  long clen;          /* Content-Length, -1 unknown */
  int chunked;
  long chunk_left;    /* chunked: bytes left in the current chunk; -1 reading a size line */
  char line[32];      /* chunked: a size line or CRLF being read */
  size_t line_len;
  int complete;       /* the HTTP/1.1 response ended as framed */
  int eof;            /* its socket is done */
  int deferred;       /* the data provider waits for bytes */
  struct h2b_stream *next;
} h2b_stream;

struct sim_h2 {
  sim_h2_send_fn out;  /* the client's side: the server's socket, the fuzzer's sink */
  void *out_arg;
  sim_h2_add_fn add;
  void *add_arg;
  nghttp2_session *s;
  int going_away;     /* a GOAWAY was played: the connection ends once it is sent */
  h2b_stream *streams;
  int nstreams;
  /* Sockets of answered streams, kept until libmicrohttpd closes them
     (Connection: close): closed at once, a stream the client has read
     whole could reach the trace as client_abort, its end not yet noted. */
  int lfd[H2B_MAX_STREAMS];
  long long ldl[H2B_MAX_STREAMS]; /* give up at (monotonic ms) */
  int nl;
};
typedef struct sim_h2 h2b_conn;

#define H2B_LINGER_MS 2000

static long long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void linger_drop(h2b_conn *c, int i) {
  close(c->lfd[i]);
  c->lfd[i] = c->lfd[c->nl - 1];
  c->ldl[i] = c->ldl[c->nl - 1];
  c->nl--;
}

/* Reads what lingering socket i has; closes it at its end or deadline. */
static void linger_read(h2b_conn *c, int i, long long now) {
  char buf[4096];
  ssize_t n = recv(c->lfd[i], buf, sizeof buf, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) || now >= c->ldl[i]) linger_drop(c, i);
}

static h2b_stream *find(h2b_conn *c, int32_t id) {
  for (h2b_stream *s = c->streams; s; s = s->next)
    if (s->id == id) return s;
  return NULL;
}

static void stream_free(h2b_conn *c, h2b_stream *st) {
  for (h2b_stream **p = &c->streams; *p; p = &(*p)->next)
    if (*p == st) {
      *p = st->next;
      break;
    }
  if (st->fd >= 0 && st->complete && !st->eof && c->nl < H2B_MAX_STREAMS) {
    c->lfd[c->nl] = st->fd;
    c->ldl[c->nl++] = mono_ms() + H2B_LINGER_MS;
  } else if (st->fd >= 0) {
    close(st->fd);
  }
  free(st->body);
  free(st->pend);
  free(st);
  c->nstreams--;
}

/* Appends to the request head; too long a head is refused with 431. */
static void head_add(h2b_stream *st, const char *a, size_t alen, const char *b, size_t blen,
                     const char *c, size_t clen) {
  if (st->head_len + alen + blen + clen >= sizeof st->head) {
    st->head_over = 1;
    return;
  }
  memcpy(st->head + st->head_len, a, alen);
  st->head_len += alen;
  memcpy(st->head + st->head_len, b, blen);
  st->head_len += blen;
  memcpy(st->head + st->head_len, c, clen);
  st->head_len += clen;
}

/* ------------------------------------------------------ to the client */

static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *arg) {
  (void)s;
  (void)flags;
  h2b_conn *c = arg;
  ssize_t n = c->out(c->out_arg, data, len);
  if (n < 0) return n == SIM_H2_WOULDBLOCK ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
  return n;
}

/* The data provider: the decoded body bytes in hand; deferred until more
   come; EOF once the HTTP/1.1 response ended as it was framed. */
static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                         uint32_t *flags, nghttp2_data_source *src, void *arg) {
  (void)s;
  (void)src;
  h2b_stream *st = find(arg, id);
  if (st == NULL) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  size_t have = st->pend_len - st->pend_off;
  if (have > 0) {
    size_t n = have < len ? have : len;
    memcpy(buf, st->pend + st->pend_off, n);
    st->pend_off += n;
    if (st->pend_off == st->pend_len) st->pend_off = st->pend_len = 0;
    if (st->pend_len == 0 && st->complete) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
  }
  if (st->complete) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return 0;
  }
  st->deferred = 1;
  return NGHTTP2_ERR_DEFERRED;
}

static int is_hop(const char *name, size_t len) {
  static const char *hop[] = {"connection", "keep-alive", "transfer-encoding", "upgrade",
                              "proxy-connection"};
  for (size_t i = 0; i < sizeof hop / sizeof hop[0]; i++)
    if (strlen(hop[i]) == len && strncasecmp(hop[i], name, len) == 0) return 1;
  return 0;
}

/* The response head is in: HEADERS with its status and fields. 0, or -1
   for a head that does not parse (the stream is reset). */
static int answer(h2b_conn *c, h2b_stream *st) {
  char *h = st->rhead;
  if (st->rhead_len < 12 || strncmp(h, "HTTP/1.", 7) != 0) return -1;
  char status[4] = {h[9], h[10], h[11], '\0'};
  nghttp2_nv nv[101];
  size_t n = 0;
  nv[n++] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)status, 7, 3, NGHTTP2_NV_FLAG_NONE};
  char *p = strstr(h, "\r\n");
  st->clen = -1;
  while (p && p[2] != '\r' && n < 101) {
    char *name = p + 2, *end = strstr(name, "\r\n"), *colon = memchr(name, ':', end ? (size_t)(end - name) : 0);
    if (end == NULL || colon == NULL) break;
    size_t nlen = (size_t)(colon - name);
    char *val = colon + 1;
    while (*val == ' ') val++;
    size_t vlen = (size_t)(end - val);
    for (char *q = name; q < colon; q++) *q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
    if (nlen == 17 && strncmp(name, "transfer-encoding", 17) == 0 &&
        vlen >= 7 && strncasecmp(val, "chunked", 7) == 0) {
      st->chunked = 1;
      st->chunk_left = -1;
    }
    if (nlen == 14 && strncmp(name, "content-length", 14) == 0) st->clen = strtol(val, NULL, 10);
    if (!is_hop(name, nlen))
      nv[n++] = (nghttp2_nv){(uint8_t *)name, (uint8_t *)val, nlen, vlen, NGHTTP2_NV_FLAG_NONE};
    p = end;
  }
  if (st->clen == 0 && !st->chunked) st->complete = 1;
  nghttp2_data_provider dp = {.source.ptr = NULL, .read_callback = read_body};
  int no_body = status[0] == '1' || strcmp(status, "204") == 0 || strcmp(status, "304") == 0;
  if (no_body) st->complete = 1;
  st->answered = 1;
  return nghttp2_submit_response(c->s, st->id, nv, n, no_body ? NULL : &dp) == 0 ? 0 : -1;
}

static int pend_add(h2b_stream *st, const char *b, size_t n) {
  if (n == 0) return 0;
  if (st->pend == NULL && (st->pend = malloc(H2B_MAX_PENDING)) == NULL) return -1;
  if (st->pend_len + n > H2B_MAX_PENDING) return -1; /* reading pauses before this */
  memcpy(st->pend + st->pend_len, b, n);
  st->pend_len += n;
  return 0;
}

/* Body bytes of the HTTP/1.1 response: chunked decoded, Content-Length
   counted; -1 on a framing error. */
static int body_in(h2b_stream *st, const char *b, size_t n) {
  if (!st->chunked) {
    if (st->clen >= 0 && (long)n > st->clen) n = (size_t)st->clen;
    if (pend_add(st, b, n) != 0) return -1;
    if (st->clen >= 0 && (st->clen -= (long)n) == 0) st->complete = 1;
    return 0;
  }
  size_t i = 0;
  while (i < n && !st->complete) {
    if (st->chunk_left > 0) {
      size_t take = n - i < (size_t)st->chunk_left ? n - i : (size_t)st->chunk_left;
      if (pend_add(st, b + i, take) != 0) return -1;
      st->chunk_left -= (long)take;
      i += take;
      if (st->chunk_left == 0) st->chunk_left = -2; /* its CRLF follows */
      continue;
    }
    if (st->line_len >= sizeof st->line - 1) return -1;
    st->line[st->line_len++] = b[i++];
    if (st->line_len < 2 || st->line[st->line_len - 2] != '\r' || st->line[st->line_len - 1] != '\n')
      continue;
    st->line[st->line_len] = '\0';
    if (st->chunk_left == -2) {
      st->chunk_left = -1; /* the CRLF after a chunk */
    } else if (st->chunk_left == -3) {
      if (st->line_len == 2) st->complete = 1; /* the blank line after the last chunk */
    } else {
      long sz = strtol(st->line, NULL, 16);
      st->chunk_left = sz > 0 ? sz : -3;
    }
    st->line_len = 0;
  }
  return 0;
}

int sim__h2_fault_line(char *out, size_t cap, int fault, unsigned code) {
  int n = snprintf(out, cap, "%ch2 %c %u\n", 0, fault == SIM_H2_RST ? 'R' : 'G', code);
  return n > 0 && (size_t)n < cap ? n : -1;
}

/* A fault line from play.c in place of a response head: plays the frame.
   A GOAWAY's last-stream-id is the stream before this one (RFC 9113 6.8:
   this stream and every later one were never processed). */
static void fault(h2b_conn *c, h2b_stream *st) {
  char kind = 0;
  unsigned code = 0;
  if (sscanf(st->rhead + 1, "h2 %c %u", &kind, &code) != 2) kind = 0;
  if (kind == 'G') {
    int32_t last = st->id > 2 ? st->id - 2 : 0;
    nghttp2_submit_goaway(c->s, NGHTTP2_FLAG_NONE, last, code, NULL, 0);
    c->going_away = 1;
    return;
  }
  nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, kind == 'R' ? code : NGHTTP2_INTERNAL_ERROR);
}

/* Reads what the stream's HTTP/1.1 socket has. */
static void backend_read(h2b_conn *c, h2b_stream *st) {
  char buf[8192];
  size_t room = H2B_MAX_PENDING - st->pend_len;
  if (room > sizeof buf) room = sizeof buf;
  ssize_t n = recv(st->fd, buf, room, 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    st->eof = 1;
    close(st->fd);
    st->fd = -1;
    if (!st->answered || !st->complete) {
      if (st->clen < 0 && !st->chunked && st->answered) st->complete = 1; /* close-delimited */
      else {
        nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
        return;
      }
    }
    if (st->deferred) nghttp2_session_resume_data(c->s, st->id);
    st->deferred = 0;
    return;
  }
  size_t off = 0;
  if (!st->answered) {
    size_t take = (size_t)n;
    if (st->rhead_len + take >= sizeof st->rhead) take = sizeof st->rhead - 1 - st->rhead_len;
    memcpy(st->rhead + st->rhead_len, buf, take);
    st->rhead_len += take;
    st->rhead[st->rhead_len] = '\0';
    if (st->rhead[0] == '\0') { /* a fault line (sim__h2_fault_line) */
      if (memchr(st->rhead, '\n', st->rhead_len) == NULL && st->rhead_len < 32) return;
      st->answered = st->complete = 1;
      close(st->fd);
      st->fd = -1;
      fault(c, st);
      return;
    }
    char *e = strstr(st->rhead, "\r\n\r\n");
    if (e == NULL) {
      if (st->rhead_len >= sizeof st->rhead - 1)
        nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
      return;
    }
    size_t head = (size_t)(e + 4 - st->rhead);
    size_t extra = st->rhead_len - head; /* body bytes that came with the head */
    off = take - extra; /* not n - extra: bytes past take never reached rhead */
    e[2] = '\0';
    if (answer(c, st) != 0) {
      nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
      return;
    }
  }
  if (body_in(st, buf + off, (size_t)n - off) != 0)
    nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
  if (st->deferred && (st->pend_len > 0 || st->complete)) {
    st->deferred = 0;
    nghttp2_session_resume_data(c->s, st->id);
  }
}

/* ---------------------------------------------------- from the client */

/* A new stream's state, or NULL when out of memory. */
static h2b_stream *stream_open(h2b_conn *c, int32_t id) {
  h2b_stream *st = calloc(1, sizeof *st);
  if (st == NULL) return NULL;
  st->id = id;
  st->fd = -1;
  st->clen = -1;
  st->next = c->streams;
  c->streams = st;
  c->nstreams++;
  return st; /* the request line is written when :method and :path are in */
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *arg) {
  h2b_conn *c = arg;
  if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  if (c->nstreams >= H2B_MAX_STREAMS)
    return nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_REFUSED_STREAM);
  return stream_open(c, f->hd.stream_id) ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* A request field: pseudo-headers are kept tagged at the head ("\x01M"
   method, "\x01P" path; made the request line at forward) or as the
   authority, the rest become header lines. Shared by HTTP/2 streams and
   the h2c Upgrade's request (whose names may be in any case). */
static void stream_field(h2b_stream *st, const char *name, size_t nlen, const char *value,
                         size_t vlen) {
  if (nlen > 0 && name[0] == ':') {
    if (nlen == 10 && memcmp(name, ":authority", 10) == 0) {
      size_t n = vlen < sizeof st->authority - 1 ? vlen : sizeof st->authority - 1;
      memcpy(st->authority, value, n);
      st->authority[n] = '\0';
    } else if (nlen == 7 && memcmp(name, ":method", 7) == 0) {
      head_add(st, "\x01M", 2, value, vlen, "\n", 1);
    } else if (nlen == 5 && memcmp(name, ":path", 5) == 0) {
      head_add(st, "\x01P", 2, value, vlen, "\n", 1);
    }
    return;
  }
  if (memchr(value, '\r', vlen) || memchr(value, '\n', vlen)) return; /* no smuggling */
  /* framing is the bridge's own (Content-Length, Connection: close) */
  static const char *own[] = {"host", "content-length", "connection", "te"};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    if (strlen(own[i]) == nlen && strncasecmp(own[i], name, nlen) == 0) return;
  head_add(st, name, nlen, ": ", 2, "", 0);
  head_add(st, value, vlen, "\r\n", 2, "", 0);
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *arg) {
  (void)s;
  (void)flags;
  h2b_stream *st = find(arg, f->hd.stream_id);
  if (st != NULL) stream_field(st, (const char *)name, nlen, (const char *)value, vlen);
  return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *arg) {
  (void)s;
  (void)flags;
  h2b_stream *st = find(arg, id);
  if (st == NULL) return 0;
  if (st->body_len + len > H2B_MAX_BODY) len = H2B_MAX_BODY - st->body_len;
  if (len == 0) return 0;
  char *b = realloc(st->body, st->body_len + len);
  if (b == NULL) return NGHTTP2_ERR_CALLBACK_FAILURE;
  memcpy(b + st->body_len, data, len);
  st->body = b;
  st->body_len += len;
  return 0;
}

/* Copies the value after tag ("\x01M", "\x01P") out of the head. */
static int pseudo(const h2b_stream *st, char tag, char *out, size_t cap) {
  for (size_t i = 0; i + 2 <= st->head_len; i++)
    if (st->head[i] == '\x01' && st->head[i + 1] == tag) {
      const char *v = st->head + i + 2, *e = memchr(v, '\n', st->head_len - i - 2);
      if (e == NULL || (size_t)(e - v) >= cap) return -1;
      memcpy(out, v, (size_t)(e - v));
      out[e - v] = '\0';
      return 0;
    }
  return -1;
}

/* The whole request is in: opens the HTTP/1.1 connection and sends it. */
static void forward(h2b_conn *c, h2b_stream *st) {
  char method[16], path[4096];
  size_t cap = H2B_MAX_HEAD + 4096 + 512;
  char *req = malloc(cap);
  if (req == NULL) {
    nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
    return;
  }
  if (st->head_over || pseudo(st, 'M', method, sizeof method) != 0 ||
      pseudo(st, 'P', path, sizeof path) != 0) {
    nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_PROTOCOL_ERROR);
    free(req);
    return;
  }
  int n = snprintf(req, cap, "%s %s HTTP/1.1\r\nHost: %s\r\n", method,
                   path, st->authority[0] ? st->authority : "127.0.0.1");
  for (size_t i = 0; i < st->head_len;) { /* the header lines, pseudo ones left out */
    const char *e = memchr(st->head + i, '\n', st->head_len - i);
    size_t len = e ? (size_t)(e - st->head - i) + 1 : st->head_len - i;
    if (st->head[i] != '\x01' && (size_t)n + len < cap) {
      memcpy(req + n, st->head + i, len);
      n += (int)len;
    }
    i += len;
  }
  n += snprintf(req + n, cap - (size_t)n, "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                st->body_len);
  int sp[2], fd = -1;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0) {
    fd = sp[0];
    if (c->add(c->add_arg, sp[1]) != 0) { /* it closed sp[1] */
      close(fd);
      fd = -1;
    }
  }
  if (fd < 0 || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n ||
      (st->body_len && send(fd, st->body, st->body_len, MSG_NOSIGNAL) != (ssize_t)st->body_len)) {
    if (fd >= 0) close(fd);
    free(req);
    nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_REFUSED_STREAM);
    return;
  }
  free(req);
  free(st->body);
  st->body = NULL;
  st->fd = fd;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *arg) {
  (void)s;
  h2b_conn *c = arg;
  if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
      (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
    h2b_stream *st = find(c, f->hd.stream_id);
    if (st != NULL && st->fd < 0 && !st->eof) forward(c, st);
  }
  return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t code, void *arg) {
  (void)s;
  (void)code;
  h2b_stream *st = find(arg, id);
  if (st != NULL) stream_free(arg, st); /* closing its socket ends the HTTP/1.1 request too */
  return 0;
}

/* ------------------------------------------------------------ the loop */

sim_h2 *sim__h2_new(sim_h2_send_fn out, void *out_arg, sim_h2_add_fn add, void *add_arg) {
  h2b_conn *c = calloc(1, sizeof *c);
  nghttp2_session_callbacks *cb = NULL;
  if (c == NULL || nghttp2_session_callbacks_new(&cb) != 0) {
    free(c);
    return NULL;
  }
  *c = (h2b_conn){.out = out, .out_arg = out_arg, .add = add, .add_arg = add_arg};
  nghttp2_session_callbacks_set_send_callback(cb, on_send);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
  int rc = nghttp2_session_server_new(&c->s, cb, c);
  nghttp2_session_callbacks_del(cb);
  if (rc != 0) {
    free(c);
    return NULL;
  }
  nghttp2_settings_entry set[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2B_MAX_STREAMS},
                                  {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2B_MAX_HEAD}};
  nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, set, 2);
  return c;
}

int sim__h2_send(sim_h2 *c) {
  if (nghttp2_session_send(c->s) != 0) return -1;
  if (c->going_away && !nghttp2_session_want_write(c->s)) return 1; /* GOAWAY sent: close */
  return nghttp2_session_want_read(c->s) || nghttp2_session_want_write(c->s) ? 0 : 1;
}

int sim__h2_wants_write(const sim_h2 *c) { return nghttp2_session_want_write(c->s); }

int sim__h2_recv(sim_h2 *c, const uint8_t *data, size_t len) {
  if (nghttp2_session_mem_recv(c->s, data, len) < 0) return -1;
  return sim__h2_send(c);
}

/* Fills p with the sockets the session waits on besides the client's:
   each stream's (unless its unframed bytes are at their bound: then it
   waits for the client to read) with who[i] its stream, then the
   lingering ones. Returns the streams' count; *nl the lingering ones. */
static int stream_fds(h2b_conn *c, struct pollfd *p, h2b_stream **who, int *nl) {
  int n = 0;
  for (h2b_stream *st = c->streams; st && n < H2B_MAX_STREAMS; st = st->next)
    if (st->fd >= 0 && st->pend_len < H2B_MAX_PENDING) {
      who[n] = st;
      p[n++] = (struct pollfd){.fd = st->fd, .events = POLLIN};
    }
  for (int i = 0; i < c->nl; i++) p[n + i] = (struct pollfd){.fd = c->lfd[i], .events = POLLIN};
  *nl = c->nl;
  return n;
}

/* Acts on what poll() found on the sockets of stream_fds. */
static void stream_events(h2b_conn *c, const struct pollfd *p, h2b_stream **who, int n) {
  long long now = mono_ms();
  for (int i = c->nl - 1; i >= 0; i--)
    if (p[n + i].revents || now >= c->ldl[i]) linger_read(c, i, now);
  for (int i = 0; i < n; i++)
    if (p[i].revents & (POLLIN | POLLHUP | POLLERR)) backend_read(c, who[i]);
}

int sim__h2_pump(sim_h2 *c, int timeout_ms) {
  struct pollfd p[2 * H2B_MAX_STREAMS];
  h2b_stream *who[H2B_MAX_STREAMS];
  int nl, n = stream_fds(c, p, who, &nl);
  int r = poll(p, (nfds_t)(n + nl), timeout_ms);
  if (r <= 0) return r < 0 && errno != EINTR ? -1 : 0;
  stream_events(c, p, who, n);
  return r;
}

void sim__h2_free(sim_h2 *c) {
  if (c == NULL) return;
  nghttp2_session_send(c->s);
  while (c->streams) stream_free(c, c->streams);
  while (c->nl > 0) { /* the answered streams' ends noted, or their deadline */
    struct pollfd p[H2B_MAX_STREAMS];
    for (int i = 0; i < c->nl; i++) p[i] = (struct pollfd){.fd = c->lfd[i], .events = POLLIN};
    if (poll(p, (nfds_t)c->nl, 100) < 0 && errno != EINTR) break;
    long long now = mono_ms();
    for (int i = c->nl - 1; i >= 0; i--)
      if (p[i].revents || now >= c->ldl[i]) linger_read(c, i, now);
  }
  for (int i = c->nl - 1; i >= 0; i--) linger_drop(c, i);
  nghttp2_session_del(c->s);
  free(c);
}

static ssize_t send_fd(void *arg, const uint8_t *data, size_t len) {
  ssize_t n = send(*(int *)arg, data, len, MSG_NOSIGNAL);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? SIM_H2_WOULDBLOCK : -1;
  return n;
}

/* Runs the session c over the client's socket fd until either side ends
   it, then releases c and closes fd. */
static void serve_loop(sim_h2 *c, int fd) {
  while (sim__h2_send(c) == 0) {
    struct pollfd p[1 + 2 * H2B_MAX_STREAMS];
    h2b_stream *who[H2B_MAX_STREAMS];
    int nl, n = stream_fds(c, p + 1, who, &nl);
    p[0] = (struct pollfd){.fd = fd, .events = (short)(POLLIN | (sim__h2_wants_write(c) ? POLLOUT : 0))};
    if (poll(p, (nfds_t)(1 + n + nl), nl > 0 ? 100 : -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    stream_events(c, p + 1, who, n);
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      uint8_t buf[16384];
      ssize_t r = recv(fd, buf, sizeof buf, 0);
      if (r <= 0 && !(r < 0 && (errno == EAGAIN || errno == EINTR))) break;
      if (r > 0 && sim__h2_recv(c, buf, (size_t)r) < 0) break;
    }
  }
  sim__h2_free(c);
  close(fd);
}

int sim__h2_serve(int fd, sim_h2_add_fn add, void *add_arg) {
  sim_h2 *c = sim__h2_new(send_fd, &fd, add, add_arg);
  if (c == NULL) {
    close(fd);
    return -1;
  }
  serve_loop(c, fd);
  return 0;
}

int sim__h2_upgrade(sim_h2 *c, const sim_h2c_req *r) {
  int head = r->method.n == 4 && memcmp(r->method.p, "HEAD", 4) == 0;
  if (nghttp2_session_upgrade2(c->s, r->settings, r->settings_len, head, NULL) != 0) return -1;
  h2b_stream *st = stream_open(c, 1);
  if (st == NULL || (r->body_len && (st->body = malloc(r->body_len)) == NULL)) return -1;
  stream_field(st, ":method", 7, r->method.p, r->method.n);
  stream_field(st, ":path", 5, r->path.p, r->path.n);
  stream_field(st, ":authority", 10, r->authority.p, r->authority.n);
  for (int i = 0; i < r->nfields; i++)
    stream_field(st, r->name[i].p, r->name[i].n, r->value[i].p, r->value[i].n);
  if (r->body_len) memcpy(st->body, r->body, r->body_len);
  st->body_len = r->body_len;
  forward(c, st); /* stream 1 is half-closed (remote): its request is whole */
  return 0;
}

int sim__h2c_serve(int fd, const char *req, size_t len, sim_h2_add_fn add, void *add_arg) {
  static const char ok[] = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                           "Upgrade: h2c\r\n\r\n";
  sim_h2c_req r;
  sim_h2 *c = NULL;
  if (sim__h2c_parse(req, len, &r) != SIM_H2C_YES || (c = sim__h2_new(send_fd, &fd, add, add_arg)) == NULL ||
      sim__h2_upgrade(c, &r) != 0 || send(fd, ok, sizeof ok - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof ok - 1)) {
    int cfd = fd;
    fd = -1; /* no frame goes to a client that was not switched */
    sim__h2_free(c);
    close(cfd);
    return -1;
  }
  serve_loop(c, fd);
  return 0;
}
