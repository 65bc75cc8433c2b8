/*
 * transport_curl.c - the default transport: one HTTP attempt with libcurl.
 * libcurl never retries here (the guard is the only layer that does), never
 * follows redirects and raises no signals. The attempt and connect timeouts
 * are libcurl's; the idle timeout (no byte for N ms) is enforced by driving
 * the transfer with the multi interface and polling no longer than the idle
 * time that is left.
 *
 * Handles and connections are kept, as real SDKs keep them (issue 13): each
 * thread has one easy handle, one multi handle (whose connection cache keeps
 * a finished response's connection open) and its header list, made on its
 * first attempt and reused by every later attempt and call of that thread,
 * so a retry or the next call to the same provider goes out on the kept-alive
 * connection. A transfer that did not end cleanly (timeout, cut, refused
 * body) leaves libcurl to close its connection; libcurl checks a kept
 * connection is still open before reusing it. libcurl resends a request by
 * itself when a *reused* connection closes before any response byte; that
 * would be a retry the guard did not make, so a second connection set-up
 * within one attempt is refused (the pre-request callback) and the attempt
 * ends GUARD_TX_CLOSED, exactly as on a fresh connection.
 * The thread's handles are freed when the thread ends, and the calling
 * thread's by guard_global_cleanup.
 */
#include "guard/guard_int.h"

#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct xfer {
  guard_http_response *resp;
  double last_rx;      /* ms, CLOCK_MONOTONIC */
  int got_status;
  int refused;         /* guard_resp_body said too big */
  int sends;           /* connection set-ups that reached "send the request" */
  int resent;          /* libcurl tried to resend on a second connection */
} xfer;

/* One thread's kept handles. The header list is rebuilt only when an
 * attempt's headers differ from the last one's. */
typedef struct tcache {
  CURL *e;
  CURLM *m;
  struct curl_slist *hl;
} tcache;

static pthread_key_t tc_key;
static pthread_once_t tc_once = PTHREAD_ONCE_INIT;
static int tc_key_ok;
/* Also the TLS root that keeps the cache reachable for leak checkers. */
static __thread tcache *tc_self;

static void tc_free(void *p) {
  tcache *t = p;
  if (t == NULL) return;
  if (t->m && t->e) curl_multi_remove_handle(t->m, t->e);
  if (t->e) curl_easy_cleanup(t->e);
  if (t->m) curl_multi_cleanup(t->m);
  curl_slist_free_all(t->hl);
  free(t);
}

static void tc_make_key(void) { tc_key_ok = pthread_key_create(&tc_key, tc_free) == 0; }

/* The calling thread's cache, made on first use; NULL without memory. */
static tcache *tc_get(void) {
  if (tc_self != NULL) return tc_self;
  pthread_once(&tc_once, tc_make_key);
  tcache *t = calloc(1, sizeof *t);
  if (t == NULL) return NULL;
  t->e = curl_easy_init();
  t->m = curl_multi_init();
  if (t->e == NULL || t->m == NULL) {
    tc_free(t);
    return NULL;
  }
  if (tc_key_ok) pthread_setspecific(tc_key, t);
  tc_self = t;
  return t;
}

/* Frees the calling thread's kept handles and closes its connections
 * (guard_global_cleanup calls it before curl_global_cleanup). */
void guard__transport_curl_release(void) {
  tcache *t = tc_self;
  if (t == NULL) return;
  tc_self = NULL;
  if (tc_key_ok) pthread_setspecific(tc_key, NULL);
  tc_free(t);
}

/* Whether hl holds exactly the attempt's headers plus "Expect:". */
static int same_headers(const struct curl_slist *hl, const guard_http_request *req) {
  for (int i = 0; i < req->nheaders; i++, hl = hl->next)
    if (hl == NULL || strcmp(hl->data, req->headers[i]) != 0) return 0;
  return hl != NULL && strcmp(hl->data, "Expect:") == 0 && hl->next == NULL;
}

/* The header list for this attempt, kept in t->hl; -1 without memory. */
static int set_headers(tcache *t, const guard_http_request *req) {
  if (t->hl != NULL && same_headers(t->hl, req)) return 0;
  curl_slist_free_all(t->hl);
  t->hl = NULL;
  struct curl_slist *hl = NULL;
  for (int i = 0; i < req->nheaders; i++) {
    struct curl_slist *n = curl_slist_append(hl, req->headers[i]);
    if (n == NULL) goto fail;
    hl = n;
  }
  /* No "Expect: 100-continue" round trip. */
  struct curl_slist *n = curl_slist_append(hl, "Expect:");
  if (n == NULL) goto fail;
  t->hl = n;
  return 0;
fail:
  curl_slist_free_all(hl);
  return -1;
}

/* Called by libcurl once per connection set-up, just before the request
 * is sent: a second call in one attempt is libcurl resending by itself. */
