/* test_trace_write.c - trace lines: one JSON object a line, flushed. */
#include <CUnit/CUnit.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/json_write_int.h"
#include "sim/server_int.h"
#include "sim/sim_int.h"

/* Whole lines in path now: how many, or -1 when one does not parse. */
static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  static char line[4096];
  int n = 0, bad = 0;
  while (fgets(line, sizeof line, f)) {
    cJSON *j = cJSON_Parse(line);
    if (j == NULL || line[strlen(line) - 1] != '\n') bad = 1;
    cJSON_Delete(j);
    n++;
  }
  fclose(f);
  return bad ? -1 : n;
}

/* Polls (real time, 2 s at most) until path holds want whole lines. */
static int wait_lines(const char *path, int want) {
  int n = 0;
  for (int i = 0; i < 400 && (n = count_lines(path)) != want && n >= 0; i++) usleep(5000);
  return n;
}

static void test_lines_parse_and_flush(void) {
  char path[] = "/tmp/fbx-trace-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  sim_trace *tr = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__trace_open(path, NULL, &tr, err), 0);
  cJSON *ev = sim__trace_event("arrive", 12.3456789);
  cJSON_AddStringToObject(ev, "text", "line one\nline two \"quoted\"");
  sim__trace_emit(tr, ev);
  /* The first line after a quiet spell is written at once. */
  CU_ASSERT_EQUAL(count_lines(path), 1);
  sim__trace_emit(tr, sim__trace_event("end", 13));
  /* The next, within the batching time, within a few ms: before close. */
  CU_ASSERT_EQUAL(wait_lines(path, 2), 2);
  FILE *f = fopen(path, "r");
  char line[512];
  CU_ASSERT_PTR_NOT_NULL_FATAL(fgets(line, sizeof line, f));
  cJSON *j = cJSON_Parse(line);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "ev")->valuestring, "arrive");
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(j, "t")->valuedouble, 12.345, 0.001);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "text")->valuestring, "line one\nline two \"quoted\"");
  cJSON_Delete(j);
  fclose(f);
  sim__trace_close(tr);
  CU_ASSERT_EQUAL(count_lines(path), 2);
  unlink(path);
}

/* Issue 13: a burst is batched - only whole lines reach the file at any
   moment, all of them within a few ms without a close, and all at close. */
static void test_burst_whole_lines(void) {
  char path[] = "/tmp/fbx-trace-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  sim_trace *tr = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__trace_open(path, NULL, &tr, err), 0);
  int seen_partial = 0;
  for (int i = 0; i < 3000; i++) {
    cJSON *ev = sim__trace_event("arrive", i);
    cJSON_AddStringToObject(ev, "pad", "0123456789abcdef0123456789abcdef0123456789abcdef");
    sim__trace_emit(tr, ev);
    if (i % 500 == 0 && count_lines(path) < 0) seen_partial = 1;
  }
  CU_ASSERT_FALSE(seen_partial);
  CU_ASSERT_EQUAL(wait_lines(path, 3000), 3000); /* the flusher, no close */
  sim__trace_emit(tr, sim__trace_event("end", 1));
  sim__trace_close(tr);
  CU_ASSERT_EQUAL(count_lines(path), 3001);
  unlink(path);
}

/* A strict UTF-8 check (RFC 3629), written apart from trace.c's: decodes
   each sequence and refuses overlong forms, surrogates, values past
   U+10FFFF and the bytes C0, C1, F5-FF. */
