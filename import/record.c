/*
 * record.c - the recording proxy behind `fusebox record` (sim.h). Each
 * request whose target is origin-form ('/' + path) is forwarded to the
 * upstream fixed at start with libcurl, and its answer passed back to the
 * client as it arrives (SSE chunks included), unchanged: same status,
 * headers and bytes; an upstream that resets, closes early or never answers
 * is mirrored as such (the reset through sim_tcp_reset). Any other target
 * is answered 400 and never forwarded. Every exchange is noted as one JSON
 * Lines attempt (record_note.c: sim's request key and redaction rule).
 *
 * One thread per client connection (libmicrohttpd's thread-per-connection
 * mode) plus one libcurl worker per exchange: a proxy is waiting on two
 * sockets, and plain threads keep that simple. Recording is for a handful
 * of concurrent calls, not for load: connections are capped and an idle
 * client is closed (imp_record_opts).
 */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include "import/import.h"
#include "import/record_int.h"

#define MAX_REQ_BODY ((size_t)32 << 20) /* bytes of one request forwarded */
#define MAX_REC_BODY ((size_t)256 << 10) /* bytes of one response kept for the log */
#define MAX_PENDING ((size_t)1 << 20)    /* bytes buffered between curl and the client */
#define MAX_HEADERS 128

static double now_ms(void) { return sim_now_ms(); }

/* The recorder: the daemon and the exchanges noted so far. */
struct imp_recorder {
  char *upstream; /* scheme://host[:port][/prefix], without a trailing '/' */
  double t0;
  volatile int stopping;
  struct MHD_Daemon *d;
  int port;
  pthread_mutex_t mu;
  char *log; /* JSON Lines */
  size_t log_len, log_cap;
  int full;  /* the log reached IMP_MAX_INPUT */
  long exchanges, failures, refused;
};
typedef struct imp_recorder recorder;

/* One proxied exchange, shared by the client's connection thread and the
   curl worker; mu guards everything below it. */
typedef struct xfer {
  recorder *rec;
  struct MHD_Connection *mc;
  char *method, *url;
  char *path, *query; /* the origin-form target and the query forwarded */
  char *body;
  size_t body_len, body_cap;
  int too_big;
  char *idem;
  struct curl_slist *req_headers;
  char errbuf[CURL_ERROR_SIZE];
  double t_start, t_headers, t_done;
  pthread_t worker;
  int worker_started;
  int stream; /* the response is text/event-stream */

  pthread_mutex_t mu;
  pthread_cond_t cv;
  int headers_done, done, abort, client_gone;
  CURLcode cres;
  long status;
  char *hname[MAX_HEADERS], *hvalue[MAX_HEADERS];
  int nh;
  char *pend; /* received, not yet passed to the client */
  size_t pend_len, pend_cap;
  char *kept; /* the first MAX_REC_BODY bytes, for the log */
  size_t kept_len;
  size_t received;
  size_t sent;
  int noted;
  int refused; /* answered 400: the target is not origin-form */
} xfer;

/* --------------------------------------------------------- the worker */

/* What the curl callbacks get: the exchange and its easy handle. */
typedef struct wctx {
  xfer *x;
  CURL *c;
} wctx;

static void headers_ready(xfer *x, CURL *c);

static void clear_headers(xfer *x) {
  for (int i = 0; i < x->nh; i++) {
    free(x->hname[i]);
    free(x->hvalue[i]);
  }
  x->nh = 0;
}

static size_t on_header(char *buf, size_t size, size_t n, void *arg) {
  wctx *w = arg;
  xfer *x = w->x;
  size_t len = size * n, l = len;
  while (l > 0 && (buf[l - 1] == '\r' || buf[l - 1] == '\n')) l--;
  pthread_mutex_lock(&x->mu);
  if (l >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
    clear_headers(x); /* a new header block (after 100 Continue) */
  } else if (l == 0) {
    long code = 0; /* the end of a block: the client may have the head now */
    curl_easy_getinfo(w->c, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200) headers_ready(x, w->c);
  } else if (x->nh < MAX_HEADERS) {
    const char *colon = memchr(buf, ':', l);
    if (colon != NULL) {
      const char *v = colon + 1;
      while (v < buf + l && (*v == ' ' || *v == '\t')) v++;
      x->hname[x->nh] = strndup(buf, (size_t)(colon - buf));
      x->hvalue[x->nh] = strndup(v, (size_t)(buf + l - v));
      if (x->hname[x->nh] && x->hvalue[x->nh]) {
        x->nh++;
      } else {
        free(x->hname[x->nh]);
        free(x->hvalue[x->nh]);
      }
    }
  }
  pthread_mutex_unlock(&x->mu);
  return len;
}

