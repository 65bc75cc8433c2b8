/*
 * test_transport_curl.c - the libcurl transport against a tiny loopback
 * server thread that plays one canned answer per case: how each way a
 * connection can end maps to a guard_tx, and what reaches the response.
 * Nothing sleeps; the idle and timeout cases wait a few real milliseconds
 * in libcurl, which is what they test.
 */
#define _GNU_SOURCE
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef enum { ANSWER, CLOSE, RESET, HOLD } mode;

typedef struct server {
  int lfd;
  int port;
  mode how;
  const char *reply; /* raw bytes to write */
  char request[8192];
  pthread_t th;
} server;

static void read_request(int fd, char *buf, size_t cap) {
  size_t n = 0;
  long want = -1;
  while (n + 1 < cap) {
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r <= 0) break;
    n += (size_t)r;
    buf[n] = '\0';
    char *end = strstr(buf, "\r\n\r\n");
    if (end == NULL) continue;
    if (want < 0) {
      char *cl = strcasestr(buf, "content-length:");
      want = (long)(end + 4 - buf) + (cl && cl < end ? atol(cl + 15) : 0);
    }
    if ((long)n >= want) break;
  }
  buf[n] = '\0';
}

static void *serve(void *ud) {
  server *s = ud;
  int fd = accept(s->lfd, NULL, NULL);
  if (fd < 0) return NULL;
  read_request(fd, s->request, sizeof s->request);
  if (s->how == RESET) {
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  if (s->reply != NULL && write(fd, s->reply, strlen(s->reply)) < 0) {
  }
  if (s->how == HOLD) {
    char b[256];
    while (read(fd, b, sizeof b) > 0) {
    } /* until the client goes away */
  }
  close(fd);
  return NULL;
}

static int start(server *s, mode how, const char *reply) {
  memset(s, 0, sizeof *s);
  s->how = how;
  s->reply = reply;
  s->lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(s->lfd, 4) != 0 || getsockname(s->lfd, (struct sockaddr *)&a, &al) != 0)
    return -1;
  s->port = ntohs(a.sin_port);
  return pthread_create(&s->th, NULL, serve, s);
}

static void stop(server *s) {
  pthread_join(s->th, NULL);
  close(s->lfd);
}

/* Runs one attempt against a server playing reply. */
static guard_tx attempt(mode how, const char *reply, const char *method,
                        double timeout_ms, double idle_ms, size_t max_body,
                        int stream, guard_http_response *resp,
                        guard__answer *ans, server *s) {
  CU_ASSERT_EQUAL_FATAL(start(s, how, reply), 0);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", s->port);
  const char *hdrs[] = {"Content-Type: application/json", "Idempotency-Key: k-1"};
  guard_http_request req = {method, url, hdrs, 2, "{\"a\":1}", 7, timeout_ms, 1000, idle_ms};
  if (strcmp(method, "GET") == 0) {
    req.body = NULL;
    req.body_len = 0;
  }
  guard__resp_init(resp, max_body, stream, ans);
  guard_tx tx = guard_transport_curl(NULL, &req, resp);
  stop(s);
  return tx;
}

