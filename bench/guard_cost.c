/*
 * guard_cost.c - N chat calls through the guard (guard_chat, the default
 * libcurl transport) against `fusebox serve`, for callgrind: bench/cost.sh
 * runs it for two values of N and divides the difference in instructions
 * by the difference in calls, so process start-up is not counted.
 *
 *   guard_cost --url http://127.0.0.1:P/v1 --n N [--retry] [--tag T]
 *
 * Every call sends a distinct user message ("cost T call I"; give each
 * run its own T, the server keys requests by body), so that a
 * scenario `provider = { fail { status = 503 }, chat {} }` fails each
 * call's first attempt and answers its second. --retry sets the policy
 * for that: backoff 0.001 s without jitter, the retry budget and the
 * breaker off (otherwise they would stop retrying after ~25 calls).
 * Prints "calls= ok= requests= attempts="; exit 1 unless every call is ok.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard/guard.h"

int main(int argc, char **argv) {
  const char *url = NULL;
  int n = 0, retry = 0;
  const char *tag = "";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--url") == 0 && i + 1 < argc) url = argv[++i];
    else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = atoi(argv[++i]);
    else if (strcmp(argv[i], "--retry") == 0) retry = 1;
    else if (strcmp(argv[i], "--tag") == 0 && i + 1 < argc) tag = argv[++i];
  }
  if (url == NULL || n <= 0) {
    fprintf(stderr, "usage: guard_cost --url BASE_URL --n N [--retry]\n");
    return 2;
  }
  if (guard_global_init() != GUARD_OK) return 2;
  guard_provider p = {.name = "primary", .base_url = url, .dialect = GUARD_OPENAI,
                      .api_key = "sk-bench", .model = "gpt-4o-mini"};
  guard_config cfg;
  guard_config_init(&cfg);
  cfg.providers = &p;
  cfg.nproviders = 1;
  cfg.seed = 1;
  if (retry) {
    cfg.policy.backoff_base = 0.001;
    cfg.policy.backoff_cap = 0.001;
    cfg.policy.jitter = GUARD_JITTER_NONE;
    cfg.policy.retry_budget_capacity = 0;
    cfg.policy.breaker_threshold = 0;
  }
  guard *g;
  char err[GUARD_ERRLEN];
  if (guard_new(&cfg, &g, err) != GUARD_OK) {
    fprintf(stderr, "guard_new: %s\n", err);
    return 2;
  }
  int ok = 0;
  long requests = 0, attempts = 0;
  for (int i = 0; i < n; i++) {
    char text[128];
    snprintf(text, sizeof text, "cost %s call %d", tag, i);
    guard_message m = {.role = "user", .content = text};
    guard_chat_request req = {.messages = &m, .nmessages = 1, .max_tokens = 16};
    guard_result *r;
    if (guard_chat(g, &req, &r) != GUARD_OK) return 2;
    if (r->outcome == GUARD_OUTCOME_OK) ok++;
    else if (i == 0) fprintf(stderr, "guard_cost: call 0: %s\n", r->reason ? r->reason : "?");
    requests += r->requests;
    attempts += r->nattempts;
    guard_result_free(r);
  }
  printf("calls=%d ok=%d requests=%ld attempts=%ld\n", n, ok, requests, attempts);
  guard_free(g);
  guard_global_cleanup();
  return ok == n ? 0 : 1;
}
