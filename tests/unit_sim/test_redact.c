/* test_redact.c - the one redaction rule (sim/redact.c) and the terminal
   sanitiser (sim/term_safe.c); the recorder's use of it is in
   tests/unit_import/test_record.c. Data-driven: input and expected output
   side by side. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim_int.h"
#include "term_rule_cases.h"

static const struct {
  const char *name;
  int secret;
} NAMES[] = {
    {"Authorization", 1},          {"authorization ", 1},       {"Proxy-Authorization", 1},
    {"x-api-key", 1},              {"API-KEY", 1},              {"x-goog-api-key", 1},
    {"openai-api-key", 1},         {"anthropic-api-key", 1},    {"ocp-apim-subscription-key", 1},
    {"x-auth-token", 1},           {"Cookie", 1},               {"set-cookie", 1},
    {"x-amz-security-token", 1},   {"x-signature", 1},          {"x-client-secret", 1},
    {"password", 1},               {"key", 1},                  {"access_token", 1},
    {"idempotency-key", 0},        {"Idempotency-Key", 0},      {"user-agent", 0},
    {"x-ratelimit-remaining-tokens", 0}, {"anthropic-ratelimit-input-tokens-limit", 0},
    {"max_tokens", 0},             {"author", 0},               {"www-authenticate", 0},
    {"content-type", 0},           {"retry-after", 0},          {"", 0},
};

static void test_names(void) {
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
    if (sim_redact_name(NAMES[i].name) != NAMES[i].secret)
      fprintf(stderr, "\n  name '%s': expected %d\n", NAMES[i].name, NAMES[i].secret);
    CU_ASSERT_EQUAL(sim_redact_name(NAMES[i].name), NAMES[i].secret);
    CU_ASSERT_EQUAL(sim__header_is_secret(NAMES[i].name), NAMES[i].secret);
  }
}

static const struct {
  const char *in, *out;
} TEXTS[] = {
    {"hello world", "hello world"},
    {"key sk-abcdefgh1234 end", "key sk-[redacted] end"},
    {"sk-proj-AbCdEf_123456789", "sk-[redacted]"},
    {"sk-ant-api03-xyzXYZ123456-", "sk-[redacted]"},
    {"risk-abcdefghijk", "risk-abcdefghijk"}, /* not at a word start */
    {"sk-short", "sk-short"},
    /* account ids in text (issue 25): an error message quoting the organisation */
    {"invalid organization org-abc123 for key", "invalid organization org-[redacted] for key"},
    {"org-AbC_12-xyz", "org-[redacted]"},
    {"project proj_Zx9y8w7v.", "project proj_[redacted]."},
    {"org-abc", "org-abc"},             /* too short to be an id */
    {"my-org-abcdef", "my-org-abcdef"}, /* not at a word start */
    {"sub_proj_abcdef12", "sub_proj_abcdef12"},
    {"\"org-abcdef12\"", "\"org-[redacted]\""},
    {"AIzaSyA1234567890abcdefghijklmnopqrs", "AIza[redacted]"},
    {"api 0123456789abcdef0123456789ABCDEF!", "api [redacted]!"},
    {"id 0123456789abcdef0123456789abcdef0", "id 0123456789abcdef0123456789abcdef0"},
    {"Bearer abc.def-ghi_jkl", "Bearer [redacted]"},
    {"bearer   tok12345678", "bearer   [redacted]"},
    {"Basic dXNlcjpwYXNzd29yZA==", "Basic [redacted]"},
    {"Authorization: anything at all\nnext", "Authorization: [redacted]\nnext"},
    {"Authorization : Bearer tok12345678", "Authorization : [redacted]"},
    {"> x-api-key: plainvalue", "> x-api-key: [redacted]"},
    {"/v1/models?key=AIzaNOTLONG&alt=json", "/v1/models?key=[redacted]&alt=json"},
    {"/v1/x?access_token=abc&api_key=def", "/v1/x?access_token=[redacted]&api_key=[redacted]"},
    {"{\"api_key\":\"s3cr3t\",\"n\":1}", "{\"api_key\":\"[redacted]\",\"n\":1}"},
    {"{\"api_key\": 12345}", "{\"api_key\": 12345}"}, /* JSON stays JSON */
    {"{\"max_tokens\":100,\"idempotency_key\":\"op-1\"}",
     "{\"max_tokens\":100,\"idempotency_key\":\"op-1\"}"},
    {"Incorrect API key provided: sk-abc12345678.", "Incorrect API key provided: sk-[redacted]."},
    /* Secrets, not words (issue 22, item 7): client errors stay readable. */
    {"KeyError: 'choices'", "KeyError: 'choices'"},
    {"Traceback (most recent call last):\nKeyError: 'choices'",
     "Traceback (most recent call last):\nKeyError: 'choices'"},
    {"http://127.0.0.1:40123/v1/chat/completions", "http://127.0.0.1:40123/v1/chat/completions"},
    {"APIConnectionError: connect ECONNREFUSED http://127.0.0.1:40123/v1/chat/completions",
     "APIConnectionError: connect ECONNREFUSED http://127.0.0.1:40123/v1/chat/completions"},
    {"401 Incorrect API key provided: sk-proj-AbCdEfGhIjKlMnOpQrSt. You can find your API key "
     "at https://platform.openai.com/account/api-keys.",
     "401 Incorrect API key provided: sk-[redacted]. You can find your API key at "
     "https://platform.openai.com/account/api-keys."},
    {"401 Incorrect API key provided: sk-...abcd", "401 Incorrect API key provided: sk-...abcd"},
    {"AuthenticationError: 401 Incorrect API key provided: sk-proj-AbCdEfGhIjKlMnOpQrSt",
     "AuthenticationError: 401 Incorrect API key provided: sk-[redacted]"},
    {"openai.AuthenticationError: Error code: 401 - {'error': {'code': 'invalid_api_key'}}",
     "openai.AuthenticationError: Error code: 401 - {'error': {'code': 'invalid_api_key'}}"},
    {"Authorization: Bearer sk-proj-AbCdEfGhIjKlMnOpQrSt", "Authorization: [redacted]"},
    {"Authorization: Bearer sk-...abcd", "Authorization: [redacted]"},
    {"https://x/v1beta/models/m:generateContent?key=AIzaSyA1234567890abcdefghijk",
     "https://x/v1beta/models/m:generateContent?key=[redacted]"},
    /* A header line runs to its end; inside a line the value is one word, or
       an auth scheme and its token. */
    {"> Authorization: Basic abc def\nnext", "> Authorization: [redacted]\nnext"},
    {"sent Authorization: Bearer short1 to it", "sent Authorization: [redacted] to it"},
    {"sent x-api-key: plainvalue to it", "sent x-api-key: [redacted] to it"},
    {"bad x-goog-api-key: k1 and api-key: k2", "bad x-goog-api-key: [redacted] and api-key: [redacted]"},
    {"X-Key-Error: value", "X-Key-Error: [redacted]"}, /* a header name, not a class */
    {"TokenExpiredError: jwt expired", "TokenExpiredError: jwt expired"},
    /* Short texts with a ':' or '=': a secret name's word in any case, and
       the value goes; none, and the text is left whole unscanned (issue 30) */
    {"tOkEn=abc", "tOkEn=[redacted]"},
    {"SESSION:abc", "SESSION:[redacted]"},
    {"x=1;Passwd=p", "x=1;Passwd=[redacted]"},
    {"127.0.0.1:40123", "127.0.0.1:40123"},
    {"a=b;c=d", "a=b;c=d"},
    {"", ""},
};

