/* test_h2_bridge.c - the HTTP/2 bridge (sim/h2_bridge.c) driven from memory
   by a real HTTP/2 client (an nghttp2 client session), its HTTP/1.1 side a
   socket pair this test answers on: a whole answer; a body held back (the
   HEADERS, no DATA, a PING still answered, then the DATA once it comes: how
   h2_window{} looks to a client); a body in the same read as a head of
   nearly 16 KiB, whole; an h2c Upgrade's request as stream 1, its body
   whole on the HTTP/1.1 side and its answer in stream 1's frames. */
#include <CUnit/CUnit.h>
#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sim/h2_bridge.h"
#include "sim/h2c.h"

typedef struct hb {
  nghttp2_session *cli;
  sim_h2 *srv;
  const char *resp;   /* what the HTTP/1.1 side answers at once */
  int shut;           /* 1: and then ends (else the test ends it) */
  int peer;           /* the HTTP/1.1 side's end, -1 none yet */
  char status[4];
  char body[2048];
  size_t body_len;
  int closed;         /* the client's stream closed */
  uint32_t close_code;
  int ping_acks;
  int data_frames;
} hb;

static ssize_t srv_out(void *arg, const uint8_t *data, size_t len) {
  hb *t = arg;
  return nghttp2_session_mem_recv(t->cli, data, len) < 0 ? -1 : (ssize_t)len;
}

static int srv_add(void *arg, int fd) {
  hb *t = arg;
  size_t n = strlen(t->resp);
  if (send(fd, t->resp, n, MSG_NOSIGNAL) != (ssize_t)n) abort();
  if (t->shut) shutdown(fd, SHUT_WR);
  t->peer = fd;
  return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *arg) {
  (void)s, (void)f, (void)flags;
  hb *t = arg;
  if (nlen == 7 && memcmp(name, ":status", 7) == 0 && vlen == 3) memcpy(t->status, value, 3);
  return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *arg) {
  (void)s, (void)flags, (void)id;
  hb *t = arg;
  if (t->body_len + len > sizeof t->body) len = sizeof t->body - t->body_len;
  memcpy(t->body + t->body_len, data, len);
  t->body_len += len;
  return 0;
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *f, void *arg) {
  (void)s;
  hb *t = arg;
  if (f->hd.type == NGHTTP2_PING && (f->hd.flags & NGHTTP2_FLAG_ACK)) t->ping_acks++;
  if (f->hd.type == NGHTTP2_DATA && f->hd.length > 0) t->data_frames++;
  return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *arg) {
  (void)s, (void)id;
  hb *t = arg;
  t->closed = 1;
  t->close_code = code;
  return 0;
}

/* Moves bytes both ways, and what the HTTP/1.1 side has, until quiet. */
static void settle(hb *t) {
  for (int i = 0; i < 100; i++) {
    const uint8_t *p;
    ssize_t n = nghttp2_session_mem_send(t->cli, &p);
    CU_ASSERT_FATAL(n >= 0);
    if (n > 0) CU_ASSERT_FATAL(sim__h2_recv(t->srv, p, (size_t)n) >= 0);
    int r = sim__h2_pump(t->srv, 0);
    if (r > 0) CU_ASSERT_FATAL(sim__h2_send(t->srv) >= 0);
    if (n == 0 && r <= 0) return;
  }
}

/* A client and the bridge it talks to, nothing sent yet. */
static void open_pair(hb *t, const char *resp, int shut) {
  memset(t, 0, sizeof *t);
  t->resp = resp;
  t->shut = shut;
  t->peer = -1;
  nghttp2_session_callbacks *cb;
  CU_ASSERT_FATAL(nghttp2_session_callbacks_new(&cb) == 0);
  nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
  CU_ASSERT_FATAL(nghttp2_session_client_new(&t->cli, cb, t) == 0);
  nghttp2_session_callbacks_del(cb);
  t->srv = sim__h2_new(srv_out, t, srv_add, t);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t->srv);
}

/* A client with one GET in flight, and the bridge it talks to. */
static void start(hb *t, const char *resp, int shut) {
  open_pair(t, resp, shut);
  nghttp2_submit_settings(t->cli, NGHTTP2_FLAG_NONE, NULL, 0);
#define NV(n, v) {(uint8_t *)n, (uint8_t *)v, sizeof n - 1, sizeof v - 1, NGHTTP2_NV_FLAG_NONE}
  nghttp2_nv nv[] = {NV(":method", "GET"), NV(":scheme", "http"),
                     NV(":path", "/v1/models"), NV(":authority", "127.0.0.1")};
#undef NV
  CU_ASSERT_FATAL(nghttp2_submit_request(t->cli, NULL, nv, 4, NULL, NULL) == 1);
  settle(t);
}

static void stop(hb *t) {
  sim__h2_free(t->srv);
  nghttp2_session_del(t->cli);
  if (t->peer >= 0) close(t->peer);
}

