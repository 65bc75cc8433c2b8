/* test_json_write.c - JSON written field by field (sim/json_write.c): the
   bytes cJSON prints for the same tree, its commas, its bound, and the hot
   bodies and trace lines built with it. */
#include <CUnit/CUnit.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/dialect_int.h"
#include "sim/json_write_int.h"

/* got (a writer's bytes) equals what cJSON prints for want; prints both
   when not. */
static void assert_same(const char *got, const cJSON *want_tree) {
  char *want = cJSON_PrintUnformatted(want_tree);
  CU_ASSERT_PTR_NOT_NULL_FATAL(want);
  CU_ASSERT_PTR_NOT_NULL(got);
  int same = got != NULL && strcmp(got, want) == 0;
  CU_ASSERT(same);
  if (!same) fprintf(stderr, "\n got  %s\n want %s\n", got ? got : "(null)", want);
  free(want);
}

/* The same object written field by field and as a tree. */
static void test_fields_match_cjson(void) {
  cJSON *t = cJSON_CreateObject();
  cJSON_AddStringToObject(t, "s", "quote \" slash \\ nl \n tab \t ctl \x01 caf\xc3\xa9");
  cJSON_AddNumberToObject(t, "i", -42);
  cJSON_AddNumberToObject(t, "f", 0.1);
  cJSON_AddNumberToObject(t, "big", 1e300);
  cJSON_AddNullToObject(t, "n");
  cJSON_AddTrueToObject(t, "yes");
  cJSON_AddFalseToObject(t, "no");
  cJSON *a = cJSON_AddArrayToObject(t, "a");
  cJSON_AddItemToArray(a, cJSON_CreateNumber(1));
  cJSON_AddItemToArray(a, cJSON_CreateString("two"));
  cJSON_AddItemToArray(a, cJSON_CreateObject());
  cJSON_AddItemToArray(a, cJSON_CreateArray());
  cJSON_AddItemToArray(a, cJSON_CreateNull());
  cJSON_AddObjectToObject(t, "empty");

  sim_jw w;
  sim__jw_init(&w, 4096);
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "s", "quote \" slash \\ nl \n tab \t ctl \x01 caf\xc3\xa9");
  sim__jw_knum(&w, "i", -42);
  sim__jw_knum(&w, "f", 0.1);
  sim__jw_knum(&w, "big", 1e300);
  sim__jw_knull(&w, "n");
  sim__jw_kbool(&w, "yes", 1);
  sim__jw_kbool(&w, "no", 0);
  sim__jw_key(&w, "a");
  sim__jw_open(&w, '[');
  sim__jw_num(&w, 1);
  sim__jw_str(&w, "two");
  sim__jw_open(&w, '{');
  sim__jw_close(&w, '}');
  sim__jw_open(&w, '[');
  sim__jw_close(&w, ']');
  sim__jw_null(&w);
  sim__jw_close(&w, ']');
  sim__jw_key(&w, "empty");
  sim__jw_open(&w, '{');
  sim__jw_close(&w, '}');
  sim__jw_close(&w, '}');
  char *got = sim__jw_take(&w);
  assert_same(got, t);
  free(got);

  /* The tree itself through the writer. */
  sim__jw_init(&w, 4096);
  sim__jw_cjson(&w, t);
  got = sim__jw_take(&w);
  assert_same(got, t);
  free(got);
  cJSON_Delete(t);
}

/* A writer never holds more than its maximum: past it nothing more is
   written and take gives NULL, for short and long strings alike. */
static void test_bounded(void) {
  sim_jw w;
  sim__jw_init(&w, 16);
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "k", "0123456789abcdef");
  CU_ASSERT(w.oom);
  CU_ASSERT(w.cap <= 16);
  CU_ASSERT_PTR_NULL(sim__jw_take(&w));

  size_t n = 200000;
  char *big = malloc(n + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(big);
  memset(big, 'x', n);
  big[n] = '\0';
  sim__jw_init(&w, n + 1); /* one byte short of the quotes */
  sim__jw_str(&w, big);
  CU_ASSERT(w.oom);
  CU_ASSERT_PTR_NULL(sim__jw_take(&w));
  /* A long string takes the room it needs, not 6 times its length. */
  sim__jw_init(&w, n + 3);
  sim__jw_str(&w, big);
  CU_ASSERT_FALSE(w.oom);
  CU_ASSERT(w.cap <= n + 3);
  char *got = sim__jw_take(&w);
  CU_ASSERT(got != NULL && strlen(got) == n + 2);
  free(got);
  free(big);
}