static int strict_utf8(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned c = p[i], cp, need;
    if (c < 0x80) { i++; continue; }
    if ((c & 0xE0) == 0xC0) { cp = c & 0x1F; need = 1; }
    else if ((c & 0xF0) == 0xE0) { cp = c & 0x0F; need = 2; }
    else if ((c & 0xF8) == 0xF0) { cp = c & 0x07; need = 3; }
    else return 0;
    if (i + need >= n) return 0;
    for (unsigned k = 1; k <= need; k++) {
      if ((p[i + k] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    static const unsigned min[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[need] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    i += need + 1;
  }
  return 1;
}

/* issue 11: bytes F5-FF passed the check (a header "\xff\xbf\xbf" made a
   line Python's json refuses); overlong forms and surrogates must not pass
   either. Each is replaced by U+FFFD. */
static void test_invalid_utf8_replaced(void) {
  static const char *const bad[] = {
    "\xff\xbf\xbf", "\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80", "\xfe", "x\xff",
    "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf",   /* overlong */
    "\xed\xa0\x80", "\xed\xbf\xbf",                                /* surrogates */
    "\xf4\x90\x80\x80", "\xe2\x82", "\x80",                         /* too big, cut, lone */
  };
  char path[] = "/tmp/fbx-trace-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  sim_trace *tr = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__trace_open(path, NULL, &tr, err), 0);
  size_t nbad = sizeof bad / sizeof bad[0];
  for (size_t i = 0; i < nbad; i++) {
    cJSON *ev = sim__trace_event("arrive", 1);
    cJSON *h = cJSON_AddObjectToObject(ev, "headers");
    cJSON_AddStringToObject(h, "x-name", bad[i]);
    cJSON_AddStringToObject(h, bad[i], "as a name");
    sim__trace_emit(tr, ev);
  }
  cJSON *ok = sim__trace_event("arrive", 1);
  cJSON_AddStringToObject(ok, "text", "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
  sim__trace_emit(tr, ok);
  sim__trace_close(tr);
  FILE *f = fopen(path, "rb");
  char line[1024];
  size_t n = 0;
  while (fgets(line, sizeof line, f)) {
    int valid = strict_utf8((const unsigned char *)line, strlen(line));
    if (!valid) fprintf(stderr, "\n  invalid UTF-8 in trace line %zu (%s)\n", n,
                        n < nbad ? "bad case" : "good text");
    CU_ASSERT(valid);
    if (n < nbad) {
      CU_ASSERT(strstr(line, "\xef\xbf\xbd") != NULL);
    } else {
      CU_ASSERT(strstr(line, "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf") != NULL);
    }
    n++;
  }
  fclose(f);
  CU_ASSERT_EQUAL(n, nbad + 1);
  unlink(path);
}

static void test_unwritable_path(void) {
  sim_trace *tr = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL(sim__trace_open("/no/such/dir/t.jsonl", NULL, &tr, err), SIM_EIO);
  CU_ASSERT(strstr(err, "/no/such/dir/t.jsonl") != NULL);
}

static void test_no_trace_is_fine(void) {
  sim_trace *tr = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL(sim__trace_open(NULL, NULL, &tr, err), 0);
  sim__trace_emit(tr, sim__trace_event("x", 0));
  sim__trace_emit(NULL, sim__trace_event("x", 0));
  sim__trace_close(tr);
  sim__trace_close(NULL);
}

/* Issue 13: the one-pass line writer prints what cJSON prints, byte for
   byte, for valid UTF-8; numbers of every kind read back exactly. */
static void test_line_matches_cjson(void) {
  cJSON *ev = sim__trace_event("arrive", 30.776);
  cJSON_AddStringToObject(ev, "s", "quote \" back \\ nl \n tab \t cr \r bs \b ff \f c1 \x01 c1f \x1f");
  cJSON_AddStringToObject(ev, "utf8", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 / del \x7f");
  cJSON_AddStringToObject(ev, "", "empty key");
  double nums[] = {0, -0.0, 1, -1, 42, 2147483647.0, 2147483648.0, -2147483649.0, 1e14, 1e15, 1e16,
                   0.1, 12.345, -3.25, 1.0 / 3, 1e300, -1e-300, 5e-324, 123456789.123,
                   51.73, 0.001, -0.5, 0.01, 0.25, 999999999.999, 123456789012.5, 1e-4,
                   0.0005, 2.675, 1.005, -7.001, 0.30000000000000004};
  cJSON *arr = cJSON_AddArrayToObject(ev, "nums");
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(nums[i]));
  cJSON *o = cJSON_AddObjectToObject(ev, "obj");
  cJSON_AddTrueToObject(o, "t");
  cJSON_AddFalseToObject(o, "f");
  cJSON_AddNullToObject(o, "n");
  cJSON_AddArrayToObject(o, "empty");
  cJSON_AddObjectToObject(o, "none");
  size_t len = 0;
  const char *line = sim__trace_line(ev, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  char *want = cJSON_PrintUnformatted(ev);
  CU_ASSERT_EQUAL(len, strlen(want) + 1);
  CU_ASSERT(len > 0 && line[len - 1] == '\n');
  CU_ASSERT(memchr(line, '\n', len - 1) == NULL);
  if (len == strlen(want) + 1) CU_ASSERT(memcmp(line, want, len - 1) == 0);
  if (len != strlen(want) + 1 || memcmp(line, want, len - 1) != 0)
    fprintf(stderr, "\n got  %.*s\n want %s\n", (int)len, line, want);
  /* Numbers read back as cJSON's do: within DBL_EPSILON. */
  cJSON *back = cJSON_ParseWithLength(line, len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(back);
  cJSON *ba = cJSON_GetObjectItem(back, "nums");
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
    CU_ASSERT(fabs(cJSON_GetArrayItem(ba, (int)i)->valuedouble - nums[i]) <=
              fabs(nums[i]) * DBL_EPSILON);
  cJSON_Delete(back);
  free(want);
  cJSON_Delete(ev);
}

/* Invalid UTF-8 (a client can send any bytes) becomes U+FFFD, one per bad
   byte, in values and keys; NaN and infinities become null. */
static void test_line_fixes_utf8(void) {
  cJSON *ev = sim__trace_event("arrive", 1);
  cJSON_AddStringToObject(ev, "bad", "a\xff\xc3(\xe2\x82 z");
  cJSON_AddStringToObject(ev, "k\xfe", "v");
  cJSON_AddNumberToObject(ev, "nan", 0.0 / 0.0);
  cJSON_AddNumberToObject(ev, "inf", 1.0 / 0.0);
  size_t len = 0;
  const char *line = sim__trace_line(ev, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  cJSON *back = cJSON_ParseWithLength(line, len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(back);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(back, "bad")->valuestring,
                         "a\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd z");
  CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(back, "k\xef\xbf\xbd"));
  CU_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(back, "nan")));
  CU_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(back, "inf")));
  cJSON_Delete(back);
  cJSON_Delete(ev);
}

/* end.headers from the headers an answer noted: in the order sent, a name
   sent again written once with its last value where it was last sent (a
   header set again replaces the first), none noted: nothing written. */
static void test_end_headers(void) {
  sim_conn *c = calloc(1, sizeof *c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  sim_jw w;
  sim__jw_init(&w, 1 << 20);
  sim__jw_open(&w, '{');
  sim__conn_write_headers(c, &w);
  sim__jw_close(&w, '}');
  char *s = sim__jw_take(&w);
  CU_ASSERT_STRING_EQUAL(s, "{}");
  free(s);
  sim__conn_note_header(c, "x-request-id", "req_1");
  sim__conn_note_header(c, "retry-after", "2");
  for (int i = 0; i < 40; i++) sim__conn_note_header(c, "x-filler", "0123456789"); /* grows */
  sim__conn_note_header(c, "retry-after", "3");
  sim__jw_init(&w, 1 << 20);
  sim__jw_open(&w, '{');
  sim__conn_write_headers(c, &w);
  sim__jw_close(&w, '}');
  s = sim__jw_take(&w);
  CU_ASSERT_STRING_EQUAL(s, "{\"x-request-id\":\"req_1\",\"x-filler\":\"0123456789\",\"retry-after\":\"3\"}");
  free(s);
  free(c->resp_hdrs);
  free(c);
}

/* issue 30: the answer text is kept for the end line only, so a request
   whose arrival was not traced keeps none; a traced one keeps it all. */
static void test_text_only_when_traced(void) {
  sim_conn *c = calloc(1, sizeof *c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  sim__conn_add_text(c, "hello");
  CU_ASSERT_PTR_NULL(c->text);
  CU_ASSERT_EQUAL(c->text_len, 0);
  c->traced = 1;
  sim__conn_add_text(c, "hel");
  sim__conn_add_text(c, "lo");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c->text);
  CU_ASSERT_STRING_EQUAL(c->text, "hello");
  free(c->text);
  free(c);
}

int suite_trace_write(void) {
  CU_pSuite s = CU_add_suite("trace_write", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "lines parse and are flushed", test_lines_parse_and_flush);
  CU_add_test(s, "unwritable path is an error", test_unwritable_path);
  CU_add_test(s, "invalid UTF-8 is replaced", test_invalid_utf8_replaced);
  CU_add_test(s, "no trace", test_no_trace_is_fine);
  CU_add_test(s, "a burst: whole lines, flushed within ms", test_burst_whole_lines);
  CU_add_test(s, "line writer prints what cJSON prints", test_line_matches_cjson);
  CU_add_test(s, "line writer: invalid UTF-8 and NaN", test_line_fixes_utf8);
  CU_add_test(s, "end.headers: a header sent again", test_end_headers);
  CU_add_test(s, "answer text kept only when traced", test_text_only_when_traced);
  return CU_get_error();
}