/* The header block is complete once the first body byte (or the end)
   arrives; curl tells the status then. */
static void headers_ready(xfer *x, CURL *c) {
  if (x->headers_done) return;
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  if (code <= 0) return;
  x->status = code;
  x->headers_done = 1;
  x->t_headers = now_ms();
  for (int i = 0; i < x->nh; i++)
    if (strcasecmp(x->hname[i], "content-type") == 0 && strcasestr(x->hvalue[i], "event-stream"))
      x->stream = 1;
  pthread_cond_broadcast(&x->cv);
}

static size_t on_body(char *buf, size_t size, size_t n, void *arg) {
  wctx *w = arg;
  xfer *x = w->x;
  size_t len = size * n;
  pthread_mutex_lock(&x->mu);
  headers_ready(x, w->c);
  while (!x->abort && x->pend_len + len > MAX_PENDING && x->pend_len > 0)
    pthread_cond_wait(&x->cv, &x->mu); /* the client is slower: wait for it */
  if (x->abort) {
    pthread_mutex_unlock(&x->mu);
    return 0; /* makes curl stop */
  }
  if (x->pend_len + len > x->pend_cap) {
    size_t cap = x->pend_cap ? x->pend_cap : 16384;
    while (cap < x->pend_len + len) cap *= 2;
    char *p = realloc(x->pend, cap);
    if (p == NULL) {
      pthread_mutex_unlock(&x->mu);
      return 0;
    }
    x->pend = p;
    x->pend_cap = cap;
  }
  memcpy(x->pend + x->pend_len, buf, len);
  x->pend_len += len;
  x->received += len;
  if (x->kept_len < MAX_REC_BODY) {
    size_t k = len < MAX_REC_BODY - x->kept_len ? len : MAX_REC_BODY - x->kept_len;
    char *p = realloc(x->kept, x->kept_len + k + 1);
    if (p != NULL) {
      memcpy(p + x->kept_len, buf, k);
      x->kept = p;
      x->kept_len += k;
      x->kept[x->kept_len] = '\0';
    }
  }
  pthread_cond_broadcast(&x->cv);
  pthread_mutex_unlock(&x->mu);
  return len;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
  (void)a, (void)b, (void)c, (void)d;
  xfer *x = arg;
  pthread_mutex_lock(&x->mu);
  int stop = x->abort;
  pthread_mutex_unlock(&x->mu);
  return stop;
}

static void *worker_main(void *arg) {
  xfer *x = arg;
  CURL *c = curl_easy_init();
  CURLcode res = CURLE_OUT_OF_MEMORY;
  if (c != NULL) {
    wctx w = {x, c};
    curl_easy_setopt(c, CURLOPT_URL, x->url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, x->method);
    if (strcmp(x->method, "GET") == 0 || strcmp(x->method, "HEAD") == 0) {
      curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
      if (strcmp(x->method, "HEAD") == 0) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, x->body ? x->body : "");
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, x->req_headers);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &w);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &w);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(c, CURLOPT_HTTP_CONTENT_DECODING, 0L); /* pass bytes as they are */
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    res = curl_easy_perform(c);
  }
  pthread_mutex_lock(&x->mu);
  if (c != NULL) headers_ready(x, c);
  x->cres = res;
  x->done = 1;
  x->t_done = now_ms();
  pthread_cond_broadcast(&x->cv);
  pthread_mutex_unlock(&x->mu);
  curl_easy_cleanup(c);
  return NULL;
}

/* ------------------------------------------------------------ the log */

/* Notes one exchange as a JSON Lines attempt (record_note.c). `error` is
   NULL for a complete answer. Called with x->mu held. */
