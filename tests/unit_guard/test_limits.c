/*
 * test_limits.c - every buffer has a maximum: past it is an error (a shape
 * failure for a response), never unbounded growth; bad arguments are
 * refused before anything is sent.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

static void test_buf(void) {
  guard__buf b;
  guard__buf_init(&b, 8);
  CU_ASSERT_EQUAL(guard__buf_adds(&b, "12345"), GUARD_OK);
  CU_ASSERT_EQUAL(guard__buf_adds(&b, "6789"), GUARD_ETOOBIG);
  CU_ASSERT_STRING_EQUAL(b.p, "12345");
  CU_ASSERT_EQUAL(guard__buf_adds(&b, "678"), GUARD_OK);
  CU_ASSERT_EQUAL(b.len, 8);
  CU_ASSERT(b.cap <= 9);
  char *s = guard__buf_take(&b);
  CU_ASSERT_STRING_EQUAL(s, "12345678");
  free(s);
  CU_ASSERT_EQUAL(b.len, 0);
  s = guard__buf_take(&b);
  CU_ASSERT_STRING_EQUAL(s, "");
  free(s);
  guard__buf_free(&b);
}

static void test_body_too_large(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_OK);
  fake_add(&f, (fake_step){.status = 200, .headers = "content-type: text/event-stream\n",
                           .body = "data: {\"choices\":[{\"delta\":{\"content\":\"a long enough answer\"}}]}\n\n"});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.attempts = 1;
  cfg.max_response_bytes = 64;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_SHAPE);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "too_large");
  guard_result_free(r);
  req.stream = 1;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "too_large");
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_headers_bounded(void) {
  guard_http_response r;
  guard__resp_init(&r, 1024, 0, NULL);
  int rc = GUARD_OK;
  for (int i = 0; i < 100 && rc == GUARD_OK; i++) rc = guard_resp_header(&r, "x-a", 3, "v", 1);
  CU_ASSERT_EQUAL(rc, GUARD_ETOOBIG);
  CU_ASSERT_EQUAL(r.nheaders, GUARD__MAX_HEADERS);
  guard_resp_status(&r, 200); /* a new status forgets the headers */
  CU_ASSERT_EQUAL(r.nheaders, 0);
  CU_ASSERT_EQUAL(guard_resp_header(&r, "Retry-After", 11, "  7 \r\n", 6), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(guard__resp_get(&r, "retry-after"), "7");
  guard__resp_free(&r);
}

static void test_bad_arguments(void) {
  fake f;
  fake_init(&f);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_result *r = (guard_result *)1;
  guard_chat_request req = fake_request();
  req.nmessages = 0;
  CU_ASSERT_EQUAL(guard_chat(g, &req, &r), GUARD_EINVAL);
  CU_ASSERT_PTR_NULL(r);
  req = fake_request();
  req.idempotency_key = "this key is far too long for anybody: 0123456789012345678901234567890";
  CU_ASSERT_EQUAL(guard_chat(g, &req, &r), GUARD_EINVAL);
  req.idempotency_key = "bad\nkey";
  CU_ASSERT_EQUAL(guard_chat(g, &req, &r), GUARD_EINVAL);
  guard_message m = {"user", NULL};
  req = fake_request();
  req.messages = &m;
  CU_ASSERT_EQUAL(guard_chat(g, &req, &r), GUARD_EINVAL);
  CU_ASSERT_EQUAL(guard_chat(NULL, &req, &r), GUARD_EINVAL);
  CU_ASSERT_EQUAL(f.nreq, 0);
  guard_free(g);
  fake_free(&f);
}

static void test_chat_key_sent(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_STATUS(500, NULL));
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  req.idempotency_key = "call-7";
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(f.req[0].key, "call-7");
  CU_ASSERT_STRING_EQUAL(f.req[1].key, "call-7");
  CU_ASSERT_STRING_EQUAL(r->key, "call-7");
  guard_result_free(r);
  req.idempotency_key = NULL;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(f.req[2].key, "");
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

/* Registers the limits suite. */
int suite_limits(void) {
  CU_pSuite s = CU_add_suite("limits", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "bounded buffer", test_buf) ||
      !CU_add_test(s, "a body over the limit is shape too_large", test_body_too_large) ||
      !CU_add_test(s, "response headers are bounded", test_headers_bounded) ||
      !CU_add_test(s, "bad arguments send nothing", test_bad_arguments) ||
      !CU_add_test(s, "a chat idempotency key is sent on every attempt", test_chat_key_sent))
    return CU_get_error();
  return 0;
}
