/*
 * upstream.c - forwarding a request to a real provider: the rules (which
 * upstream URL, which targets, which headers) and one exchange carried by a
 * libcurl worker thread. Shared by `fusebox record` (import/record.c, a
 * thread per client connection that waits on the exchange) and the
 * upstream{} step (sim/play_upstream.c, an event loop that polls it), so
 * both forward by one rule (sim.h; docs/upstream.md).
 *
 * Credentials: the request's headers (Authorization, x-api-key ...) go to
 * the one upstream origin fixed at start and nowhere else; nothing here
 * writes them anywhere. A target that is not origin-form is never
 * forwarded, so a request cannot pick another host.
 */
#define _GNU_SOURCE /* strcasestr */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "sim/sim.h"

#define MAX_PENDING ((size_t)1 << 20) /* bytes buffered between curl and the reader */

/* ------------------------------------------------------------ the rules */

/* The upstream base; see sim.h. */
int sim_upstream_base(const char *upstream, char **out, char err[SIM_ERRLEN]) {
  *out = NULL;
  if (upstream == NULL ||
      (strncasecmp(upstream, "http://", 7) != 0 && strncasecmp(upstream, "https://", 8) != 0)) {
    snprintf(err, SIM_ERRLEN, "the upstream must be an http:// or https:// URL");
    return SIM_EINVAL;
  }
  CURLU *u = curl_url();
  char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
  int rc = SIM_EINVAL;
  if (u == NULL) {
    snprintf(err, SIM_ERRLEN, "out of memory");
    return SIM_ENOMEM;
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
  *out = malloc(n);
  if (*out == NULL) {
    snprintf(err, SIM_ERRLEN, "out of memory");
    rc = SIM_ENOMEM;
    goto done;
  }
  snprintf(*out, n, "%s://%s%s%s%s", scheme, host, port ? ":" : "", port ? port : "", path);
  size_t l = strlen(*out);
  while (l > 0 && (*out)[l - 1] == '/') (*out)[--l] = '\0';
  rc = SIM_OK;
done:
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_free(path);
  curl_url_cleanup(u);
  return rc;
}

/* The forwarded URL of an origin-form target; see sim.h. */
int sim_upstream_target(const char *base, const char *target, const char *query, char **url) {
  *url = NULL;
  if (base == NULL || target == NULL || target[0] != '/') return SIM_EINVAL;
  for (const unsigned char *p = (const unsigned char *)target; *p; p++)
    if (*p <= 0x20 || *p >= 0x7f || *p == '\\') return SIM_EINVAL;
  if (query != NULL)
    for (const unsigned char *p = (const unsigned char *)query; *p; p++)
      if (*p <= 0x20 || *p >= 0x7f) return SIM_EINVAL;
  size_t n = strlen(base) + strlen(target) + (query ? strlen(query) : 0) + 1;
  *url = malloc(n);
  if (*url == NULL) return SIM_ENOMEM;
  snprintf(*url, n, "%s%s%s", base, target, query ? query : "");
  return SIM_OK;
}

/* 1 for a header never forwarded; see sim.h. */
int sim_upstream_hop_by_hop(const char *name) {
  static const char *const h[] = {"connection", "keep-alive", "transfer-encoding",
                                  "content-length", "proxy-connection", "upgrade", "te",
                                  "trailer", "host", "expect", "accept-encoding",
                                  "proxy-authorization", NULL};
  for (int i = 0; h[i]; i++)
    if (strcasecmp(name, h[i]) == 0) return 1;
  return 0;
}

/* ---------------------------------------------------------- an exchange */

struct sim_upx {
  char *method, *url, *body;
  size_t body_len, keep;
  struct curl_slist *req_headers;
  char errbuf[CURL_ERROR_SIZE];
  pthread_t worker;
  int refs;        /* the owner and the worker; the last one frees */
  int detached;    /* the owner let go without waiting (sim_upx_free(x, 0)) */

  pthread_mutex_t mu;
  pthread_cond_t cv;
  int head, done, abort, result, stream;
  long status;
  long long clen;
  char *hname[SIM_UPX_MAX_HEADERS], *hvalue[SIM_UPX_MAX_HEADERS];
  int nh;
  char *pend;      /* received, not yet read */
  size_t pend_len, pend_cap;
  char *kept;      /* the first `keep` bytes: allocated once, never moved */
  size_t kept_len, received;
  double t_head, t_done;
};

static int live_workers; /* workers not yet ended (atomic): sim_upx_drain */

typedef struct wctx {
  sim_upx *x;
  CURL *c;
} wctx;

static void clear_headers(sim_upx *x) {
  for (int i = 0; i < x->nh; i++) {
    free(x->hname[i]);
    free(x->hvalue[i]);
  }
  x->nh = 0;
}

/* The head is complete once curl knows a final status (the blank line
   after it, the first body byte or the end). Called with mu held. */
static void head_ready(sim_upx *x, CURL *c) {
  if (x->head) return;
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  if (code <= 0) return;
  x->status = code;
  x->head = 1;
  x->t_head = sim_now_ms();
  for (int i = 0; i < x->nh; i++) {
    if (strcasecmp(x->hname[i], "content-type") == 0 && strcasestr(x->hvalue[i], "event-stream"))
      x->stream = 1;
    if (strcasecmp(x->hname[i], "content-length") == 0)
      x->clen = strtoll(x->hvalue[i], NULL, 10);
  }
  pthread_cond_broadcast(&x->cv);
}

static size_t on_header(char *buf, size_t size, size_t n, void *arg) {
  wctx *w = arg;
  sim_upx *x = w->x;
  size_t len = size * n, l = len;
  while (l > 0 && (buf[l - 1] == '\r' || buf[l - 1] == '\n')) l--;
  pthread_mutex_lock(&x->mu);
  if (l >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
    clear_headers(x); /* a new header block (after 100 Continue) */
  } else if (l == 0) {
    long code = 0;
    curl_easy_getinfo(w->c, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200) head_ready(x, w->c);
  } else if (x->nh < SIM_UPX_MAX_HEADERS && !x->head) {
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

static size_t on_body(char *buf, size_t size, size_t n, void *arg) {
  wctx *w = arg;
  sim_upx *x = w->x;
  size_t len = size * n;
  pthread_mutex_lock(&x->mu);
  head_ready(x, w->c);
  while (!x->abort && x->pend_len + len > MAX_PENDING && x->pend_len > 0)
    pthread_cond_wait(&x->cv, &x->mu); /* the reader is slower: wait for it */
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
  if (x->keep > 0 && x->kept_len < x->keep) {
    if (x->kept == NULL) x->kept = malloc(x->keep + 1);
    if (x->kept != NULL) {
      size_t k = len < x->keep - x->kept_len ? len : x->keep - x->kept_len;
      memcpy(x->kept + x->kept_len, buf, k);
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
  sim_upx *x = arg;
  pthread_mutex_lock(&x->mu);
  int stop = x->abort;
  pthread_mutex_unlock(&x->mu);
  return stop;
}

/* How a transfer that ended with res looks to a client. Called with mu held. */
static int result_of(const sim_upx *x, CURLcode res) {
  if (res == CURLE_OK) return SIM_UPX_OK;
  if (x->abort) return SIM_UPX_TIMEOUT; /* the client gave up, or a stop */
  if (!x->head && (res == CURLE_COULDNT_CONNECT || res == CURLE_COULDNT_RESOLVE_HOST ||
                   res == CURLE_URL_MALFORMAT || res == CURLE_OPERATION_TIMEDOUT ||
                   res == CURLE_SSL_CONNECT_ERROR || res == CURLE_PEER_FAILED_VERIFICATION))
    return SIM_UPX_UNREACHABLE;
  /* A reply that is not HTTP (HTTP/0.9, CURLE_UNSUPPORTED_PROTOCOL or
     CURLE_WEIRD_SERVER_REPLY) is the upstream's behaviour: a closed
     connection, which is what the client gets. */
  if (res == CURLE_GOT_NOTHING) return SIM_UPX_CLOSED;
  if (res == CURLE_RECV_ERROR || res == CURLE_SEND_ERROR)
    return x->head && !x->stream ? SIM_UPX_TRUNCATED : x->head ? SIM_UPX_CLOSED : SIM_UPX_RESET;
  if (res == CURLE_PARTIAL_FILE) return x->stream ? SIM_UPX_CLOSED : SIM_UPX_TRUNCATED;
  if (res == CURLE_OPERATION_TIMEDOUT) return SIM_UPX_TIMEOUT;
  return x->head ? (x->stream ? SIM_UPX_CLOSED : SIM_UPX_TRUNCATED) : SIM_UPX_CLOSED;
}

static void upx_release(sim_upx *x) {
  clear_headers(x);
  curl_slist_free_all(x->req_headers);
  free(x->method);
  free(x->url);
  free(x->body);
  free(x->pend);
  free(x->kept);
  pthread_mutex_destroy(&x->mu);
  pthread_cond_destroy(&x->cv);
  free(x);
}

/* Drops one reference (called with mu held; unlocks it). */
static void upx_unref_locked(sim_upx *x) {
  int last = --x->refs == 0;
  pthread_mutex_unlock(&x->mu);
  if (last) upx_release(x);
}

static void *worker_main(void *arg) {
  sim_upx *x = arg;
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
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L); /* a redirect is the client's */
    res = curl_easy_perform(c);
  }
  pthread_mutex_lock(&x->mu);
  if (c != NULL) head_ready(x, c);
  x->result = result_of(x, res);
  x->done = 1;
  x->t_done = sim_now_ms();
  pthread_cond_broadcast(&x->cv);
  int detached = x->detached;
  curl_easy_cleanup(c);
  if (detached) {
    upx_unref_locked(x); /* nobody joins a detached worker */
    pthread_detach(pthread_self());
  } else {
    pthread_mutex_unlock(&x->mu);
  }
  __atomic_sub_fetch(&live_workers, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* Starts one exchange; see sim.h. */
int sim_upx_start(const sim_upx_req *req, sim_upx **out) {
  *out = NULL;
  sim_upx *x = calloc(1, sizeof *x);
  if (x == NULL) return SIM_ENOMEM;
  pthread_mutex_init(&x->mu, NULL);
  pthread_cond_init(&x->cv, NULL);
  x->clen = -1;
  x->keep = req->keep;
  x->method = strdup(req->method ? req->method : "POST");
  x->url = strdup(req->url ? req->url : "");
  x->body_len = req->body_len;
  x->body = malloc(req->body_len + 1);
  int ok = x->method && x->url && x->body;
  if (ok) {
    if (req->body_len) memcpy(x->body, req->body, req->body_len);
    x->body[req->body_len] = '\0';
  }
  for (int i = 0; ok && i < req->nheaders; i++) {
    struct curl_slist *l = curl_slist_append(x->req_headers, req->headers[i]);
    if (l == NULL) ok = 0;
    else x->req_headers = l;
  }
  /* curl's own Expect and Accept-Encoding are not the client's: none */
  static const char *const off[] = {"Expect:", "Accept-Encoding:", NULL};
  for (int i = 0; ok && off[i]; i++) {
    struct curl_slist *l = curl_slist_append(x->req_headers, off[i]);
    if (l == NULL) ok = 0;
    else x->req_headers = l;
  }
  x->refs = 2;
  __atomic_add_fetch(&live_workers, 1, __ATOMIC_ACQUIRE);
  if (!ok || pthread_create(&x->worker, NULL, worker_main, x) != 0) {
    __atomic_sub_fetch(&live_workers, 1, __ATOMIC_RELEASE);
    upx_release(x);
    return SIM_ENOMEM;
  }
  *out = x;
  return SIM_OK;
}

/* What is known of x; see sim.h. */
void sim_upx_info_get(sim_upx *x, sim_upx_info *out) {
  pthread_mutex_lock(&x->mu);
  out->head = x->head;
  out->done = x->done;
  out->result = x->done ? x->result : SIM_UPX_RUNNING;
  out->status = x->status;
  out->stream = x->stream;
  out->content_length = x->clen;
  out->received = x->received;
  out->t_head = x->t_head;
  out->t_done = x->t_done;
  pthread_mutex_unlock(&x->mu);
}

/* The answer's headers; see sim.h. */
int sim_upx_headers(sim_upx *x, char **names, char **values, int max) {
  int n = 0;
  pthread_mutex_lock(&x->mu);
  for (int i = 0; x->head && i < x->nh && n < max; i++) {
    names[n] = strdup(x->hname[i]);
    values[n] = strdup(x->hvalue[i]);
    if (names[n] == NULL || values[n] == NULL) {
      free(names[n]);
      free(values[n]);
      continue;
    }
    n++;
  }
  pthread_mutex_unlock(&x->mu);
  return n;
}

/* Takes received body bytes; see sim.h. */
long sim_upx_read(sim_upx *x, char *buf, size_t max) {
  pthread_mutex_lock(&x->mu);
  long r;
  if (x->pend_len > 0) {
    size_t n = x->pend_len < max ? x->pend_len : max;
    memcpy(buf, x->pend, n);
    memmove(x->pend, x->pend + n, x->pend_len - n);
    x->pend_len -= n;
    pthread_cond_broadcast(&x->cv); /* room for the worker */
    r = (long)n;
  } else {
    r = x->done ? -1 : 0;
  }
  pthread_mutex_unlock(&x->mu);
  return r;
}

/* Waits for news; see sim.h. */
void sim_upx_wait(sim_upx *x, int ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += (long)ms * 1000000L;
  ts.tv_sec += ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  pthread_mutex_lock(&x->mu);
  if (!x->done && x->pend_len == 0) pthread_cond_timedwait(&x->cv, &x->mu, &ts);
  pthread_mutex_unlock(&x->mu);
}

/* A copy of the kept bytes; see sim.h. */
char *sim_upx_kept(sim_upx *x, size_t *len) {
  char *p = NULL;
  *len = 0;
  pthread_mutex_lock(&x->mu);
  if (x->kept != NULL && (p = malloc(x->kept_len + 1)) != NULL) {
    memcpy(p, x->kept, x->kept_len);
    p[x->kept_len] = '\0';
    *len = x->kept_len;
  }
  pthread_mutex_unlock(&x->mu);
  return p;
}

/* Stops the transfer; see sim.h. */
void sim_upx_abort(sim_upx *x) {
  pthread_mutex_lock(&x->mu);
  x->abort = 1;
  pthread_cond_broadcast(&x->cv);
  pthread_mutex_unlock(&x->mu);
}

/* Aborts and releases; see sim.h. */
void sim_upx_free(sim_upx *x, int wait) {
  if (x == NULL) return;
  pthread_mutex_lock(&x->mu);
  x->abort = 1;
  pthread_cond_broadcast(&x->cv);
  if (wait || x->done) {
    pthread_mutex_unlock(&x->mu);
    pthread_join(x->worker, NULL);
    pthread_mutex_lock(&x->mu);
    x->refs--; /* the worker's: it ended without dropping it */
    upx_unref_locked(x);
    return;
  }
  x->detached = 1;
  upx_unref_locked(x);
}

/* Waits for the workers still running; see sim.h. */
int sim_upx_drain(int ms) {
  struct timespec step = {0, 5000000}; /* 5 ms */
  for (int waited = 0; waited < ms; waited += 5) {
    if (__atomic_load_n(&live_workers, __ATOMIC_ACQUIRE) <= 0) return 0;
    nanosleep(&step, NULL);
  }
  return __atomic_load_n(&live_workers, __ATOMIC_ACQUIRE);
}

/* The log's word for a result; see sim.h. */
const char *sim_upx_result_name(int result) {
  switch (result) {
  case SIM_UPX_CLOSED:
  case SIM_UPX_UNREACHABLE: return "closed";
  case SIM_UPX_RESET: return "reset";
  case SIM_UPX_TRUNCATED: return "truncated";
  case SIM_UPX_TIMEOUT: return "timeout";
  default: return NULL;
  }
}