static void note(xfer *x, const char *error) {
  recorder *rec = x->rec;
  if (x->noted) return;
  x->noted = 1;
  double end = x->done ? x->t_done : now_ms();
  imp_rec_exchange e = {
      .method = x->method, .path = x->path ? x->path : "/", .query = x->query,
      .idem = x->idem, .body = x->body, .body_len = x->body_len,
      .t_ms = x->t_start - rec->t0,
      .latency_ms = x->headers_done ? x->t_headers - x->t_start : end - x->t_start,
      .duration_ms = end - x->t_start, .status = x->status, .headers_done = x->headers_done,
      .stream = x->stream, .hname = x->hname, .hvalue = x->hvalue, .nh = x->nh,
      .kept = x->kept, .received = x->received, .error = error};
  char *line = imp__record_note(&e);
  if (line == NULL) return;
  size_t n = strlen(line);
  pthread_mutex_lock(&rec->mu);
  if (rec->log_len + n + 1 > IMP_MAX_INPUT) {
    rec->full = 1;
  } else {
    if (rec->log_len + n + 1 > rec->log_cap) {
      size_t cap = rec->log_cap ? rec->log_cap : 65536;
      while (cap < rec->log_len + n + 1) cap *= 2;
      char *p = realloc(rec->log, cap);
      if (p != NULL) {
        rec->log = p;
        rec->log_cap = cap;
      }
    }
    if (rec->log_len + n + 1 <= rec->log_cap) {
      memcpy(rec->log + rec->log_len, line, n);
      rec->log[rec->log_len + n] = '\n';
      rec->log_len += n + 1;
      rec->exchanges++;
    }
  }
  pthread_mutex_unlock(&rec->mu);
  free(line);
}

/* What a failed transfer looks like to a client, in the log's words. */
static const char *error_of(const xfer *x) {
  if (x->cres == CURLE_OK) return NULL;
  if (x->abort) return "timeout"; /* the client gave up, or we stopped */
  if (x->cres == CURLE_GOT_NOTHING) return "closed";
  if (x->cres == CURLE_RECV_ERROR || x->cres == CURLE_SEND_ERROR)
    return x->headers_done && !x->stream ? "truncated" : x->headers_done ? "closed" : "reset";
  if (x->cres == CURLE_PARTIAL_FILE) return x->stream ? "closed" : "truncated";
  if (x->cres == CURLE_OPERATION_TIMEDOUT) return "timeout";
  return x->headers_done ? (x->stream ? "closed" : "truncated") : "closed";
}

/* ------------------------------------------------------------ the client */

static void reset_client(struct MHD_Connection *mc) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (ci != NULL) sim_tcp_reset(ci->connect_fd);
}

/* 1 if the client closed its side while we wait for the upstream. */
static int client_hung_up(struct MHD_Connection *mc) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (ci == NULL) return 0;
  struct pollfd p = {.fd = ci->connect_fd, .events = POLLIN | POLLRDHUP};
  if (poll(&p, 1, 0) <= 0) return 0;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return 1;
  char c;
  ssize_t n = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0;
}

static void timed_wait(xfer *x, int ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += (long)ms * 1000000L;
  ts.tv_sec += ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  pthread_cond_timedwait(&x->cv, &x->mu, &ts);
}

