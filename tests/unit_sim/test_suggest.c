/* test_suggest.c - the one did-you-mean rule (common/suggest.c) that steps,
   scenario keys, profiles (sim), client keys (cli) and expectations
   (reports) share: each mistyped name beside what it must suggest, or NULL
   where a suggestion would mislead. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "common/suggest.h"

static const char *const STEPS[] = {"chat", "stream", "fail", "hang", "delay", "drop",
                                    "reset", "truncate", "garbage", "effect", NULL};
static const char *const EXPECT[] = {"attempts", "max_requests", "retry_after_honoured",
                                     "no_retry_after", "within_deadline", "outcome", NULL};

static const struct {
  const char *typed;
  const char *const *known;
  const char *want; /* NULL: no suggestion */
} CASES[] = {
    {"fial", STEPS, "fail"},                 /* a swap is one edit */
    {"chta", STEPS, "chat"},
    {"stream", STEPS, NULL},                 /* exact: nothing to suggest */
    {"streem", STEPS, "stream"},
    {"fxyz", STEPS, NULL},                   /* short names: one edit at most */
    {"require", STEPS, NULL},
    {"retry_after_honored", EXPECT, "retry_after_honoured"}, /* the US spelling */
    {"atempts", EXPECT, "attempts"},
    {"max_request", EXPECT, "max_requests"},
    {"within_dedline", EXPECT, "within_deadline"},
    {"deadline", EXPECT, NULL},              /* far from every name */
    {"", EXPECT, NULL},
};

static void test_cases(void) {
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    const char *got = fb_suggest(CASES[i].typed, CASES[i].known, NULL);
    int same = (got == NULL && CASES[i].want == NULL) ||
               (got != NULL && CASES[i].want != NULL && strcmp(got, CASES[i].want) == 0);
    CU_ASSERT(same);
    if (!same)
      fprintf(stderr, "\n  '%s': got %s, want %s\n", CASES[i].typed, got ? got : "NULL",
              CASES[i].want ? CASES[i].want : "NULL");
  }
}

static void test_distance(void) {
  CU_ASSERT_EQUAL(fb_distance("fial", "fail"), 1);
  CU_ASSERT_EQUAL(fb_distance("", "abc"), 3);
  CU_ASSERT_EQUAL(fb_distance("kitten", "sitting"), 3);
  char longer[FB_SUGGEST_MAX + 2];
  memset(longer, 'a', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  CU_ASSERT_EQUAL(fb_distance(longer, "a"), FB_SUGGEST_MAX + 1);
  int d = -2;
  CU_ASSERT_PTR_NULL(fb_suggest(longer, STEPS, &d));
  CU_ASSERT_EQUAL(d, -1);
  CU_ASSERT_STRING_EQUAL(fb_suggest("dorp", STEPS, &d), "drop");
  CU_ASSERT_EQUAL(d, 1);
}

int suite_suggest(void) {
  CU_pSuite s = CU_add_suite("suggest", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "typed name -> suggestion, side by side", test_cases);
  CU_add_test(s, "distance and bounds", test_distance);
  return CU_get_error();
}
