/*
 * record.c - the recording proxy behind `fusebox record` (sim.h). Each
 * request whose target is origin-form ('/' + path) is forwarded to the
 * upstream fixed at start (sim/upstream.c: the forwarding rules and the
 * libcurl worker, shared with the upstream{} step), and its answer passed back to the
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

/* One proxied exchange, on its client's connection thread; the upstream
   side is a sim_upx (sim/upstream.c) with a worker of its own. */
typedef struct xfer {
  recorder *rec;
  struct MHD_Connection *mc;
  char *method, *url;
  char *path, *query; /* the origin-form target and the query forwarded */
  char *body;
  size_t body_len, body_cap;
  int too_big;
  char *idem;
  char **req_headers; /* "Name: value" lines forwarded */
  int nreq;
  double t_start;
  sim_upx *up;
  sim_upx_info info;  /* the last look at up */
  char *hname[SIM_UPX_MAX_HEADERS], *hvalue[SIM_UPX_MAX_HEADERS];
  int nh;             /* the answer's headers, once info.head */
  int noted;
  int refused; /* answered 400: the target is not origin-form */
} xfer;

/* ------------------------------------------------------------ the log */

/* Notes one exchange as a JSON Lines attempt (record_note.c). `error` is
   NULL for a complete answer. */
static void note(xfer *x, const char *error) {
  recorder *rec = x->rec;
  if (x->noted) return;
  x->noted = 1;
  if (x->up != NULL) sim_upx_info_get(x->up, &x->info);
  const sim_upx_info *in = &x->info;
  size_t kept_len = 0;
  char *kept = x->up != NULL ? sim_upx_kept(x->up, &kept_len) : NULL;
  double end = in->done ? in->t_done : now_ms();
  imp_rec_exchange e = {
      .method = x->method, .path = x->path ? x->path : "/", .query = x->query,
      .idem = x->idem, .body = x->body, .body_len = x->body_len,
      .t_ms = x->t_start - rec->t0,
      .latency_ms = in->head ? in->t_head - x->t_start : end - x->t_start,
      .duration_ms = end - x->t_start, .status = in->status, .headers_done = in->head,
      .stream = in->stream, .hname = x->hname, .hvalue = x->hvalue, .nh = x->nh,
      .kept = kept, .received = in->received, .error = error};
  char *line = imp__record_note(&e);
  free(kept);
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

/* What a finished transfer looks like to a client, in the log's words. */
static const char *error_of(const xfer *x) { return sim_upx_result_name(x->info.result); }

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

/* The response body, pulled by libmicrohttpd as the upstream sends it. */
static ssize_t body_reader(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  xfer *x = cls;
  for (;;) {
    long n = sim_upx_read(x->up, buf, max);
    if (n > 0) return (ssize_t)n;
    if (n < 0) {
      sim_upx_info_get(x->up, &x->info);
      note(x, error_of(x));
      return x->info.result == SIM_UPX_OK ? MHD_CONTENT_READER_END_OF_STREAM
                                          : MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (x->rec->stopping) {
      sim_upx_abort(x->up);
      note(x, "timeout");
      return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    sim_upx_wait(x->up, 100);
  }
}

static enum MHD_Result add_req_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value) {
  (void)kind;
  xfer *x = cls;
  if (key == NULL || sim_upstream_hop_by_hop(key)) return MHD_YES;
  if (strcasecmp(key, "idempotency-key") == 0 && x->idem == NULL && value)
    x->idem = strdup(value);
  size_t n = strlen(key) + (value ? strlen(value) : 0) + 4;
  char *line = malloc(n);
  if (line == NULL) return MHD_YES;
  if (value && value[0]) snprintf(line, n, "%s: %s", key, value);
  else snprintf(line, n, "%s;", key); /* curl's way to send an empty header */
  char **v = x->nreq < SIM_UPX_MAX_HEADERS
                 ? realloc(x->req_headers, (size_t)(x->nreq + 1) * sizeof *v) : NULL;
  if (v == NULL) {
    free(line);
    return MHD_YES;
  }
  x->req_headers = v;
  x->req_headers[x->nreq++] = line;
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
  sim_upx_req req = {.method = x->method, .url = x->url,
                     .headers = (const char *const *)x->req_headers, .nheaders = x->nreq,
                     .body = x->body, .body_len = x->body_len, .keep = MAX_REC_BODY};
  x->t_start = now_ms();
  if (sim_upx_start(&req, &x->up) != SIM_OK) return MHD_NO;

  for (;;) {
    sim_upx_info_get(x->up, &x->info);
    if (x->info.head || x->info.done) break;
    if (rec->stopping || client_hung_up(x->mc)) {
      sim_upx_abort(x->up);
      note(x, "timeout"); /* no answer before the client gave up */
      return MHD_NO;
    }
    sim_upx_wait(x->up, 50);
  }
  if (!x->info.head) {
    /* A reply that is not HTTP (CURLE_WEIRD_SERVER_REPLY) is the upstream's behaviour:
       noted as a closed connection, which is what the client gets. */
    if (x->info.result == SIM_UPX_UNREACHABLE) {
      static const char msg[] = "{\"error\":{\"message\":\"fusebox record: the upstream is "
                                "unreachable\",\"type\":\"fusebox_record\"}}";
      pthread_mutex_lock(&rec->mu);
      rec->failures++;
      pthread_mutex_unlock(&rec->mu);
      x->noted = 1; /* not the upstream's behaviour: not recorded */
      return answer_plain(x->mc, 502, msg);
    }
    const char *err = error_of(x);
    note(x, err);
    if (err != NULL && strcmp(err, "reset") == 0) reset_client(x->mc);
    return MHD_NO; /* close without a response, as the upstream did */
  }
  x->nh = sim_upx_headers(x->up, x->hname, x->hvalue, SIM_UPX_MAX_HEADERS);
  /* Known length: promise the same, so a body cut short stays cut short. */
  uint64_t size = x->info.content_length >= 0 ? (uint64_t)x->info.content_length
                                               : MHD_SIZE_UNKNOWN;
  struct MHD_Response *r = MHD_create_response_from_callback(size, 16384, body_reader, x, NULL);
  if (r == NULL) return MHD_NO;
  for (int i = 0; i < x->nh; i++)
    if (!sim_upstream_hop_by_hop(x->hname[i])) MHD_add_response_header(r, x->hname[i], x->hvalue[i]);
  enum MHD_Result ret = MHD_queue_response(x->mc, (unsigned)x->info.status, r);
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
  if (x->up != NULL) {
    sim_upx_info_get(x->up, &x->info);
    if (!x->info.done) note(x, "timeout"); /* the client left before the end */
    else if (!x->noted) note(x, error_of(x));
    sim_upx_free(x->up, 1);
  }
  for (int i = 0; i < x->nh; i++) {
    free(x->hname[i]);
    free(x->hvalue[i]);
  }
  for (int i = 0; i < x->nreq; i++) free(x->req_headers[i]);
  free(x->req_headers);
  free(x->method);
  free(x->url);
  free(x->path);
  free(x->query);
  free(x->body);
  free(x->idem);
  free(x);
  *con_cls = NULL;
}

/* ------------------------------------------------------------ the API */

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
  if (sim_upstream_base(opts->upstream, &rec->upstream, err) != SIM_OK) {
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
