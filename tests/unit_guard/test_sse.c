/*
 * test_sse.c - the SSE parser: the same events whatever the input is split
 * at (every byte), CR / LF / CRLF line ends, comments, multi-line data, the
 * limits, and an event cut at the end of the input.
 */
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <string.h>

typedef struct sink {
  char out[4096];
  int n;
} sink;

static int collect(void *ud, const char *event, const char *data, size_t len) {
  sink *s = ud;
  size_t l = strlen(s->out);
  snprintf(s->out + l, sizeof s->out - l, "[%s|%.*s]", event, (int)len, data);
  s->n++;
  return 0;
}

static void parse(const char *in, size_t len, size_t cut, sink *s, int finish) {
  guard__sse p;
  memset(s, 0, sizeof *s);
  guard__sse_init(&p, 1 << 16, collect, s);
  CU_ASSERT_EQUAL(guard__sse_feed(&p, in, cut), 0);
  CU_ASSERT_EQUAL(guard__sse_feed(&p, in + cut, len - cut), 0);
  if (finish) guard__sse_finish(&p);
  guard__sse_free(&p);
}

static const char OPENAI[] =
    ": keep-alive\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"hel\"}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\r\n\r\n"
    "event: message_stop\r"
    "data: line one\r"
    "data:line two\r\r"
    "id: 7\nretry: 100\ndata\n\n"
    "data: [DONE]\n\n";
static const char WANT[] =
    "[message|{\"choices\":[{\"delta\":{\"content\":\"hel\"}}]}]"
    "[message|{\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}]"
    "[message_stop|line one\nline two]"
    "[message|]"
    "[message|[DONE]]";

static void test_split_at_every_byte(void) {
  size_t len = strlen(OPENAI);
  for (size_t cut = 0; cut <= len; cut++) {
    sink s;
    parse(OPENAI, len, cut, &s, 0);
    CU_ASSERT_STRING_EQUAL(s.out, WANT);
    if (strcmp(s.out, WANT) != 0) break;
  }
}

static void test_byte_by_byte(void) {
  sink s;
  memset(&s, 0, sizeof s);
  guard__sse p;
  guard__sse_init(&p, 1 << 16, collect, &s);
  for (size_t i = 0; OPENAI[i]; i++) CU_ASSERT_EQUAL(guard__sse_feed(&p, OPENAI + i, 1), 0);
  guard__sse_free(&p);
  CU_ASSERT_STRING_EQUAL(s.out, WANT);
}

static void test_end_of_input(void) {
  sink s;
  const char *a = "data: [DONE]\n"; /* complete line, no blank line */
  parse(a, strlen(a), 0, &s, 1);
  CU_ASSERT_STRING_EQUAL(s.out, "[message|[DONE]]");
  const char *b = "data: {\"a\":1}\n\ndata: [DO"; /* cut inside a line */
  parse(b, strlen(b), 3, &s, 1);
  CU_ASSERT_STRING_EQUAL(s.out, "[message|{\"a\":1}]");
}

static void test_limits(void) {
  sink s;
  memset(&s, 0, sizeof s);
  guard__sse p;
  guard__sse_init(&p, 16, collect, &s);
  CU_ASSERT_EQUAL(guard__sse_feed(&p, "data: 0123456789", 16), 0);
  CU_ASSERT_EQUAL(guard__sse_feed(&p, "abcdef", 6), GUARD_ETOOBIG);
  guard__sse_free(&p);
}

static int stop(void *ud, const char *e, const char *d, size_t n) {
  (void)ud; (void)e; (void)d; (void)n;
  return 7;
}

static void test_callback_stops(void) {
  guard__sse p;
  guard__sse_init(&p, 64, stop, NULL);
  CU_ASSERT_EQUAL(guard__sse_feed(&p, "data: x\n\ndata: y\n\n", 18), 7);
  guard__sse_free(&p);
}

/* Registers the SSE parser suite. */
int suite_sse(void) {
  CU_pSuite s = CU_add_suite("sse", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "input split at every byte", test_split_at_every_byte) ||
      !CU_add_test(s, "input fed byte by byte", test_byte_by_byte) ||
      !CU_add_test(s, "end of input: complete lines only", test_end_of_input) ||
      !CU_add_test(s, "bounded lines and events", test_limits) ||
      !CU_add_test(s, "a callback can stop the feed", test_callback_stops))
    return CU_get_error();
  return 0;
}
