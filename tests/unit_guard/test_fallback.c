/*
 * test_fallback.c - the chain: a provider that fails for good is skipped,
 * not the chain; when all fail, a degraded answer that says so.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <string.h>

static void test_permanent_skips_one_provider(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 401,
                           .body = ERR_OPENAI("invalid_request_error", "invalid_api_key")});
  fake_add(&f, (fake_step){.url_has = "/backup/v1/messages", .status = 200, .body = OK_ANTHROPIC});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.nproviders = 2;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT_STRING_EQUAL(f.req[0].url, "http://fake/v1/chat/completions");
  CU_ASSERT_STRING_EQUAL(f.req[1].url, "http://fake/backup/v1/messages");
  CU_ASSERT_EQUAL(f.nsleep, 0); /* no wait before a fallback */
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "hi from backup");
  CU_ASSERT_STRING_EQUAL(r->provider, "backup");
  CU_ASSERT_EQUAL(r->nattempts, 2);
  CU_ASSERT_STRING_EQUAL(r->attempts[1].provider, "backup");
  CU_ASSERT_EQUAL(r->attempts[1].n, 1);
  CU_ASSERT_EQUAL(r->tokens, 14);
  /* The backup got an Anthropic body. */
  CU_ASSERT_PTR_NOT_NULL(strstr(f.req[1].body, "\"max_tokens\":16"));
  CU_ASSERT_PTR_NOT_NULL(strstr(f.req[1].body, "\"model\":\"claude-test\""));
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_transient_exhausts_then_falls_back(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 503, .sticky = 1});
  fake_add(&f, (fake_step){.url_has = "/backup/", .status = 529,
                           .body = ERR_ANTHROPIC("overloaded_error")});
  fake_add(&f, (fake_step){.url_has = "/backup/", .status = 200, .body = OK_ANTHROPIC});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.nproviders = 2;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 5);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(r->attempts[3].kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_STRING_EQUAL(r->attempts[3].error, "overloaded_error");
  CU_ASSERT_EQUAL(r->attempts[4].n, 2);
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_all_fail_degraded(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 403, .sticky = 1});
  fake_add(&f, (fake_step){.url_has = "/backup/", .status = 429,
                           .body = "{\"type\":\"error\",\"error\":{\"type\":\"billing_error\"}}",
                           .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.nproviders = 2;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT(strlen(r->text) > 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->text, "degraded"));
  CU_ASSERT_PTR_NULL(r->provider);
  CU_ASSERT_PTR_NOT_NULL(r->reason);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "backup #1: permanent 429 billing_error"));
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_custom_degraded_text(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.tx = GUARD_TX_CONNECT, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.degraded_text = "Busy now (degraded answer). Ask your teacher.";
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "Busy now (degraded answer). Ask your teacher.");
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "connect_failed"));
  guard_result_free(r);
  guard_free(g);
  /* An empty degraded text is refused. */
  cfg.policy.degraded_text = "";
  char err[GUARD_ERRLEN];
  CU_ASSERT_EQUAL(guard_new(&cfg, &g, err), GUARD_EINVAL);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "degraded_text"));
  fake_free(&f);
}

static void test_per_provider_policy(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 500, .sticky = 1});
  fake_add(&f, (fake_step){.url_has = "/backup/", .status = 200, .body = OK_ANTHROPIC});
  guard_policy one = guard_policy_default();
  one.attempts = 1;
  guard_provider chain[2] = {FAKE_PROVIDERS[0], FAKE_PROVIDERS[1]};
  chain[0].policy = &one;
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.providers = chain;
  cfg.nproviders = 2;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_config_errors(void) {
  guard_config cfg;
  guard_config_init(&cfg);
  guard *g = (guard *)1;
  char err[GUARD_ERRLEN];
  CU_ASSERT_EQUAL(guard_new(&cfg, &g, err), GUARD_EINVAL);
  CU_ASSERT_PTR_NULL(g);
  guard_provider p = FAKE_PROVIDERS[0];
  p.base_url = "ftp://x";
  cfg.providers = &p;
  cfg.nproviders = 1;
  CU_ASSERT_EQUAL(guard_new(&cfg, &g, err), GUARD_EINVAL);
  p = FAKE_PROVIDERS[0];
  p.api_key = "sk\r\nX-Evil: 1";
  CU_ASSERT_EQUAL(guard_new(&cfg, &g, err), GUARD_EINVAL);
  p = FAKE_PROVIDERS[0];
  cfg.policy.attempts = 0;
  CU_ASSERT_EQUAL(guard_new(&cfg, &g, err), GUARD_EINVAL);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "attempts"));
  cfg.policy = guard_policy_default();
  guard_provider twice[2] = {FAKE_PROVIDERS[0], FAKE_PROVIDERS[0]};
  cfg.providers = twice;
  cfg.nproviders = 2;
  CU_ASSERT_EQUAL(guard_new(&cfg, &g, err), GUARD_EINVAL);
  guard_free(NULL);
  guard_result_free(NULL);
}

static void test_anthropic_base_urls(void) {
  guard_provider p[3] = {
      {"a", "http://h:1", GUARD_ANTHROPIC, "k", "m", NULL},
      {"b", "http://h:1/v1/", GUARD_ANTHROPIC, "k", "m", NULL},
      {"c", "http://h:1/x/v1", GUARD_OPENAI, NULL, "m", NULL},
  };
  guard_config cfg;
  guard_config_init(&cfg);
  cfg.providers = p;
  cfg.nproviders = 3;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(g->prov[0].url, "http://h:1/v1/messages");
  CU_ASSERT_STRING_EQUAL(g->prov[1].url, "http://h:1/v1/messages");
  CU_ASSERT_STRING_EQUAL(g->prov[2].url, "http://h:1/x/v1/chat/completions");
  CU_ASSERT_STRING_EQUAL(g->effects_url, "http://h:1/v1");
  guard_free(g);
}

/* Registers the fallback suite. */
int suite_fallback(void) {
  CU_pSuite s = CU_add_suite("fallback", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "a permanent error skips one provider, not the chain", test_permanent_skips_one_provider) ||
      !CU_add_test(s, "transient errors exhaust a provider, then the next", test_transient_exhausts_then_falls_back) ||
      !CU_add_test(s, "all fail: degraded text with a reason", test_all_fail_degraded) ||
      !CU_add_test(s, "configurable degraded text, never empty", test_custom_degraded_text) ||
      !CU_add_test(s, "per-provider policy", test_per_provider_policy) ||
      !CU_add_test(s, "bad configurations are refused", test_config_errors) ||
      !CU_add_test(s, "base URLs of both dialects", test_anthropic_base_urls))
    return CU_get_error();
  return 0;
}
