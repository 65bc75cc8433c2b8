/* test_h2c.c - which first bytes of a connection fusebox takes as an h2c
   Upgrade (sim/h2c.c): each case its bytes and the answer side by side;
   then a good request cut at every byte (no while the head is not whole,
   more while the body is not, yes once it is). */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "sim/h2c.h"

#define TOP "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
#define UP "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n"

static const struct { const char *why, *req; int want; } cases[] = {
    {"curl --http2", TOP UP "Content-Length: 2\r\n\r\n{}", SIM_H2C_YES},
    {"no body", "GET /v1/models HTTP/1.1\r\nHost: x\r\n" UP "\r\n", SIM_H2C_YES},
    {"empty settings", TOP "Connection: upgrade,http2-settings\r\nUpgrade: h2c\r\nHTTP2-Settings:\r\n\r\n", SIM_H2C_YES},
    {"padded settings, any case", TOP "connection: UPGRADE, HTTP2-SETTINGS\r\nupgrade: H2C\r\nhttp2-settings: AAMAAABk==\r\n\r\n", SIM_H2C_YES},
    {"body not all in", TOP UP "Content-Length: 10\r\n\r\n{}", SIM_H2C_MORE},
    {"head not whole", TOP UP "Content-Le", SIM_H2C_NO},
    {"websocket", TOP "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: x\r\n\r\n", SIM_H2C_NO},
    {"no HTTP2-Settings", TOP "Connection: Upgrade\r\nUpgrade: h2c\r\n\r\n", SIM_H2C_NO},
    {"HTTP2-Settings not in Connection", TOP "Connection: Upgrade\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABk\r\n\r\n", SIM_H2C_NO},
    {"no Connection", TOP "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABk\r\n\r\n", SIM_H2C_NO},
    {"two HTTP2-Settings", TOP UP "HTTP2-Settings: AAMAAABk\r\n\r\n", SIM_H2C_NO},
    {"settings not base64url", TOP "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMA+ABk\r\n\r\n", SIM_H2C_NO},
    {"settings not 6-byte entries", TOP "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAA\r\n\r\n", SIM_H2C_NO},
    {"ENABLE_PUSH 2", TOP "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAIAAAAC\r\n\r\n", SIM_H2C_NO},
    {"ENABLE_CONNECT_PROTOCOL 2", TOP "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAgAAAAC\r\n\r\n", SIM_H2C_NO},
    {"MAX_FRAME_SIZE too small", TOP "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAUAAAAB\r\n\r\n", SIM_H2C_NO},
    {"chunked", TOP UP "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", SIM_H2C_NO},
    {"body over the bound", TOP UP "Content-Length: 65537\r\n\r\n", SIM_H2C_NO},
    {"two Content-Length", TOP UP "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", SIM_H2C_NO},
    {"Content-Length not digits", TOP UP "Content-Length: +2\r\n\r\n{}", SIM_H2C_NO},
    {"Expect", TOP UP "Expect: 100-continue\r\nContent-Length: 2\r\n\r\n", SIM_H2C_NO},
    {"no Host", "GET / HTTP/1.1\r\n" UP "\r\n", SIM_H2C_NO},
    {"two Host", TOP "Host: y\r\n" UP "\r\n", SIM_H2C_NO},
    {"HTTP/1.0", "GET / HTTP/1.0\r\nHost: x\r\n" UP "\r\n", SIM_H2C_NO},
    {"absolute target", "GET http://x/ HTTP/1.1\r\nHost: x\r\n" UP "\r\n", SIM_H2C_NO},
    {"folded line", TOP UP "X-A: b\r\n c\r\n\r\n", SIM_H2C_NO},
    {"bare LF", TOP UP "X-A: b\n\r\n", SIM_H2C_NO},
    {"control byte in a value", TOP UP "X-A: b\001c\r\n\r\n", SIM_H2C_NO},
    {"space before the colon", TOP UP "X-A : b\r\n\r\n", SIM_H2C_NO},
    {"the preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", SIM_H2C_NO},
};

static void test_cases(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sim_h2c_req r;
    int got = sim__h2c_parse(cases[i].req, strlen(cases[i].req), &r);
    if (got != cases[i].want) printf("\n  h2c case '%s': %d, want %d\n", cases[i].why, got, cases[i].want);
    CU_ASSERT_EQUAL(got, cases[i].want);
  }
}

static void test_fields(void) {
  static const char req[] = TOP "Connection: Upgrade, HTTP2-Settings, X-Hop\r\nUpgrade: h2c\r\n"
                            "HTTP2-Settings: AAMAAABk\r\nX-Hop: 1\r\nKeep-Alive: 5\r\n"
                            "Authorization: Bearer k\r\nContent-Length: 2\r\n\r\n{}";
  sim_h2c_req r;
  CU_ASSERT_FATAL(sim__h2c_parse(req, sizeof req - 1, &r) == SIM_H2C_YES);
  CU_ASSERT(r.method.n == 4 && memcmp(r.method.p, "POST", 4) == 0);
  CU_ASSERT(r.path.n == 20 && memcmp(r.path.p, "/v1/chat/completions", 20) == 0);
  CU_ASSERT(r.authority.n == 9 && memcmp(r.authority.p, "127.0.0.1", 9) == 0);
  CU_ASSERT(r.settings_len == 6 && memcmp(r.settings, "\0\3\0\0\0\x64", 6) == 0);
  CU_ASSERT_FATAL(r.nfields == 1); /* the hop's own fields left out */
  CU_ASSERT(r.name[0].n == 13 && memcmp(r.name[0].p, "Authorization", 13) == 0);
  CU_ASSERT(r.value[0].n == 8 && memcmp(r.value[0].p, "Bearer k", 8) == 0);
  CU_ASSERT(r.body_len == 2 && r.head_len == sizeof req - 3 && memcmp(r.body, "{}", 2) == 0);
}

static void test_cut(void) {
  static const char req[] = TOP UP "Content-Length: 2\r\n\r\n{}";
  size_t n = sizeof req - 1, head = n - 2;
  for (size_t k = 0; k <= n; k++) {
    sim_h2c_req r;
    int got = sim__h2c_parse(req, k, &r), want = k < head ? SIM_H2C_NO : k < n ? SIM_H2C_MORE : SIM_H2C_YES;
    if (got != want) printf("\n  cut at %zu: %d, want %d\n", k, got, want);
    CU_ASSERT_EQUAL(got, want);
    if (got == SIM_H2C_MORE) CU_ASSERT_EQUAL(r.head_len + r.body_len, n);
  }
}

int suite_h2c(void) {
  CU_pSuite s = CU_add_suite("h2c", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "which first bytes are an h2c Upgrade", test_cases) ||
      !CU_add_test(s, "the upgraded request's parts", test_fields) ||
      !CU_add_test(s, "a good request cut at every byte", test_cut))
    return CU_get_error();
  return 0;
}
