/* test_step.c - sim_step defaults, release and names (sim/step.c). */
#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

static void test_defaults(void) {
  for (int k = SIM_STEP_CHAT; k <= SIM_STEP_EFFECT; k++) {
    sim_step *s = sim__step_new((sim_step_kind)k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->kind, k);
    CU_ASSERT_PTR_NULL(s->content);
    CU_ASSERT_PTR_NULL(s->model);
    CU_ASSERT_EQUAL(s->usage_in, -1);
    CU_ASSERT_EQUAL(s->usage_out, -1);
    CU_ASSERT_PTR_NULL(s->chunks);
    CU_ASSERT_EQUAL(s->nchunks, 0);
    CU_ASSERT_DOUBLE_EQUAL(s->interval, 0, 1e-12);
    CU_ASSERT_EQUAL(s->drop_after, -1);
    CU_ASSERT_EQUAL(s->stall_after, -1);
    CU_ASSERT(s->stall < 0);
    CU_ASSERT_EQUAL(s->error_after, -1);
    CU_ASSERT_EQUAL(s->no_end, 0);
    CU_ASSERT_EQUAL(s->status, 0);
    CU_ASSERT_EQUAL(s->has_retry_after, 0);
    CU_ASSERT_EQUAL(s->has_retry_after_ms, 0);
    CU_ASSERT_EQUAL(s->has_retry_after_date, 0);
    CU_ASSERT_PTR_NULL(s->headers);
    CU_ASSERT_EQUAL(s->nheaders, 0);
    CU_ASSERT_PTR_NULL(s->next);
    CU_ASSERT_EQUAL(s->at, 0);
    CU_ASSERT_EQUAL(s->early_close, 0);
    CU_ASSERT_PTR_NULL(s->body);
    CU_ASSERT_EQUAL(s->apply, 1);
    sim__step_free(s);
  }
}

/* A fully populated chain is released without leaks (checked under ASan). */
static void test_free_chain(void) {
  sim__step_free(NULL);
  sim_step *d = sim__step_new(SIM_STEP_DELAY);
  sim_step *t = sim__step_new(SIM_STEP_TRUNCATE);
  sim_step *c = sim__step_new(SIM_STEP_CHAT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  d->next = t;
  t->next = c;
  c->content = strdup("hello");
  c->model = strdup("m");
  c->chunks = calloc(2, sizeof *c->chunks);
  c->chunks[0] = strdup("a");
  c->chunks[1] = strdup("b");
  c->nchunks = 2;
  c->code = strdup("x");
  c->type = strdup("y");
  c->message = strdup("z");
  c->retry_after_raw = strdup("soon");
  c->headers = calloc(1, sizeof *c->headers);
  c->headers[0].name = strdup("x-a");
  c->headers[0].value = strdup("1");
  c->nheaders = 1;
  c->body = strdup("<html>");
  sim__step_free(d);
}

static void test_names(void) {
  static const char *const names[] = {"chat", "stream",   "fail",    "hang",
                                      "delay", "drop",    "reset",   "truncate",
                                      "garbage", "effect"};
  for (int k = 0; k < 10; k++)
    CU_ASSERT_STRING_EQUAL(sim__step_kind_name((sim_step_kind)k), names[k]);
  CU_ASSERT_STRING_EQUAL(sim__step_kind_name((sim_step_kind)99), "?");
  CU_ASSERT_STRING_EQUAL(sim__step_kind_name((sim_step_kind)-1), "?");
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_OPENAI), "openai-chat");
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_RESPONSES), "openai-responses");
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_GEMINI), "gemini");
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_ANTHROPIC), "anthropic");
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_EFFECT), "effect");
  }

/* issue 11: a stream's text frames are made a little at a time; the JSON
   text written must be byte for byte what cJSON writes for the whole
   string, for every byte value, however small the room given each time. */
static void test_json_escape_matches_cjson(void) {
  char text[512];
  size_t n = 0;
  for (int rep = 0; rep < 2; rep++)
    for (int b = 1; b < 256; b++) text[n++] = (char)b;
  text[n] = '\0';
  cJSON *str = cJSON_CreateString(text);
  char *want = cJSON_PrintUnformatted(str);
  CU_ASSERT_PTR_NOT_NULL_FATAL(want);
  size_t wlen = strlen(want) - 2; /* without the quotes */
  for (size_t room = 6; room <= 64; room += 29) {
    char got[4096];
    size_t off = 0, len = 0;
    while (off < n && len + room < sizeof got) {
      size_t w = sim__json_escape_some(text, n, &off, got + len, room);
      CU_ASSERT(w > 0 && w <= room);
      if (w == 0) break;
      len += w;
    }
    CU_ASSERT_EQUAL(len, wlen);
    CU_ASSERT(len == wlen && memcmp(got, want + 1, wlen) == 0);
  }
  cJSON_free(want);
  cJSON_Delete(str);
  /* Pieces are the words sim__split_words makes, cut in place. */
  const char *t = "  Hello big  world ";
  size_t pos = 0, k;
  const char *piece;
  const char *const expect[] = {"  Hello", " big", "  world", " "};
  int i = 0;
  while (sim__next_piece(t, strlen(t), &pos, &piece, &k)) {
    CU_ASSERT(i < 4 && k == strlen(expect[i]) && memcmp(piece, expect[i], k) == 0);
    i++;
  }
  CU_ASSERT_EQUAL(i, 4);
}

int suite_step(void) {
  CU_pSuite s = CU_add_suite("step", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "defaults", test_defaults) ||
      !CU_add_test(s, "free_chain", test_free_chain) ||
      !CU_add_test(s, "names", test_names) ||
      !CU_add_test(s, "json_escape_matches_cjson", test_json_escape_matches_cjson))
    return CU_get_error();
  return 0;
}