/* The response body, pulled by libmicrohttpd as the upstream sends it. */
static ssize_t body_reader(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  xfer *x = cls;
  pthread_mutex_lock(&x->mu);
  for (;;) {
    if (x->pend_len > 0) {
      size_t n = x->pend_len < max ? x->pend_len : max;
      memcpy(buf, x->pend, n);
      memmove(x->pend, x->pend + n, x->pend_len - n);
      x->pend_len -= n;
      x->sent += n;
      pthread_cond_broadcast(&x->cv);
      pthread_mutex_unlock(&x->mu);
      return (ssize_t)n;
    }
    if (x->done) {
      ssize_t r = x->cres == CURLE_OK ? MHD_CONTENT_READER_END_OF_STREAM
                                       : MHD_CONTENT_READER_END_WITH_ERROR;
      note(x, error_of(x));
      pthread_mutex_unlock(&x->mu);
      return r;
    }
    if (x->rec->stopping) {
      x->abort = 1;
      pthread_cond_broadcast(&x->cv);
      note(x, "timeout");
      pthread_mutex_unlock(&x->mu);
      return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    timed_wait(x, 100);
  }
}

static int hop_by_hop(const char *name) {
  static const char *const h[] = {"connection", "keep-alive", "transfer-encoding",
                                  "content-length", "proxy-connection", "upgrade", "te",
                                  "trailer", "host", "expect", "accept-encoding",
                                  "proxy-authorization", NULL};
  for (int i = 0; h[i]; i++)
    if (strcasecmp(name, h[i]) == 0) return 1;
  return 0;
}

static enum MHD_Result add_req_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value) {
  (void)kind;
  xfer *x = cls;
  if (key == NULL || hop_by_hop(key)) return MHD_YES;
  if (strcasecmp(key, "idempotency-key") == 0 && x->idem == NULL && value)
    x->idem = strdup(value);
  size_t n = strlen(key) + (value ? strlen(value) : 0) + 4;
  char *line = malloc(n);
  if (line == NULL) return MHD_YES;
  if (value && value[0]) snprintf(line, n, "%s: %s", key, value);
  else snprintf(line, n, "%s;", key); /* curl's way to send an empty header */
  struct curl_slist *l = curl_slist_append(x->req_headers, line);
  if (l != NULL) x->req_headers = l;
  free(line);
  return MHD_YES;
}

typedef struct qctx {
  char *q;
  size_t len, cap;
} qctx;

static enum MHD_Result add_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value) {
  (void)kind;
  qctx *q = cls;
  char *k = curl_easy_escape(NULL, key, 0);
  char *v = value ? curl_easy_escape(NULL, value, 0) : NULL;
  if (k != NULL) {
    size_t need = q->len + strlen(k) + (v ? strlen(v) : 0) + 3;
    if (need > q->cap) {
      size_t cap = need * 2;
      char *p = realloc(q->q, cap);
      if (p != NULL) q->q = p, q->cap = cap;
    }
    if (need <= q->cap)
      q->len += (size_t)snprintf(q->q + q->len, q->cap - q->len, "%c%s%s%s",
                                 q->len ? '&' : '?', k, v ? "=" : "", v ? v : "");
  }
  curl_free(k);
  curl_free(v);
  return MHD_YES;
}

static enum MHD_Result answer_plain(struct MHD_Connection *mc, unsigned status, const char *msg) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(strlen(msg), (void *)msg, MHD_RESPMEM_MUST_COPY);
  if (r == NULL) return MHD_NO;
  MHD_add_response_header(r, "content-type", "application/json");
  enum MHD_Result ret = MHD_queue_response(mc, status, r);
  MHD_destroy_response(r);
  return ret;
}

/* The whole request is in: forward it, wait for the answer's head, then
   answer the client as the upstream did. */
static enum MHD_Result forward(xfer *x, const char *url) {
  recorder *rec = x->rec;
  if (x->too_big)
    return answer_plain(x->mc, 413, "{\"error\":{\"message\":\"fusebox record: request body "
                                    "over 32 MiB\",\"type\":\"fusebox_record\"}}");
  qctx q = {NULL, 0, 0};
  MHD_get_connection_values(x->mc, MHD_GET_ARGUMENT_KIND, add_query, &q);
  x->query = q.q;
  x->path = strdup(url);
  if (x->path == NULL) return MHD_NO;
  if (imp__record_target(rec->upstream, url, x->query, &x->url) != SIM_OK) {
    x->noted = 1; /* e.g. a control byte once %-decoded: never forwarded */
    pthread_mutex_lock(&rec->mu);
    rec->refused++;
    pthread_mutex_unlock(&rec->mu);
    return answer_plain(x->mc, 400, "{\"error\":{\"message\":\"fusebox record: the request "
                                    "target is not a path\",\"type\":\"fusebox_record\"}}");
  }
  MHD_get_connection_values(x->mc, MHD_HEADER_KIND, add_req_header, x);
  struct curl_slist *l = curl_slist_append(x->req_headers, "Expect:");
  if (l != NULL) x->req_headers = l;
  l = curl_slist_append(x->req_headers, "Accept-Encoding:");
  if (l != NULL) x->req_headers = l;

  x->t_start = now_ms();
  if (pthread_create(&x->worker, NULL, worker_main, x) != 0) return MHD_NO;
  x->worker_started = 1;

