/*
 * transport_curl.c - the default transport: one HTTP attempt with libcurl.
 * libcurl never retries here (the guard is the only layer that does), never
 * follows redirects, raises no signals, and uses a fresh connection per
 * attempt. The attempt and connect timeouts are libcurl's; the idle timeout
 * (no byte for N ms) is enforced by driving the transfer with the multi
 * interface and polling no longer than the idle time that is left.
 */
#include "guard/guard_int.h"

#include <curl/curl.h>
#include <math.h>
#include <string.h>
#include <time.h>

typedef struct xfer {
  guard_http_response *resp;
  double last_rx;      /* ms, CLOCK_MONOTONIC */
  int got_status;
  int refused;         /* guard_resp_body said too big */
} xfer;

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
  xfer x = {resp, mono_ms(), 0, 0};
  struct curl_slist *hl = NULL;
  guard_tx tx = GUARD_TX_OTHER;
  CURL *e = curl_easy_init();
  CURLM *m = curl_multi_init();
  if (e == NULL || m == NULL) {
    guard_resp_detail(resp, "cannot create a libcurl handle");
    goto out;
  }
  for (int i = 0; i < req->nheaders; i++) {
    struct curl_slist *t = curl_slist_append(hl, req->headers[i]);
    if (t == NULL) goto out;
    hl = t;
  }
  /* No "Expect: 100-continue" round trip. */
  struct curl_slist *t = curl_slist_append(hl, "Expect:");
  if (t == NULL) goto out;
  hl = t;

  curl_easy_setopt(e, CURLOPT_URL, req->url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
  curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
  curl_easy_setopt(e, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &x);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, ceil_ms(req->timeout_ms));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ceil_ms(req->connect_timeout_ms));
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, NULL);
  if (req->method != NULL && strcmp(req->method, "GET") == 0) {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body ? req->body : "");
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    if (req->method != NULL && strcmp(req->method, "POST") != 0)
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req->method);
  }
  if (curl_multi_add_handle(m, e) != CURLM_OK) goto out;

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
  } else {
    tx = map_error(result, e, &x);
    if (tx != GUARD_TX_OK)
      guard_resp_detail(resp, errbuf[0] ? errbuf : curl_easy_strerror(result));
  }
  curl_multi_remove_handle(m, e);
out:
  if (m) curl_multi_cleanup(m);
  if (e) curl_easy_cleanup(e);
  curl_slist_free_all(hl);
  return tx;
}