static void test_answer(void) {
  server s;
  guard_http_response r;
  guard_tx tx = attempt(ANSWER,
                        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\n"
                        "X-Request-Id: req_9\r\nContent-Length: 11\r\n\r\n{\"error\":1}",
                        "POST", 2000, 0, 1024, 0, &r, NULL, &s);
  CU_ASSERT_EQUAL(tx, GUARD_TX_OK);
  CU_ASSERT_EQUAL(r.status, 429);
  CU_ASSERT_STRING_EQUAL(guard__resp_get(&r, "retry-after"), "2");
  CU_ASSERT_STRING_EQUAL(guard__resp_get(&r, "x-request-id"), "req_9");
  CU_ASSERT_STRING_EQUAL(r.body.p, "{\"error\":1}");
  CU_ASSERT_PTR_NOT_NULL(strstr(s.request, "POST /v1/chat/completions HTTP/1.1\r\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(s.request, "Idempotency-Key: k-1\r\n"));
  CU_ASSERT_PTR_NULL(strcasestr(s.request, "Expect:"));
  CU_ASSERT_PTR_NOT_NULL(strstr(s.request, "\r\n\r\n{\"a\":1}"));
  guard__resp_free(&r);

  tx = attempt(ANSWER, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", "GET",
               2000, 0, 1024, 0, &r, NULL, &s);
  CU_ASSERT_EQUAL(tx, GUARD_TX_OK);
  CU_ASSERT_EQUAL(r.status, 404);
  CU_ASSERT_PTR_NOT_NULL(strstr(s.request, "GET /v1/chat/completions HTTP/1.1\r\n"));
  guard__resp_free(&r);
}

static void test_endings(void) {
  server s;
  guard_http_response r;
  CU_ASSERT_EQUAL(attempt(CLOSE, NULL, "POST", 2000, 0, 1024, 0, &r, NULL, &s), GUARD_TX_CLOSED);
  CU_ASSERT_EQUAL(r.status, 0);
  guard__resp_free(&r);
  CU_ASSERT_EQUAL(attempt(RESET, NULL, "POST", 2000, 0, 1024, 0, &r, NULL, &s), GUARD_TX_CLOSED);
  guard__resp_free(&r);
  CU_ASSERT_EQUAL(attempt(CLOSE, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"choi",
                          "POST", 2000, 0, 1024, 0, &r, NULL, &s), GUARD_TX_CUT);
  CU_ASSERT_EQUAL(r.status, 200);
  guard__resp_free(&r);
  CU_ASSERT_EQUAL(attempt(ANSWER, "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n"
                                  "0123456789012345678901234567890123456789",
                          "POST", 2000, 0, 16, 0, &r, NULL, &s), GUARD_TX_TOOBIG);
  guard__resp_free(&r);
}

static void test_connect_refused(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
  getsockname(fd, (struct sockaddr *)&a, &al);
  close(fd); /* nobody listens there now */
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/x", ntohs(a.sin_port));
  guard_http_request req = {"POST", url, NULL, 0, "{}", 2, 2000, 1000, 0};
  guard_http_response r;
  guard__resp_init(&r, 1024, 0, NULL);
  CU_ASSERT_EQUAL(guard_transport_curl(NULL, &req, &r), GUARD_TX_CONNECT);
  CU_ASSERT(r.detail[0] != '\0');
  guard__resp_free(&r);
  req.url = "notaurl://x";
  guard__resp_init(&r, 1024, 0, NULL);
  CU_ASSERT_EQUAL(guard_transport_curl(NULL, &req, &r), GUARD_TX_OTHER);
  guard__resp_free(&r);
}

static void test_stream_and_idle(void) {
  server s;
  guard_http_response r;
  guard__answer ans;
  guard__answer_init(&ans, GUARD_OPENAI, 1024);
  const char *sse =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"he\"}}]}\n\n"
      "data: [DONE]\n\n";
  CU_ASSERT_EQUAL(attempt(ANSWER, sse, "POST", 2000, 1000, 1 << 20, 1, &r, &ans, &s), GUARD_TX_OK);
  CU_ASSERT_EQUAL(r.sse, 1);
  CU_ASSERT_STRING_EQUAL(ans.text.p ? ans.text.p : "", "he");
  CU_ASSERT_EQUAL(ans.done, 1);
  guard__resp_free(&r);
  guard__answer_free(&ans);

  /* One chunk, then silence: the idle timeout ends it, text so far kept. */
  guard__answer_init(&ans, GUARD_OPENAI, 1024);
  const char *stall =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"he\"}}]}\n\n";
  CU_ASSERT_EQUAL(attempt(HOLD, stall, "POST", 5000, 30, 1 << 20, 1, &r, &ans, &s), GUARD_TX_IDLE);
  CU_ASSERT_STRING_EQUAL(ans.text.p ? ans.text.p : "", "he");
  guard__resp_free(&r);
  guard__answer_free(&ans);

  /* No answer at all within the attempt timeout. */
  CU_ASSERT_EQUAL(attempt(HOLD, NULL, "POST", 30, 0, 1024, 0, &r, NULL, &s), GUARD_TX_TIMEOUT);
  guard__resp_free(&r);
}

static int init(void) {
  signal(SIGPIPE, SIG_IGN);
  return guard_global_init() == GUARD_OK ? 0 : 1;
}

static int clean(void) {
  guard_global_cleanup();
  return 0;
}

/* Registers the libcurl transport suite. */
int suite_transport_curl(void) {
  CU_pSuite s = CU_add_suite("transport_curl", init, clean);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "a complete answer: status, headers, body", test_answer) ||
      !CU_add_test(s, "closed, reset, cut, too large", test_endings) ||
      !CU_add_test(s, "connection refused, bad URL", test_connect_refused) ||
      !CU_add_test(s, "SSE stream, idle timeout, attempt timeout", test_stream_and_idle))
    return CU_get_error();
  return 0;
}
