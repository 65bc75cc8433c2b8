/* test_keying.c - logical request keys, fingerprints, secret headers. */
#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"

static void test_idempotency_key_wins(void) {
  char k[64];
  CU_ASSERT_EQUAL(sim_request_key("op-1", "POST", "/v1/x", "a", 1, k, sizeof k), 0);
  CU_ASSERT_STRING_EQUAL(k, "idem:op-1");
}

static void test_hash_of_method_path_body(void) {
  char a[64], b[64], c[64], d[64], e[64];
  sim_request_key(NULL, "POST", "/v1/chat/completions", "{\"a\":1}", 7, a, sizeof a);
  sim_request_key("", "POST", "/v1/chat/completions", "{\"a\":1}", 7, b, sizeof b);
  sim_request_key(NULL, "POST", "/v1/chat/completions", "{\"a\":2}", 7, c, sizeof c);
  sim_request_key(NULL, "POST", "/v1/messages", "{\"a\":1}", 7, d, sizeof d);
  sim_request_key(NULL, "GET", "/v1/chat/completions", "{\"a\":1}", 7, e, sizeof e);
  CU_ASSERT_EQUAL(strncmp(a, "hash:", 5), 0);
  CU_ASSERT_EQUAL(strlen(a), 5 + 16);
  CU_ASSERT_STRING_EQUAL(a, b); /* an empty key is no key */
  CU_ASSERT_STRING_NOT_EQUAL(a, c);
  CU_ASSERT_STRING_NOT_EQUAL(a, d);
  CU_ASSERT_STRING_NOT_EQUAL(a, e);
}

static void test_key_too_long(void) {
  char k[8];
  CU_ASSERT_NOT_EQUAL(sim_request_key("a-very-long-key", "POST", "/", NULL, 0, k, sizeof k), 0);
  /* A hash key too long for the buffer: refused, yet cut and terminated as
     snprintf would (fuzz_request holds every size to that). */
  char full[32], small[22];
  CU_ASSERT_EQUAL(sim_request_key(NULL, "POST", "/", "{}", 2, full, sizeof full), 0);
  CU_ASSERT_EQUAL(strlen(full), 21);
  for (size_t cap = 1; cap <= sizeof small; cap++) {
    memset(small, 'x', sizeof small);
    int rc = sim_request_key(NULL, "POST", "/", "{}", 2, small, cap);
    CU_ASSERT_EQUAL(rc != 0, cap < 22);
    CU_ASSERT_EQUAL(strlen(small), cap - 1 < 21 ? cap - 1 : 21);
    CU_ASSERT_EQUAL(strncmp(small, full, cap - 1), 0);
  }
}

static void test_fingerprint(void) {
  char a[17], b[17];
  sim__fingerprint("abc", 3, a);
  sim__fingerprint("abd", 3, b);
  CU_ASSERT_EQUAL(strlen(a), 16);
  CU_ASSERT_STRING_NOT_EQUAL(a, b);
}

/* The hash (eight bytes a turn) gives the byte-at-a-time value at every
   length around its turns: keys in old traces and in a fleet's Redis stay
   the same. */
static void test_fingerprint_values(void) {
  static const char text[] = "The quick brown fox jumps over the lazy dog";
  char got[17], want[17];
  for (size_t len = 0; len < sizeof text; len++) {
    uint64_t h = 1469598103934665603ULL; /* keying.c's offset */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)text[i]) * 1099511628211ULL;
    snprintf(want, sizeof want, "%016llx", (unsigned long long)h);
    sim__fingerprint(text, len, got);
    CU_ASSERT_STRING_EQUAL(got, want);
  }
  sim__fingerprint(text, sizeof text - 1, got);
  CU_ASSERT_STRING_EQUAL(got, "9703756516a0615e");
  sim__fingerprint("", 0, got);
  CU_ASSERT_STRING_EQUAL(got, "14650fb0739d0383");
}

static void test_secret_headers(void) {
  CU_ASSERT_TRUE(sim__header_is_secret("Authorization"));
  CU_ASSERT_TRUE(sim__header_is_secret("x-api-key"));
  CU_ASSERT_TRUE(sim__header_is_secret("API-KEY"));
  CU_ASSERT_FALSE(sim__header_is_secret("idempotency-key"));
  CU_ASSERT_FALSE(sim__header_is_secret("user-agent"));
}

/* sim__put_hex writes what printf's %0*llx writes (it replaces it on the
   hot path: request ids and keys). */
static void test_put_hex_is_printf(void) {
  uint64_t v = 0x9e3779b97f4a7c15ull;
  static const uint64_t edges[] = {0, 1, 15, 16, 0xffffffffull, 0x100000000ull, UINT64_MAX};
  char got[32], want[32];
  for (int i = 0; i < 20000; i++) {
    uint64_t x = i < 7 ? edges[i] : (v = v * 6364136223846793005ull + 1442695040888963407ull) >> (i % 64);
    for (int min = 0; min <= 20; min++) { /* odd and even widths, past 16 */
      *sim__put_hex(got, x, min) = '\0';
      snprintf(want, sizeof want, "%0*llx", min, (unsigned long long)x);
      CU_ASSERT_STRING_EQUAL(got, want);
    }
  }
}

static void test_keymap_counts(void) {
  sim_keymap *m = sim__keymap_new();
  CU_ASSERT_EQUAL(sim__keymap_bump(m, "a"), 1);
  CU_ASSERT_EQUAL(sim__keymap_bump(m, "b"), 1);
  CU_ASSERT_EQUAL(sim__keymap_bump(m, "a"), 2);
  CU_ASSERT_EQUAL(sim__keymap_bump(m, "a"), 3);
  sim__keymap_free(m);
  sim__keymap_free(NULL);
}

int suite_keying(void) {
  CU_pSuite s = CU_add_suite("keying", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "Idempotency-Key names the request", test_idempotency_key_wins);
  CU_add_test(s, "hash of method, path and body", test_hash_of_method_path_body);
  CU_add_test(s, "key too long for the buffer", test_key_too_long);
  CU_add_test(s, "payload fingerprint", test_fingerprint);
  CU_add_test(s, "fingerprint values at every length", test_fingerprint_values);
  CU_add_test(s, "secret headers", test_secret_headers);
  CU_add_test(s, "attempt counts per key", test_keymap_counts);
  CU_add_test(s, "hex digits as printf writes them", test_put_hex_is_printf);
  return CU_get_error();
}