static void test_texts(void) {
  for (size_t i = 0; i < sizeof TEXTS / sizeof TEXTS[0]; i++) {
    char *o = sim_redact_text(TEXTS[i].in, strlen(TEXTS[i].in));
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    if (strcmp(o, TEXTS[i].out) != 0)
      fprintf(stderr, "\n  '%s' -> '%s', expected '%s'\n", TEXTS[i].in, o, TEXTS[i].out);
    CU_ASSERT_STRING_EQUAL(o, TEXTS[i].out);
    char *again = sim_redact_text(o, strlen(o)); /* the rule is stable */
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    CU_ASSERT_STRING_EQUAL(again, o);
    free(again);
    free(o);
  }
}

static void test_headers(void) {
  char *v = sim_redact_header("X-Goog-Api-Key", "AIzaSomething");
  CU_ASSERT_STRING_EQUAL(v, "[redacted]");
  free(v);
  v = sim_redact_header("X-Debug-Token-Echo", "x");
  CU_ASSERT_STRING_EQUAL(v, "[redacted]");
  free(v);
  v = sim_redact_header("X-Debug", "Bearer sk-abcdefghijkl");
  CU_ASSERT_STRING_EQUAL(v, "Bearer [redacted]");
  free(v);
  v = sim_redact_header("retry-after", "2");
  CU_ASSERT_STRING_EQUAL(v, "2");
  free(v);
  v = sim_redact_header("x", NULL);
  CU_ASSERT_STRING_EQUAL(v, "");
  free(v);
}

