/* test_body_scan.c - sim/body_scan.c: the top-level fields of the bodies
   it reads itself, and the bodies it must leave to cJSON (each of which
   cJSON reads differently from a naive scanner, or needs its tree). */
#include <CUnit/CUnit.h>
#include <string.h>

#include "sim/server_int.h"

static int scan(const char *body, sim_body_fields *f) {
  return sim__body_scan(body, strlen(body), f);
}

static void test_read(void) {
  sim_body_fields f;
  CU_ASSERT_EQUAL(scan("{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":"
                       "\"hi\\n\\u00e9\"}],\"max_tokens\":16}", &f), 1);
  CU_ASSERT_EQUAL(f.model_len, 11);
  CU_ASSERT_NSTRING_EQUAL(f.model, "gpt-4o-mini", 11);
  CU_ASSERT_FALSE(f.has_stream);
  CU_ASSERT_EQUAL(f.input_n, -1);

  CU_ASSERT_EQUAL(scan(" {\r\n\"stream\" : true , \"model\":\"a\",\"model\":\"b\"}\n", &f), 1);
  CU_ASSERT_TRUE(f.has_stream && f.stream);
  CU_ASSERT_NSTRING_EQUAL(f.model, "a", 1); /* the first, as cJSON's lookup */

  CU_ASSERT_EQUAL(scan("{\"stream\":\"true\",\"model\":7}", &f), 1);
  CU_ASSERT_TRUE(f.has_stream && !f.stream); /* only true is true */
  CU_ASSERT_TRUE(f.has_model && f.model == NULL);

  CU_ASSERT_EQUAL(scan("{\"input\":[\"a\",[1,[2]],{\"x\":{}},-0.5e+3,null]}", &f), 1);
  CU_ASSERT_EQUAL(f.input_n, 5);
  CU_ASSERT_EQUAL(scan("{\"input\":[]}", &f), 1);
  CU_ASSERT_EQUAL(f.input_n, 0);
  CU_ASSERT_EQUAL(scan("{\"input\":\"one\"}", &f), 1);
  CU_ASSERT_EQUAL(f.input_n, -1);
  CU_ASSERT_EQUAL(scan("{}", &f), 1);
  CU_ASSERT_FALSE(f.has_model || f.has_stream || f.has_input);
}

/* Each of these is left to cJSON (0): what it would make of it differs, or
   is not ours to guess. */
static void test_left_to_cjson(void) {
  static const char *const LEFT[] = {
      "",                                     /* empty */
      "[1]",                                  /* not an object */
      "\xef\xbb\xbf{}",                       /* a BOM: cJSON skips it */
      "{\"model\":\"a\"} x",                  /* trailing bytes: cJSON ignores them */
      "{\"model\":\"a\"",                     /* cut */
      "{\"model\":\"a\",}",                   /* a trailing comma */
      "{\"mod\\u0065l\":\"x\"}",              /* an escaped key: it is "model" */
      "{\"model\":\"a\\\"b\"}",               /* an escaped model: needs unescaping */
      "{\"x\":\"\\ud83d\\ude00\"}",           /* a surrogate pair */
      "{\"x\":\"\\q\"}",                      /* a bad escape */
      "{\"x\":\"a\tb\"}",                     /* a raw control byte */
      "{\"x\":01}",                           /* a leading zero */
      "{\"x\":1.}",                           /* a bare point */
      "{\"x\":1e}",
      "{\"x\":+1}",
      "{\"x\":1+2}",                          /* cJSON's number run would take the + */
      "{\"x\":tru}",
      "{\"x\":\f1}",                          /* whitespace cJSON takes, JSON does not */
      "{\"tools\":[{\"name\":\"f\"}]}",       /* the caller reads the tools' tree */
      "{\"x\":1}\0",
  };
  sim_body_fields f;
  for (size_t i = 0; i < sizeof LEFT / sizeof LEFT[0]; i++) {
    size_t n = strlen(LEFT[i]) + (i == sizeof LEFT / sizeof LEFT[0] - 1);
    CU_ASSERT_EQUAL(sim__body_scan(LEFT[i], n, &f), 0);
    if (sim__body_scan(LEFT[i], n, &f) != 0) fprintf(stderr, "read: %s\n", LEFT[i]);
  }
  /* nesting past the scanner's 64 levels */
  char deep[200];
  memset(deep, '[', 100);
  memset(deep + 100, ']', 100);
  char body[260];
  snprintf(body, sizeof body, "{\"x\":%.*s}", 200, deep);
  CU_ASSERT_EQUAL(scan(body, &f), 0);
  snprintf(body, sizeof body, "{\"x\":%.*s%.*s}", 60, deep, 60, deep + 100);
  CU_ASSERT_EQUAL(scan(body, &f), 1);
}

/* A body cut at every byte is never read (each prefix is unfinished). */
static void test_every_prefix(void) {
  const char *b = "{\"model\":\"m\",\"input\":[1,{\"a\":[true]}],\"stream\":false}";
  sim_body_fields f;
  for (size_t n = 0; n < strlen(b); n++) CU_ASSERT_EQUAL(sim__body_scan(b, n, &f), 0);
  CU_ASSERT_EQUAL(sim__body_scan(b, strlen(b), &f), 1);
  CU_ASSERT_EQUAL(f.input_n, 2);
}

int suite_body_scan(void) {
  CU_pSuite s = CU_add_suite("body_scan", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "the fields of bodies it reads", test_read);
  CU_add_test(s, "bodies left to cJSON", test_left_to_cjson);
  CU_add_test(s, "a body cut at every byte", test_every_prefix);
  return CU_get_error();
}
