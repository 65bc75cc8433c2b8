/* test_srcmap.c - finding the line of a key in a scenario file's text:
   nested tables, lists, ["string"] keys, names bound to tables, and text
   that only looks like tables (strings, comments, function bodies). */
#include <CUnit/CUnit.h>
#include <string.h>

#include "sim/sim_int.h"

static const char TEXT[] =
    "-- a { comment } that { looks like a table\n"          /* 1 */
    "local defaults = {\n"                                  /* 2 */
    "  deadline = 8,\n"                                     /* 3 */
    "  backoff = { base = 1 },\n"                           /* 4 */
    "}\n"                                                   /* 5 */
    "local s = \"{ name = 'no' }\"\n"                       /* 6 */
    "return scenario {\n"                                   /* 7 */
    "  name = [[ { also = 'not a table' } ]],\n"            /* 8 */
    "  providers = {\n"                                     /* 9 */
    "    { name = \"a\", chat {} },\n"                      /* 10 */
    "    {\n"                                               /* 11 */
    "      name = \"b\",\n"                                 /* 12 */
    "      fn = function(req) local x, y = 1, 2\n"          /* 13 */
    "        if x then return chat { content = 'c' } end\n" /* 14 */
    "        return fail { status = 500 } end,\n"           /* 15 */
    "    },\n"                                              /* 16 */
    "  },\n"                                                /* 17 */
    "  [\"client\"] = defaults,\n"                          /* 18 */
    "  expect = {\n"                                        /* 19 */
    "    attempts = { min = 1,\n"                           /* 20 */
    "                 max = 3 },\n"                         /* 21 */
    "    --[==[ outcome = 'x', ]==] outcome = \"ok\";\n"    /* 22 */
    "  },\n"                                                /* 23 */
    "  tags = { 'a',\n"                                     /* 24 */
    "    'b' },\n"                                          /* 25 */
    "}\n";                                                  /* 26 */

static void test_lines(void) {
  sim_srcmap *m = sim__srcmap_new(TEXT, strlen(TEXT));
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  static const struct {
    const char *path;
    int line;
  } cases[] = {
      {"", 7},                       /* the table itself */
      {"name", 8},
      {"providers", 9},
      {"providers[1]", 10},
      {"providers[1].name", 10},
      {"providers[2]", 11},
      {"providers[2].name", 12},
      {"providers[2].fn", 13},
      {"providers[2].x", 11},        /* not written: the enclosing entry */
      {"providers[2].y", 11},        /* a local in a function is no field */
      {"client", 18},                /* a ["string"] key */
      {"client.deadline", 3},        /* through `defaults` */
      {"client.backoff.base", 4},
      {"client.nope", 18},           /* not in the named table either */
      {"expect.attempts", 20},
      {"expect.attempts.max", 21},
      {"expect.outcome", 22},        /* not the commented-out one */
      {"expect.herd.window", 19},    /* nearest enclosing key written out */
      {"tags[2]", 25},
      {"tags[3]", 24},
      {"also", 7},                   /* inside a long string: no key */
      {"ratelimit.rpm", 7},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int got = sim__srcmap_line(m, 7, cases[i].path);
    if (got != cases[i].line) {
      fprintf(stderr, "\n  %s: line %d, wanted %d\n", cases[i].path, got, cases[i].line);
      CU_FAIL("line");
    }
  }
  CU_ASSERT_EQUAL(sim__srcmap_line(m, 6, "name"), 0); /* no scenario{} call on 6 */
  CU_ASSERT_EQUAL(sim__srcmap_line(NULL, 7, "name"), 0);
  sim__srcmap_free(m);
  sim__srcmap_free(NULL);
}

/* Text cut anywhere, or odd, never crashes and never names a line that is
   not in the text. */
static void test_every_prefix(void) {
  size_t n = strlen(TEXT);
  for (size_t len = 0; len <= n; len++) {
    sim_srcmap *m = sim__srcmap_new(TEXT, len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    int line = sim__srcmap_line(m, 7, "expect.attempts.max");
    CU_ASSERT(line == 0 || (line >= 7 && line <= 21));
    sim__srcmap_free(m);
  }
  const char *odd[] = {"}}}}))]]end end", "return scenario(((({", "\"unterminated",
                       "[==[ never closed", "scenario { [1] = { [\"x\"] = 1 } }"};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
    sim_srcmap *m = sim__srcmap_new(odd[i], strlen(odd[i]));
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT(sim__srcmap_line(m, 1, "x.y[2]") <= 1);
    sim__srcmap_free(m);
  }
}

static void test_msg_path(void) {
  char p[64];
  CU_ASSERT_EQUAL(sim__msg_path("client.backoff.bsae: unknown key", p, sizeof p), 1);
  CU_ASSERT_STRING_EQUAL(p, "client.backoff.bsae");
  CU_ASSERT_EQUAL(sim__msg_path("client.chain[2]: no provider", p, sizeof p), 1);
  CU_ASSERT_STRING_EQUAL(p, "client.chain[2]");
  CU_ASSERT_EQUAL(sim__msg_path("ratelimit needs rpm or tpm", p, sizeof p), 1);
  CU_ASSERT_STRING_EQUAL(p, "ratelimit");
  CU_ASSERT_EQUAL(sim__msg_path(": nothing", p, sizeof p), 0);
  CU_ASSERT_STRING_EQUAL(p, "");
  CU_ASSERT_EQUAL(sim__msg_path("'quoted': no", p, sizeof p), 0);
  CU_ASSERT_EQUAL(sim__msg_path("a.very.long.path.that.does.not.fit: x", p, 8), 0);
}

int suite_srcmap(void) {
  CU_pSuite s = CU_add_suite("srcmap", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "the line of each key", test_lines);
  CU_add_test(s, "cut and odd text", test_every_prefix);
  CU_add_test(s, "the path a message starts with", test_msg_path);
  return CU_get_error();
}