/* The quick test the server makes before copying a header
   (sim__redact_header_clean) never says "as it is" where the rule would
   change the value: every name against every text above, and the common
   headers it exists for are said clean. */
static void test_header_clean(void) {
  static const char *const LOWER[] = {"authorization", "x-api-key", "cookie", "user-agent",
                                      "content-type", "host", "x-request-id", "idempotency-key",
                                      "x-ratelimit-remaining-tokens", "session-id"};
  for (size_t i = 0; i < sizeof LOWER / sizeof LOWER[0]; i++)
    for (size_t k = 0; k < sizeof TEXTS / sizeof TEXTS[0]; k++) {
      const char *v = TEXTS[k].in;
      if (!sim__redact_header_clean(LOWER[i], v, strlen(v))) continue;
      char *r = sim_redact_header(LOWER[i], v);
      CU_ASSERT_PTR_NOT_NULL_FATAL(r);
      if (strcmp(r, v) != 0) fprintf(stderr, "\n  %s: '%s' said clean, is '%s'\n", LOWER[i], v, r);
      CU_ASSERT_STRING_EQUAL(r, v);
      free(r);
    }
  for (size_t k = 0; k < sizeof TEXTS / sizeof TEXTS[0]; k++) /* the text rule's alike */
    if (sim__redact_text_clean(TEXTS[k].in, strlen(TEXTS[k].in)))
      CU_ASSERT_STRING_EQUAL(TEXTS[k].in, TEXTS[k].out);
  CU_ASSERT_TRUE(sim__redact_text_clean("/v1/chat/completions", 20));
  CU_ASSERT_FALSE(sim__redact_text_clean("/v1/sk-abcdefgh1234/chat", 24));
  CU_ASSERT_TRUE(sim__redact_header_clean("host", "127.0.0.1:40123", 15));
  CU_ASSERT_TRUE(sim__redact_header_clean("user-agent", "curl/7.88.1", 11));
  CU_ASSERT_TRUE(sim__redact_header_clean("x-request-id", "req_fbx3353498000000001", 23));
  CU_ASSERT_FALSE(sim__redact_header_clean("x-api-key", "abc", 3));
  CU_ASSERT_FALSE(sim__redact_header_clean("x-debug", "tOkEn=abc", 9));
  CU_ASSERT_FALSE(sim__redact_header_clean("x-debug", "sk-abcdefgh1234", 15));
  /* a name not lower case or not trimmed is left to the rule itself */
  CU_ASSERT_FALSE(sim__redact_header_clean("User-Agent", "curl", 4));
  CU_ASSERT_FALSE(sim__redact_header_clean("accept ", "*/*", 3));
}

static void test_term_safe(void) {
  char s[] = "name\x1b]0;owned\x07 \x1b[2J\ttab\nline\x7f\x01";
  CU_ASSERT_STRING_EQUAL(sim_term_safe(s), "name?]0;owned? ?[2J\ttab\nline??");
  CU_ASSERT_PTR_NULL(sim_term_safe(NULL));
  /* The rule reports/ applies too (C1, bytes that are not UTF-8). */
  for (int i = 0; i < TERM_RULE_NCASES; i++) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", TERM_RULE_CASES[i].in);
    if (strcmp(sim_term_safe(buf), TERM_RULE_CASES[i].safe) != 0)
      fprintf(stderr, "term rule case %d: got '%s'\n", i, buf);
    CU_ASSERT_STRING_EQUAL(buf, TERM_RULE_CASES[i].safe);
  }
}

int suite_redact(void) {
  CU_pSuite s = CU_add_suite("redact", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "secret names by pattern", test_names);
  CU_add_test(s, "secret values in text", test_texts);
  CU_add_test(s, "header values", test_headers);
  CU_add_test(s, "the quick header test", test_header_clean);
  CU_add_test(s, "terminal controls", test_term_safe);
  return CU_get_error();
}