/* With fix_utf8 (the trace) invalid UTF-8 is written as U+FFFD, one per
   bad byte; without (answer bodies) the bytes pass as cJSON passes them. */
static void test_invalid_utf8(void) {
  const char *bad = "a\xff\xc3(\xed\xa0\x80z";
  sim_jw w;
  sim__jw_init(&w, 256);
  w.fix_utf8 = 1;
  sim__jw_str(&w, bad);
  char *got = sim__jw_take(&w);
  CU_ASSERT_STRING_EQUAL(got, "\"a\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz\"");
  free(got);
  sim__jw_init(&w, 256);
  sim__jw_str(&w, bad);
  got = sim__jw_take(&w);
  cJSON *s = cJSON_CreateString(bad);
  assert_same(got, s);
  cJSON_Delete(s);
  free(got);
}

/* A byte to escape (or, with fix_utf8, to check) of every kind, at every
   place of strings of 0-20 other bytes, is written as cJSON writes it: the
   runs of plain bytes put_string copies at once end where they must. */
static void test_escape_every_place(void) {
  static const char *odd[] = {"\"", "\\", "\n", "\x01", "\x1f", "\x7f", " ", "~",
                              "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++)
    for (int len = 0; len <= 20; len++)
      for (int at = 0; at <= len; at++)
        for (int fix = 0; fix <= 1; fix++) {
          char str[64];
          size_t n = 0;
          for (int i = 0; i < len; i++) {
            if (i == at) n += (size_t)sprintf(str + n, "%s", odd[k]);
            else str[n++] = (char)('a' + i % 26);
          }
          if (at == len) n += (size_t)sprintf(str + n, "%s", odd[k]);
          str[n] = '\0';
          sim_jw w;
          sim__jw_init(&w, 512);
          w.fix_utf8 = fix;
          sim__jw_str(&w, str);
          char *got = sim__jw_take(&w);
          cJSON *want = cJSON_CreateString(str);
          assert_same(got, want);
          cJSON_Delete(want);
          free(got);
        }
}

/* The chat.completion body as the cJSON tree it was built as before
   (issue 13 made it field by field): the same bytes, tool calls included. */
static cJSON *chat_tree(const sim_step *s, const char *id, const char *model, const char *text,
                        int tin, int tout, double created) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "object", "chat.completion");
  cJSON_AddNumberToObject(o, "created", created);
  cJSON_AddStringToObject(o, "model", model);
  cJSON *choices = cJSON_AddArrayToObject(o, "choices");
  cJSON *choice = cJSON_CreateObject();
  cJSON_AddNumberToObject(choice, "index", 0);
  cJSON *msg = cJSON_AddObjectToObject(choice, "message");
  cJSON_AddStringToObject(msg, "role", "assistant");
  if (text) cJSON_AddStringToObject(msg, "content", text);
  else cJSON_AddNullToObject(msg, "content");
  cJSON_AddNullToObject(msg, "refusal");
  if (s->ntool_calls > 0) {
    cJSON *tcs = cJSON_AddArrayToObject(msg, "tool_calls");
    for (int i = 0; i < s->ntool_calls; i++) {
      cJSON *t = cJSON_CreateObject();
      cJSON_AddStringToObject(t, "id", s->tool_calls[i].id);
      cJSON_AddStringToObject(t, "type", "function");
      cJSON *fn = cJSON_AddObjectToObject(t, "function");
      cJSON_AddStringToObject(fn, "name", s->tool_calls[i].name);
      cJSON_AddStringToObject(fn, "arguments", s->tool_calls[i].arguments);
      cJSON_AddItemToArray(tcs, t);
    }
  }
  cJSON_AddNullToObject(choice, "logprobs");
  cJSON_AddStringToObject(choice, "finish_reason", s->ntool_calls ? "tool_calls" : "stop");
  cJSON_AddItemToArray(choices, choice);
  cJSON *u = cJSON_AddObjectToObject(o, "usage");
  cJSON_AddNumberToObject(u, "prompt_tokens", tin);
  cJSON_AddNumberToObject(u, "completion_tokens", tout);
  cJSON_AddNumberToObject(u, "total_tokens", tin + tout);
  cJSON_AddNullToObject(o, "system_fingerprint");
  return o;
}