static void test_whole(void) {
  hb t;
  start(&t, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello", 1);
  CU_ASSERT_STRING_EQUAL(t.status, "200");
  CU_ASSERT_EQUAL(t.body_len, 5);
  CU_ASSERT_NSTRING_EQUAL(t.body, "hello", 5);
  CU_ASSERT(t.closed && t.close_code == 0);
  char req[512] = {0};
  CU_ASSERT(recv(t.peer, req, sizeof req - 1, MSG_DONTWAIT) > 0);
  CU_ASSERT(strncmp(req, "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n", 42) == 0);
  stop(&t);
}

static void test_held(void) {
  hb t;
  start(&t, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 0);
  CU_ASSERT_STRING_EQUAL(t.status, "200"); /* the HEADERS */
  CU_ASSERT_EQUAL(t.data_frames, 0);
  CU_ASSERT_FALSE(t.closed);
  nghttp2_submit_ping(t.cli, NGHTTP2_FLAG_NONE, (const uint8_t *)"fbx-ping");
  settle(&t);
  CU_ASSERT_EQUAL(t.ping_acks, 1); /* the connection is alive */
  CU_ASSERT_EQUAL(t.data_frames, 0);
  CU_ASSERT_FALSE(t.closed);
  CU_ASSERT_FATAL(send(t.peer, "hello", 5, MSG_NOSIGNAL) == 5); /* the window opens */
  shutdown(t.peer, SHUT_WR);
  settle(&t);
  CU_ASSERT_EQUAL(t.body_len, 5);
  CU_ASSERT_NSTRING_EQUAL(t.body, "hello", 5);
  CU_ASSERT(t.closed && t.close_code == 0);
  stop(&t);
}

static void test_long_head(void) {
  /* The bridge reads 8 KiB at a time: a 16,000-byte head ends in the
     second read, whose last byte no longer fits the 16 KiB head buffer;
     that byte is the body's, and must not be lost. */
  static char resp[17100];
  const char *top = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nX-Pad: ";
  size_t n = strlen(top);
  memcpy(resp, top, n);
  memset(resp + n, 'p', 16000 - 4 - n);
  memcpy(resp + 16000 - 4, "\r\n\r\n", 4);
  char want[1000];
  for (int i = 0; i < 1000; i++) want[i] = (char)('0' + i % 10);
  memcpy(resp + 16000, want, 1000);
  hb t;
  start(&t, resp, 1);
  CU_ASSERT_STRING_EQUAL(t.status, "200");
  CU_ASSERT_EQUAL(t.body_len, 1000);
  CU_ASSERT(t.body_len == 1000 && memcmp(t.body, want, 1000) == 0);
  CU_ASSERT(t.closed && t.close_code == 0);
  stop(&t);
}

static void test_upgrade(void) {
  hb t;
  open_pair(&t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 1);
  uint8_t pay[12];
  nghttp2_settings_entry set[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
                                  {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20}};
  CU_ASSERT_FATAL(nghttp2_pack_settings_payload(pay, sizeof pay, set, 2) == 12);
  CU_ASSERT_FATAL(nghttp2_session_upgrade2(t.cli, pay, 12, 0, NULL) == 0);
  /* the same request as HTTP/1.1 (base64url of pay) */
  static const char req[] =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"
      "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
      "HTTP2-Settings: AAMAAABkAAQAEAAA\r\nContent-Type: application/json\r\n"
      "Content-Length: 9\r\n\r\n{\"a\":\"b\"}";
  sim_h2c_req r;
  CU_ASSERT_FATAL(sim__h2c_parse(req, sizeof req - 1, &r) == SIM_H2C_YES);
  CU_ASSERT_FATAL(r.settings_len == 12 && memcmp(r.settings, pay, 12) == 0);
  CU_ASSERT_FATAL(sim__h2_upgrade(t.srv, &r) == 0);
  CU_ASSERT(t.peer >= 0); /* stream 1 is forwarded before the preface */
  settle(&t);
  CU_ASSERT_STRING_EQUAL(t.status, "200");
  CU_ASSERT(t.body_len == 2 && memcmp(t.body, "ok", 2) == 0);
  CU_ASSERT(t.closed && t.close_code == 0);
  char got[1024] = {0};
  CU_ASSERT(recv(t.peer, got, sizeof got - 1, MSG_DONTWAIT) > 0);
  const char *top = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:9\r\n";
  CU_ASSERT(strncmp(got, top, strlen(top)) == 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(got, "\r\nContent-Type: application/json\r\n"));
  CU_ASSERT_PTR_NULL(strstr(got, "h2c"));
  CU_ASSERT_PTR_NULL(strstr(got, "HTTP2-Settings"));
  const char *end = strstr(got, "\r\n\r\n");
  CU_ASSERT(end && strstr(got, "Content-Length: 9\r\n") && strcmp(end + 4, "{\"a\":\"b\"}") == 0);
  stop(&t);
}

int suite_h2_bridge(void) {
  CU_pSuite s = CU_add_suite("h2_bridge", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "a whole answer", test_whole) ||
      !CU_add_test(s, "a held body: HEADERS, PING answered, then DATA", test_held) ||
      !CU_add_test(s, "a body read with a head of nearly 16 KiB", test_long_head) ||
      !CU_add_test(s, "an h2c Upgrade's request as stream 1", test_upgrade))
    return CU_get_error();
  return 0;
}
