/* test_record.c - the recorder's target check and note
   (import/record_note.c), through sim's one redaction rule, and the
   upstream fixed at start (import/record.c). Data-driven: input and
   expected output side by side. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"
#include "import/record_int.h"

static const struct {
  const char *target, *query, *url; /* url NULL: refused */
} TARGETS[] = {
    {"/v1/chat/completions", NULL, "https://api.example/v1/chat/completions"},
    {"/v1/models", "?key=x", "https://api.example/v1/models?key=x"},
    {"//evil.example/x", NULL, "https://api.example//evil.example/x"},
    {"@127.0.0.1:9/v1/chat/completions", NULL, NULL},
    {".evil.example/v1/chat/completions", NULL, NULL},
    {"http://evil.example/v1/chat/completions", NULL, NULL},
    {"*", NULL, NULL},
    {"", NULL, NULL},
    {"/v1\\@evil", NULL, NULL},
    {"/v1 x", NULL, NULL},
    {"/v1\r\nHost: evil", NULL, NULL},
    {"/v1", "?a=b c", NULL},
};

static void test_targets(void) {
  for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0]; i++) {
    char *url = NULL;
    int rc = imp__record_target("https://api.example", TARGETS[i].target, TARGETS[i].query, &url);
    if (TARGETS[i].url == NULL) {
      CU_ASSERT_EQUAL(rc, SIM_EINVAL);
      CU_ASSERT_PTR_NULL(url);
    } else {
      CU_ASSERT_EQUAL_FATAL(rc, SIM_OK);
      CU_ASSERT_STRING_EQUAL(url, TARGETS[i].url);
    }
    free(url);
  }
}

static void test_note(void) {
  char *hn[] = {"X-Debug-Token", "X-Echo", "retry-after", "Set-Cookie", "openai-organization"};
  char *hv[] = {"Bearer sk-abcdefghijkl", "see sk-ant-abcdefghijkl", "2", "s=1", "org-abc123"};
  imp_rec_exchange e = {.method = "POST", .path = "/v1/chat/completions",
                        .query = "?key=AIzaQUERYSECRET", .body = "{}", .body_len = 2,
                        .t_ms = 12.5, .latency_ms = 30, .duration_ms = 40, .status = 429,
                        .headers_done = 1, .hname = hn, .hvalue = hv, .nh = 5,
                        .kept = "{\"error\":{\"message\":\"bad key sk-proj-BODYSECRET1 "
                                "in organization org-abc123\"}}",
                        .received = 10};
  char *line = imp__record_note(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  CU_ASSERT_PTR_NULL(strstr(line, "QUERYSECRET"));
  CU_ASSERT_PTR_NULL(strstr(line, "BODYSECRET"));
  CU_ASSERT_PTR_NULL(strstr(line, "abcdefghijkl"));
  CU_ASSERT_PTR_NULL(strstr(line, "org-abc123")); /* account ids, header and body */
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "organization org-[redacted]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"retry-after\":\"2\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"status\":429"));
  char key[64];
  sim_request_key(NULL, "POST", "/v1/chat/completions", "{}", 2, key, sizeof key);
  CU_ASSERT_PTR_NOT_NULL(strstr(line, key)); /* sim's own key, not a copy */
  free(line);
  /* A status no scenario can play is kept, and noted as a closed connection. */
  e.status = 700;
  line = imp__record_note(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"upstream_status\":700"));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"status\":0"));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"error\":\"closed\""));
  free(line);
  /* An empty Idempotency-Key keys by hash, as the server does. */
  e.idem = "";
  e.status = 200;
  line = imp__record_note(&e);
  CU_ASSERT_PTR_NOT_NULL(strstr(line, key));
  free(line);
}

/* The upstream is fixed at start: http(s) only, no user info, query or
   fragment; a trailing '/' is dropped. */
static void test_upstreams(void) {
  static const struct {
    const char *url, *used; /* used NULL: refused */
  } U[] = {{"https://api.example/", "https://api.example"},
           {"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
           {"https://api.example/prefix//", "https://api.example/prefix"},
           {"ftp://api.example", NULL},
           {"http://user:pw@api.example", NULL},
           {"http://api.example/?key=x", NULL},
           {"http://api.example/#f", NULL},
           {"api.example", NULL}};
  for (size_t i = 0; i < sizeof U / sizeof U[0]; i++) {
    imp_record_opts o = {.upstream = U[i].url};
    imp_recorder *rec = NULL;
    char err[SIM_ERRLEN];
    int rc = imp_record_start(&o, &rec, err);
    if (U[i].used == NULL) {
      CU_ASSERT_EQUAL(rc, SIM_EINVAL);
      CU_ASSERT_PTR_NULL(rec);
      CU_ASSERT(err[0] != '\0');
    } else {
      CU_ASSERT_EQUAL_FATAL(rc, SIM_OK);
      CU_ASSERT_STRING_EQUAL(imp_record_upstream(rec), U[i].used);
      CU_ASSERT(imp_record_port(rec) > 0);
    }
    imp_record_free(rec);
  }
  imp_record_free(NULL);
}

int suite_record(void) {
  CU_pSuite s = CU_add_suite("record", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "record: only origin-form targets", test_targets);
  CU_add_test(s, "record: one exchange noted, redacted", test_note);
  CU_add_test(s, "record: the upstream fixed at start", test_upstreams);
  return CU_get_error();
}