static void test_chat_body_bytes(void) {
  sim_tool_call tcs[2] = {{.id = "call_1", .name = "get_weather", .arguments = "{\"city\":\"Paris\"}"},
                          {.id = "call_2", .name = "send\"mail", .arguments = "not json"}};
  sim_step s = {.kind = SIM_STEP_CHAT};
  const char *texts[] = {"hello", "line\nbreak \"quoted\" caf\xc3\xa9", "", NULL};
  for (int with_tools = 0; with_tools < 2; with_tools++) {
    s.ntool_calls = with_tools ? 2 : 0;
    s.tool_calls = with_tools ? tcs : NULL;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
      char *got = sim__openai_chat_body(&s, "chatcmpl-1", "gpt-4o-mini", texts[i], 12, 3);
      CU_ASSERT_PTR_NOT_NULL_FATAL(got);
      /* created is the clock's: take the body's own for the reference. */
      cJSON *back = cJSON_Parse(got);
      CU_ASSERT_PTR_NOT_NULL_FATAL(back);
      double created = cJSON_GetObjectItem(back, "created")->valuedouble;
      cJSON_Delete(back);
      cJSON *want = chat_tree(&s, "chatcmpl-1", "gpt-4o-mini", texts[i], 12, 3, created);
      assert_same(got, want);
      cJSON_Delete(want);
      free(got);
    }
  }
}

/* A line begun and committed field by field is one JSON line, with a
   tap's session name last. */
/* An integer written by sim__jw_next_int reads as sim__jw_next_num writes
   it, at the edges of its fast path too. */
static void test_next_int(void) {
  static const long long V[] = {0, 1, -1, 9, 10, 12345, -98765, 999999999999999LL,
                                -999999999999999LL, 1000000000000000LL, -1000000000000000LL,
                                9007199254740993LL, LLONG_MAX, LLONG_MIN};
  for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
    sim_jw a, b;
    sim__jw_init(&a, 1024);
    sim__jw_init(&b, 1024);
    SIM__JW_NEXT_INT(&a, "n", V[i]);
    SIM__JW_NEXT_NUM(&b, "n", (double)V[i]);
    char *x = sim__jw_take(&a), *y = sim__jw_take(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    if (strcmp(x, y) != 0) fprintf(stderr, "\n  %lld: '%s' against '%s'\n", V[i], x, y);
    CU_ASSERT_STRING_EQUAL(x, y);
    free(x);
    free(y);
  }
}

/* Integers within next_int's fast path are the digits printf writes, for
   every digit count and both signs (it writes two digits at a time). */
static void test_next_int_digits(void) {
  unsigned long long x = 0x9e3779b97f4a7c15ull, p10 = 1;
  for (int k = 0; k <= 15; k++, p10 *= 10) {
    long long v[4] = {(long long)p10 - 1, (long long)p10, (long long)p10 + 7, 0};
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v[3] = (long long)((x >> 11) % (p10 * 10 > 999999999999999ULL ? 999999999999999ULL : p10 * 10));
    for (int i = 0; i < 8; i++) {
      long long n = i < 4 ? v[i] : -v[i - 4];
      if (n >= 1000000000000000LL || n <= -1000000000000000LL) continue;
      sim_jw a;
      sim__jw_init(&a, 64);
      SIM__JW_NEXT_INT(&a, "n", n);
      char *got = sim__jw_take(&a), want[48];
      CU_ASSERT_PTR_NOT_NULL_FATAL(got);
      snprintf(want, sizeof want, ",\"n\":%lld", n);
      if (strcmp(got, want) != 0) fprintf(stderr, "\n  '%s' against '%s'\n", got, want);
      CU_ASSERT_STRING_EQUAL(got, want);
      free(got);
    }
  }
}