  pthread_mutex_lock(&x->mu);
  while (!x->headers_done && !x->done) {
    if (rec->stopping || client_hung_up(x->mc)) {
      x->abort = 1;
      x->client_gone = 1;
      pthread_cond_broadcast(&x->cv);
      note(x, "timeout"); /* no answer before the client gave up */
      pthread_mutex_unlock(&x->mu);
      return MHD_NO;
    }
    timed_wait(x, 50);
  }
  if (!x->headers_done) {
    const char *err = error_of(x);
    /* A reply that is not HTTP (CURLE_WEIRD_SERVER_REPLY) is the upstream's behaviour:
       noted as a closed connection, which is what the client gets. */
    int unreachable = x->cres == CURLE_COULDNT_CONNECT || x->cres == CURLE_COULDNT_RESOLVE_HOST ||
                      x->cres == CURLE_URL_MALFORMAT ||
                      x->cres == CURLE_OPERATION_TIMEDOUT || x->cres == CURLE_SSL_CONNECT_ERROR ||
                      x->cres == CURLE_PEER_FAILED_VERIFICATION;
    if (unreachable) {
      static const char msg[] = "{\"error\":{\"message\":\"fusebox record: the upstream is "
                                "unreachable\",\"type\":\"fusebox_record\"}}";
      pthread_mutex_lock(&rec->mu);
      rec->failures++;
      pthread_mutex_unlock(&rec->mu);
      x->noted = 1; /* not the upstream's behaviour: not recorded */
      pthread_mutex_unlock(&x->mu);
      return answer_plain(x->mc, 502, msg);
    }
    note(x, err);
    pthread_mutex_unlock(&x->mu);
    if (err != NULL && strcmp(err, "reset") == 0) reset_client(x->mc);
    return MHD_NO; /* close without a response, as the upstream did */
  }
  /* Known length: promise the same, so a body cut short stays cut short. */
  uint64_t size = MHD_SIZE_UNKNOWN;
  for (int i = 0; i < x->nh; i++)
    if (strcasecmp(x->hname[i], "content-length") == 0) size = strtoull(x->hvalue[i], NULL, 10);
  long status = x->status;
  pthread_mutex_unlock(&x->mu);

  struct MHD_Response *r = MHD_create_response_from_callback(size, 16384, body_reader, x, NULL);
  if (r == NULL) return MHD_NO;
  pthread_mutex_lock(&x->mu);
  for (int i = 0; i < x->nh; i++)
    if (!hop_by_hop(x->hname[i])) MHD_add_response_header(r, x->hname[i], x->hvalue[i]);
  pthread_mutex_unlock(&x->mu);
  enum MHD_Result ret = MHD_queue_response(x->mc, (unsigned)status, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **con_cls) {
  (void)version;
  xfer *x = *con_cls;
  if (x == NULL) {
    x = calloc(1, sizeof *x);
    if (x == NULL) return MHD_NO;
    x->rec = cls;
    x->mc = mc;
    x->method = strdup(method);
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    *con_cls = x;
    if (x->method == NULL) return MHD_NO;
    if (url == NULL || url[0] != '/') { /* never forwarded, whatever the body */
      x->refused = 1;
      pthread_mutex_lock(&x->rec->mu);
      x->rec->refused++;
      pthread_mutex_unlock(&x->rec->mu);
      return answer_plain(mc, 400, "{\"error\":{\"message\":\"fusebox record: only a path "
                                   "(origin-form) request target is forwarded\",\"type\":"
                                   "\"fusebox_record\"}}");
    }
    return MHD_YES;
  }
  if (x->refused) {
    *upload_size = 0;
    return MHD_YES;
  }
  if (*upload_size > 0) {
    size_t n = *upload_size;
    *upload_size = 0;
    if (x->too_big || x->body_len + n > MAX_REQ_BODY) {
      x->too_big = 1;
      return MHD_YES;
    }
    if (x->body_len + n + 1 > x->body_cap) {
      size_t cap = x->body_cap ? x->body_cap : 8192;
      while (cap < x->body_len + n + 1) cap *= 2;
      char *b = realloc(x->body, cap);
      if (b == NULL) return MHD_NO;
      x->body = b;
      x->body_cap = cap;
    }
    memcpy(x->body + x->body_len, upload_data, n);
    x->body_len += n;
    x->body[x->body_len] = '\0';
    return MHD_YES;
  }
  if (x->url != NULL) return MHD_YES; /* already forwarded */
  return forward(x, url);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)mc, (void)toe;
  xfer *x = *con_cls;
  if (x == NULL) return;
  if (x->worker_started) {
    pthread_mutex_lock(&x->mu);
    if (!x->done) {
      /* The client left before the end (it gave up on a slow stream). */
      x->abort = 1;
      pthread_cond_broadcast(&x->cv);
      note(x, "timeout");
    } else if (!x->noted) {
      note(x, error_of(x));
    }
    pthread_mutex_unlock(&x->mu);
    pthread_join(x->worker, NULL);
  }
  clear_headers(x);
  curl_slist_free_all(x->req_headers);
  free(x->method);
  free(x->url);
  free(x->path);
  free(x->query);
  free(x->body);
  free(x->idem);
  free(x->pend);
  free(x->kept);
  pthread_mutex_destroy(&x->mu);
  pthread_cond_destroy(&x->cv);
  free(x);
  *con_cls = NULL;
}