static int on_prereq(void *ud, char *ip, char *local_ip, int port, int local_port) {
  (void)ip; (void)local_ip; (void)port; (void)local_port;
  xfer *x = ud;
  if (++x->sends > 1) {
    x->resent = 1;
    return CURL_PREREQFUNC_ABORT;
  }
  return CURL_PREREQFUNC_OK;
}

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud) {
  xfer *x = ud;
  size_t len = size * n;
  x->last_rx = mono_ms();
  if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
    /* A status line: "HTTP/1.1 200 OK". */
    const char *sp = memchr(p, ' ', len);
    int status = 0;
    if (sp != NULL)
      for (const char *q = sp + 1; q < p + len && *q >= '0' && *q <= '9'; q++)
        status = status * 10 + (*q - '0');
    guard_resp_status(x->resp, status);
    x->got_status = 1;
    return len;
  }
  const char *colon = memchr(p, ':', len);
  if (colon != NULL && colon > p)
    guard_resp_header(x->resp, p, (size_t)(colon - p), colon + 1,
                      len - (size_t)(colon - p) - 1);
  return len; /* an over-limit header is dropped, not fatal */
}

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  xfer *x = ud;
  size_t len = size * n;
  x->last_rx = mono_ms();
  if (guard_resp_body(x->resp, p, len) != GUARD_OK) {
    x->refused = 1;
    return 0; /* makes libcurl stop with CURLE_WRITE_ERROR */
  }
  return len;
}

static long ceil_ms(double v) {
  if (!(v > 0)) return 0;
  double c = ceil(v);
  return c > 2e9 ? 2000000000L : (long)c;
}

static guard_tx map_error(CURLcode cc, CURL *e, const xfer *x) {
  switch (cc) {
  case CURLE_OK:
    return GUARD_TX_OK;
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
  case CURLE_COULDNT_CONNECT:
    return GUARD_TX_CONNECT;
  case CURLE_OPERATION_TIMEDOUT: {
    curl_off_t connected = 0;
    curl_easy_getinfo(e, CURLINFO_CONNECT_TIME_T, &connected);
    return connected == 0 ? GUARD_TX_CONNECT : GUARD_TX_TIMEOUT;
  }
  case CURLE_GOT_NOTHING:
  case CURLE_SEND_ERROR:
    return GUARD_TX_CLOSED;
  case CURLE_RECV_ERROR:
  case CURLE_PARTIAL_FILE:
    return x->got_status ? GUARD_TX_CUT : GUARD_TX_CLOSED;
  case CURLE_WRITE_ERROR:
    return x->refused ? GUARD_TX_TOOBIG : GUARD_TX_OTHER;
  default:
    return GUARD_TX_OTHER;
  }
}

/* The default transport: one attempt with libcurl (see guard.h). */
guard_tx guard_transport_curl(void *ud, const guard_http_request *req,
                              guard_http_response *resp) {
  (void)ud;
  char errbuf[CURL_ERROR_SIZE] = "";
  xfer x = {resp, mono_ms(), 0, 0, 0, 0};
  tcache *t = tc_get();
  if (t == NULL) {
    guard_resp_detail(resp, "cannot create a libcurl handle");
    return GUARD_TX_OTHER;
  }
  if (set_headers(t, req) != 0) {
    guard_resp_detail(resp, "out of memory for the request headers");
    return GUARD_TX_OTHER;
  }
  CURL *e = t->e;
  CURLM *m = t->m;

  /* Every option is set on every attempt (those an earlier attempt may have
   * set too), so nothing of the last attempt carries over but the
   * connection. */
  curl_easy_setopt(e, CURLOPT_URL, req->url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->hl);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &x);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq);
  curl_easy_setopt(e, CURLOPT_PREREQDATA, &x);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, ceil_ms(req->timeout_ms));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ceil_ms(req->connect_timeout_ms));
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, NULL);
  curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
  if (req->method != NULL && strcmp(req->method, "GET") == 0) {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body ? req->body : "");
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    if (req->method != NULL && strcmp(req->method, "POST") != 0)
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req->method);
  }
  guard_tx tx = GUARD_TX_OTHER;
  if (curl_multi_add_handle(m, e) != CURLM_OK) {
    guard_resp_detail(resp, "cannot start a libcurl transfer");
    goto out;
  }

  CURLcode result = CURLE_OK;
  int idle_fired = 0, finished = 0;
  for (;;) {
    int running = 0;
    if (curl_multi_perform(m, &running) != CURLM_OK) {
      result = CURLE_FAILED_INIT;
      break;
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m, &left)) != NULL)
      if (msg->msg == CURLMSG_DONE) {
        result = msg->data.result;
        finished = 1;
      }
    if (finished || running == 0) break;
    int wait = 1000;
    if (req->idle_timeout_ms > 0) {
      double left_ms = x.last_rx + req->idle_timeout_ms - mono_ms();
      if (left_ms <= 0) {
        idle_fired = 1;
        break;
      }
      if (left_ms < wait) wait = (int)ceil(left_ms);
    }
    if (curl_multi_poll(m, NULL, 0, wait, NULL) != CURLM_OK) {
      result = CURLE_FAILED_INIT;
      break;
    }
  }
  if (idle_fired) {
    tx = GUARD_TX_IDLE;
    guard_resp_detail(resp, "no byte within the idle timeout");
  } else if (x.resent) {
    /* The kept connection closed before a response: on a fresh one this is
     * a close before the status line, and the guard decides what follows. */
    tx = GUARD_TX_CLOSED;
    guard_resp_detail(resp, "connection closed before a response");
  } else {
    tx = map_error(result, e, &x);
    if (tx != GUARD_TX_OK)
      guard_resp_detail(resp, errbuf[0] ? errbuf : curl_easy_strerror(result));
  }
  /* An unfinished transfer's connection is closed here, a finished one's
   * stays in the multi handle's cache for the next attempt. */
  curl_multi_remove_handle(m, e);
out:
  /* errbuf and x live on this stack frame: no pointer to them stays set. */
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, NULL);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, NULL);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, NULL);
  curl_easy_setopt(e, CURLOPT_PREREQDATA, NULL);
  return tx;
}