/* Times written by sim__jw_next_us read as sim__jw_next_num writes them. */
static void test_next_us(void) {
  static const long long V[] = {0, 1, 10, 100, 999, 1000, 1001, 1010, 1100, 232990, 277575,
                                -1, -1500, 123456789012LL, 999999999999999LL,
                                1000000000000000LL, -1000000000000000LL};
  for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
    sim_jw a, b;
    sim__jw_init(&a, 1024);
    sim__jw_init(&b, 1024);
    sim__jw_next_us(&a, ",\"t\":", 5, V[i]);
    SIM__JW_NEXT_NUM(&b, "t", (double)V[i] / 1000.0);
    char *x = sim__jw_take(&a), *y = sim__jw_take(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    if (strcmp(x, y) != 0) fprintf(stderr, "\n  %lld us: '%s' against '%s'\n", V[i], x, y);
    CU_ASSERT_STRING_EQUAL(x, y);
    free(x);
    free(y);
  }
  /* and 20,000 spread over a day's to ten years' microseconds */
  unsigned long long r = 88172645463325252ULL;
  int differ = 0;
  for (int i = 0; i < 20000; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    long long us = (long long)(r % (i % 2 ? 86400000000ULL : 315360000000000ULL));
    sim_jw a, b;
    sim__jw_init(&a, 1024);
    sim__jw_init(&b, 1024);
    sim__jw_next_us(&a, ",\"t\":", 5, us);
    SIM__JW_NEXT_NUM(&b, "t", (double)us / 1000.0);
    char *x = sim__jw_take(&a), *y = sim__jw_take(&b);
    differ += x == NULL || y == NULL || strcmp(x, y) != 0;
    free(x);
    free(y);
  }
  CU_ASSERT_EQUAL(differ, 0);
}

static void test_trace_fields_line(void) {
  char path[] = "/tmp/fbx-jw-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  sim_trace *file = NULL, *tap = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__trace_open(path, NULL, &file, err), 0);
  CU_ASSERT_EQUAL_FATAL(sim__trace_tap_new(file, "s1", 1 << 16, &tap), 0);
  sim_jw *w = sim__trace_begin(tap, "end", 1.5);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  sim__jw_knum(w, "id", 7);
  sim__jw_kstr(w, "how", "complete");
  sim__trace_commit(tap, w);
  char *lines = NULL;
  size_t len = 0;
  int full = 0;
  CU_ASSERT_EQUAL(sim__trace_tap_copy(tap, &lines, &len, &full), 0);
  CU_ASSERT_STRING_EQUAL(lines, "{\"ev\":\"end\",\"t\":1.5,\"id\":7,\"how\":\"complete\",\"session\":\"s1\"}\n");
  free(lines);
  sim__trace_close(tap);
  CU_ASSERT_EQUAL(sim__trace_finish(file, err), 0);
  /* No trace: nothing is begun. */
  CU_ASSERT_PTR_NULL(sim__trace_begin(NULL, "end", 0));
  FILE *f = fopen(path, "r");
  char buf[256] = "";
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_PTR_NOT_NULL(fgets(buf, sizeof buf, f));
  fclose(f);
  CU_ASSERT_STRING_EQUAL(buf, "{\"ev\":\"end\",\"t\":1.5,\"id\":7,\"how\":\"complete\",\"session\":\"s1\"}\n");
  unlink(path);
}

int suite_json_write(void) {
  CU_pSuite s = CU_add_suite("json_write", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "fields and trees print what cJSON prints", test_fields_match_cjson);
  CU_add_test(s, "a writer is bounded", test_bounded);
  CU_add_test(s, "invalid UTF-8 becomes U+FFFD", test_invalid_utf8);
  CU_add_test(s, "an escape at every place of a string", test_escape_every_place);
  CU_add_test(s, "chat.completion body: cJSON's bytes", test_chat_body_bytes);
  CU_add_test(s, "a trace line field by field", test_trace_fields_line);
  CU_add_test(s, "integers as numbers print", test_next_int);
  CU_add_test(s, "integers as printf writes them", test_next_int_digits);
  CU_add_test(s, "times as numbers print", test_next_us);
  return CU_get_error();
}