/* ------------------------------------------------------------ the API */

/* The upstream reduced to scheme://host[:port][/prefix]: http or https, no
   user info, query or fragment. Returns a string the caller frees, or NULL
   with the reason in err. */
static char *parse_upstream(const char *upstream, char err[SIM_ERRLEN]) {
  if (upstream == NULL ||
      (strncasecmp(upstream, "http://", 7) != 0 && strncasecmp(upstream, "https://", 8) != 0)) {
    snprintf(err, SIM_ERRLEN, "the upstream must be an http:// or https:// URL");
    return NULL;
  }
  CURLU *u = curl_url();
  char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *out = NULL;
  if (u == NULL) {
    snprintf(err, SIM_ERRLEN, "out of memory");
    return NULL;
  }
  if (curl_url_set(u, CURLUPART_URL, upstream, 0) != CURLUE_OK) {
    snprintf(err, SIM_ERRLEN, "the upstream is not a valid URL");
    goto done;
  }
  char *extra = NULL;
  if (curl_url_get(u, CURLUPART_USER, &extra, 0) == CURLUE_OK ||
      curl_url_get(u, CURLUPART_QUERY, &extra, 0) == CURLUE_OK ||
      curl_url_get(u, CURLUPART_FRAGMENT, &extra, 0) == CURLUE_OK) {
    curl_free(extra);
    snprintf(err, SIM_ERRLEN, "the upstream URL may not hold user info, a query or a fragment");
    goto done;
  }
  if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
      curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
      curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK) {
    snprintf(err, SIM_ERRLEN, "the upstream URL has no host");
    goto done;
  }
  curl_url_get(u, CURLUPART_PORT, &port, 0);
  size_t n = strlen(scheme) + strlen(host) + (port ? strlen(port) : 0) + strlen(path) + 8;
  out = malloc(n);
  if (out == NULL) {
    snprintf(err, SIM_ERRLEN, "out of memory");
    goto done;
  }
  snprintf(out, n, "%s://%s%s%s%s", scheme, host, port ? ":" : "", port ? port : "", path);
  size_t l = strlen(out);
  while (l > 0 && out[l - 1] == '/') out[--l] = '\0';
done:
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_free(path);
  curl_url_cleanup(u);
  return out;
}

/* Starts the recorder (see sim.h). */
int imp_record_start(const imp_record_opts *opts, imp_recorder **out, char err[SIM_ERRLEN]) {
  *out = NULL;
  err[0] = '\0';
  if (opts == NULL) {
    snprintf(err, SIM_ERRLEN, "no options");
    return SIM_EINVAL;
  }
  const char *bind = opts->bind ? opts->bind : "127.0.0.1";
  struct sockaddr_in a4;
  struct sockaddr_in6 a6;
  const struct sockaddr *addr;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
  memset(&a4, 0, sizeof a4);
  memset(&a6, 0, sizeof a6);
  if (opts->port < 0 || opts->port > 65535) {
    snprintf(err, SIM_ERRLEN, "bad port %d", opts->port);
    return SIM_EINVAL;
  }
  if (inet_pton(AF_INET, bind, &a4.sin_addr) == 1) {
    a4.sin_family = AF_INET;
    a4.sin_port = htons((uint16_t)opts->port);
    addr = (const struct sockaddr *)&a4;
  } else if (inet_pton(AF_INET6, bind, &a6.sin6_addr) == 1) {
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons((uint16_t)opts->port);
    addr = (const struct sockaddr *)&a6;
    flags |= MHD_USE_IPv6;
  } else {
    snprintf(err, SIM_ERRLEN, "bad bind address '%.100s'", bind);
    return SIM_EINVAL;
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    snprintf(err, SIM_ERRLEN, "libcurl did not initialise");
    return SIM_ENOMEM;
  }
  recorder *rec = calloc(1, sizeof *rec);
  if (rec == NULL) {
    curl_global_cleanup();
    snprintf(err, SIM_ERRLEN, "out of memory");
    return SIM_ENOMEM;
  }
  pthread_mutex_init(&rec->mu, NULL);
  rec->upstream = parse_upstream(opts->upstream, err);
  if (rec->upstream == NULL) {
    imp_record_free(rec);
    return SIM_EINVAL;
  }
  rec->t0 = now_ms();
  unsigned limit = opts->max_connections > 0 ? (unsigned)opts->max_connections
                                             : IMP_RECORD_MAX_CONNECTIONS;
  unsigned idle = opts->idle_timeout_s > 0 ? (unsigned)opts->idle_timeout_s
                                           : IMP_RECORD_IDLE_TIMEOUT;
  rec->d = MHD_start_daemon(flags, (uint16_t)opts->port, NULL, NULL, on_request, rec,
                            MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, rec, MHD_OPTION_CONNECTION_LIMIT, limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, idle, MHD_OPTION_END);
  if (rec->d == NULL) {
    snprintf(err, SIM_ERRLEN, "cannot listen on %.100s:%d (port in use, or no permission)",
             bind, opts->port);
    imp_record_free(rec);
    return SIM_ELISTEN;
  }
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(rec->d, MHD_DAEMON_INFO_BIND_PORT);
  rec->port = di ? di->port : opts->port;
  *out = rec;
  return SIM_OK;
}

/* The listening port. */
int imp_record_port(const imp_recorder *rec) { return rec->port; }

/* The upstream in use. */
const char *imp_record_upstream(const imp_recorder *rec) { return rec->upstream; }

/* Stops the daemon; exchanges in flight are noted as they end. */
void imp_record_stop(imp_recorder *rec) {
  if (rec == NULL || rec->d == NULL) return;
  rec->stopping = 1;
  MHD_stop_daemon(rec->d);
  rec->d = NULL;
}

/* The log; final after imp_record_stop. */
const char *imp_record_log(const imp_recorder *rec, size_t *len) {
  *len = rec->log_len;
  return rec->log ? rec->log : "";
}

long imp_record_exchanges(const imp_recorder *rec) { return rec->exchanges; }
long imp_record_unreachable(const imp_recorder *rec) { return rec->failures; }
long imp_record_refused(const imp_recorder *rec) { return rec->refused; }
int imp_record_full(const imp_recorder *rec) { return rec->full; }

/* The scenario replaying the log (see sim.h). */
int imp_record_scenario(const imp_recorder *rec, const imp_opts *opts, char **out_lua,
                        imp_stats *stats, char err[SIM_ERRLEN]) {
  imp_opts o = {0};
  if (opts != NULL) o = *opts;
  o.format = IMP_JSONL;
  o.source = "recorded exchanges";
  char name[SIM_ERRLEN + 64];
  if (o.name == NULL) {
    char *up = sim_redact_text(rec->upstream, strlen(rec->upstream)); /* a key in its path */
    snprintf(name, sizeof name, "Recorded from %.200s", up ? up : "the upstream");
    free(up);
    o.name = name;
  }
  return imp_buffer(rec->log ? rec->log : "", rec->log_len, &o, out_lua, stats, err);
}

/* Stops and releases the recorder. */
void imp_record_free(imp_recorder *rec) {
  if (rec == NULL) return;
  imp_record_stop(rec);
  free(rec->log);
  free(rec->upstream);
  pthread_mutex_destroy(&rec->mu);
  free(rec);
  curl_global_cleanup();
}
