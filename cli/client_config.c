/*
 * client_config.c - turns a scenario's `client` table (JSON) into a guard
 * handle and a workload, for the built-in clients: the guarded client (the
 * table's policy), and two reference clients with fixed, typical policies
 * that go wrong where such clients go wrong (docs/scenarios.md).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/suggest.h"
#include "cli/run.h"

static const char *const WORKLOAD_KEYS[] = {
    "call", "dialect", "requests", "concurrency", "spread", "prompt", "max_tokens",
    "layers", "effect", "payload", "tools", NULL};
static const char *const POLICY_KEYS[] = {
    "chain", "deadline", "attempts", "attempt_timeout", "attempt_timeout_floor",
    "connect_timeout", "idle_timeout", "backoff", "retry_after_cap", "retry_after_bad",
    "max_wait", "budget", "breaker", "retry_budget", "degraded", NULL};

static int in(const char *k, const char *const *set) {
  for (int i = 0; set[i]; i++)
    if (strcmp(k, set[i]) == 0) return 1;
  return 0;
}

/* The known client key nearest a misspelt one (the rule of
   common/suggest.h), or NULL. */
static const char *suggest(const char *k) {
  int dw = -1, dp = -1;
  const char *w = fb_suggest(k, WORKLOAD_KEYS, &dw);
  const char *p = fb_suggest(k, POLICY_KEYS, &dp);
  if (w == NULL) return p;
  if (p == NULL) return w;
  return dp < dw ? p : w;
}

/* Reads a number field in [lo, hi]; absent leaves *out. -1 on a bad value. */
static int num(const cJSON *o, const char *key, double lo, double hi, double *out,
               char err[RUN_ERRLEN]) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (v == NULL) return 0;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
      v->valuedouble > hi) {
    snprintf(err, RUN_ERRLEN, "client.%s must be a number from %g to %g", key, lo, hi);
    return -1;
  }
  *out = v->valuedouble;
  return 0;
}

static int inum(const cJSON *o, const char *key, int lo, int hi, int *out,
                char err[RUN_ERRLEN]) {
  double d = *out;
  if (num(o, key, lo, hi, &d, err) != 0) return -1;
  if (d != floor(d)) {
    snprintf(err, RUN_ERRLEN, "client.%s must be a whole number", key);
    return -1;
  }
  *out = (int)d;
  return 0;
}

static int lnum(const cJSON *o, const char *key, long *out, char err[RUN_ERRLEN]) {
  double d = (double)*out;
  if (num(o, key, 0, 1e12, &d, err) != 0) return -1;
  *out = (long)d;
  return 0;
}

/* Puts a sub-table's name into a failed check's "client.<key>" path
   ("client.base" -> "client.backoff.base"); returns rc. */
static int in_table(const char *table, int rc, char err[RUN_ERRLEN]) {
  if (rc != 0 && strncmp(err, "client.", 7) == 0) {
    char path[RUN_ERRLEN];
    snprintf(path, sizeof path, "client.%s.%s", table, err + 7);
    memcpy(err, path, RUN_ERRLEN);
  }
  return rc;
}

/* "a, b, c" of a NULL-terminated list, for messages. */
static void list_of(const char *const *set, char *out, size_t cap) {
  size_t off = 0;
  out[0] = '\0';
  for (int i = 0; set[i] && off < cap; i++)
    off += (size_t)snprintf(out + off, cap - off, "%s%s", i ? ", " : "", set[i]);
}

static int sub_keys(const cJSON *o, const char *name, const char *const *allowed,
                    char err[RUN_ERRLEN]) {
  const cJSON *k;
  cJSON_ArrayForEach(k, o) {
    if (!in(k->string, allowed)) {
      const char *near = fb_suggest(k->string, allowed, NULL);
      if (near != NULL) {
        snprintf(err, RUN_ERRLEN, "client.%s.%.60s: unknown key (did you mean '%s'?)", name,
                 k->string, near);
        return -1;
      }
      char known[128];
      list_of(allowed, known, sizeof known);
      snprintf(err, RUN_ERRLEN, "client.%s.%.60s: unknown key (known: %s)", name, k->string,
               known);
      return -1;
    }
  }
  return 0;
}

/* The workload part; the same for every client. */
static int read_workload(const cJSON *c, run_workload *w, char err[RUN_ERRLEN]) {
  memset(w, 0, sizeof *w);
  w->call = RUN_CALL_CHAT;
  w->requests = 1;
  w->concurrency = 1;
  w->max_tokens = 64;
  w->layers = 1;
  snprintf(w->effect, sizeof w->effect, "send_email");
  if (c == NULL) return 0;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "call");
  if (v != NULL) {
    if (cJSON_IsString(v) && strcmp(v->valuestring, "chat") == 0) w->call = RUN_CALL_CHAT;
    else if (cJSON_IsString(v) && strcmp(v->valuestring, "stream") == 0) w->call = RUN_CALL_STREAM;
    else if (cJSON_IsString(v) && strcmp(v->valuestring, "effect") == 0) w->call = RUN_CALL_EFFECT;
    else if (cJSON_IsString(v) && strcmp(v->valuestring, "tools") == 0) w->call = RUN_CALL_TOOLS;
    else if (cJSON_IsString(v) && strcmp(v->valuestring, "stream_tools") == 0)
      w->call = RUN_CALL_STREAM_TOOLS;
    else {
      snprintf(err, RUN_ERRLEN, "client.call must be \"chat\", \"stream\", \"effect\", "
                                "\"tools\" or \"stream_tools\"");
      return -1;
    }
  }
  snprintf(w->tools[0], sizeof w->tools[0], "get_weather");
  w->ntools = 1;
  v = cJSON_GetObjectItemCaseSensitive(c, "tools");
  if (v != NULL) {
    const cJSON *e;
    w->ntools = 0;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1 || cJSON_GetArraySize(v) > 8) {
      snprintf(err, RUN_ERRLEN, "client.tools must be a list of 1 to 8 tool names");
      return -1;
    }
    cJSON_ArrayForEach(e, v) {
      if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) >= 64 ||
          strpbrk(e->valuestring, "/?#% ") != NULL) {
        snprintf(err, RUN_ERRLEN, "client.tools: each name is 1 to 63 characters, no / ? # %% or space");
        return -1;
      }
      snprintf(w->tools[w->ntools++], sizeof w->tools[0], "%s", e->valuestring);
    }
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "dialect");
  if (v != NULL) {
    /* indexed by guard_dialect */
    static const char *const names[] = {"openai", "anthropic", "responses", "gemini",
                                        "bedrock", "ollama", "cohere", NULL};
    w->dialect = -1;
    for (int i = 0; names[i]; i++)
      if (cJSON_IsString(v) && strcmp(v->valuestring, names[i]) == 0) w->dialect = i;
    if (w->dialect < 0) {
      char known[128];
      list_of(names, known, sizeof known);
      snprintf(err, RUN_ERRLEN, "client.dialect must be one of: %s", known);
      return -1;
    }
  }
  if (inum(c, "requests", 0, RUN_MAX_REQUESTS, &w->requests, err) ||
      inum(c, "concurrency", 1, RUN_MAX_CONCURRENCY, &w->concurrency, err) ||
      num(c, "spread", 0, 3600, &w->spread, err) ||
      inum(c, "max_tokens", 1, 1000000, &w->max_tokens, err) ||
      inum(c, "layers", 1, 10, &w->layers, err))
    return -1;
  v = cJSON_GetObjectItemCaseSensitive(c, "prompt");
  if (v != NULL) {
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= sizeof w->prompt) {
      snprintf(err, RUN_ERRLEN, "client.prompt must be a string under %zu bytes", sizeof w->prompt);
      return -1;
    }
    snprintf(w->prompt, sizeof w->prompt, "%s", v->valuestring);
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "effect");
  if (v != NULL) {
    if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= sizeof w->effect ||
        strpbrk(v->valuestring, "/?#% ") != NULL) {
      snprintf(err, RUN_ERRLEN, "client.effect must be a short name without / ? # %% or spaces");
      return -1;
    }
    snprintf(w->effect, sizeof w->effect, "%s", v->valuestring);
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "payload");
  if (v != NULL) {
    char *p = cJSON_PrintUnformatted(v);
    if (p == NULL || strlen(p) >= sizeof w->payload) {
      free(p);
      snprintf(err, RUN_ERRLEN, "client.payload is too large");
      return -1;
    }
    snprintf(w->payload, sizeof w->payload, "%s", p);
    free(p);
  }
  if (w->concurrency > w->requests && w->requests > 0) w->concurrency = w->requests;
  return 0;
}

/* The guarded client's policy from the table. */
static int read_policy(const cJSON *c, guard_policy *p, char err[RUN_ERRLEN]) {
  if (c == NULL) return 0;
  if (num(c, "deadline", 0, 86400, &p->deadline, err) ||
      inum(c, "attempts", 1, 100, &p->attempts, err) ||
      num(c, "attempt_timeout", 0, 86400, &p->attempt_timeout_cap, err) ||
      num(c, "attempt_timeout_floor", 0, 86400, &p->attempt_timeout_floor, err) ||
      num(c, "connect_timeout", 0, 86400, &p->connect_timeout, err) ||
      num(c, "idle_timeout", 0, 86400, &p->stream_idle_timeout, err) ||
      num(c, "retry_after_cap", 0, 86400, &p->retry_after_cap, err) ||
      num(c, "max_wait", 0, 86400, &p->max_total_wait, err))
    return -1;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "retry_after_bad");
  if (v != NULL) {
    if (cJSON_IsString(v) && strcmp(v->valuestring, "ignore") == 0) p->retry_after_bad = GUARD_RA_IGNORE;
    else if (cJSON_IsString(v) && strcmp(v->valuestring, "stop") == 0) p->retry_after_bad = GUARD_RA_STOP;
    else {
      snprintf(err, RUN_ERRLEN, "client.retry_after_bad must be \"ignore\" or \"stop\"");
      return -1;
    }
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "backoff");
  if (v != NULL) {
    static const char *const K[] = {"base", "cap", "jitter", NULL};
    if (!cJSON_IsObject(v) || sub_keys(v, "backoff", K, err) != 0) {
      if (!err[0]) snprintf(err, RUN_ERRLEN, "client.backoff must be a table");
      return -1;
    }
    if (in_table("backoff", num(v, "base", 0, 3600, &p->backoff_base, err) ||
                                num(v, "cap", 0, 3600, &p->backoff_cap, err), err))
      return -1;
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(v, "jitter");
    if (cJSON_IsString(j) && strcmp(j->valuestring, "none") == 0) p->jitter = GUARD_JITTER_NONE;
    else if (cJSON_IsString(j) && strcmp(j->valuestring, "full") == 0) p->jitter = GUARD_JITTER_FULL;
    else if (cJSON_IsString(j) && strcmp(j->valuestring, "equal") == 0) p->jitter = GUARD_JITTER_EQUAL;
    else if (cJSON_IsNumber(j) && j->valuedouble >= 0 && j->valuedouble <= 1) {
      p->jitter = GUARD_JITTER_PLUSMINUS;
      p->jitter_fraction = j->valuedouble;
    } else if (j != NULL) {
      snprintf(err, RUN_ERRLEN, "client.backoff.jitter must be \"none\", \"full\", \"equal\" or a fraction 0..1");
      return -1;
    }
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "budget");
  if (v != NULL) {
    static const char *const K[] = {"per_call", "per_session", NULL};
    if (!cJSON_IsObject(v) || sub_keys(v, "budget", K, err) != 0) {
      if (!err[0]) snprintf(err, RUN_ERRLEN, "client.budget must be a table");
      return -1;
    }
    if (in_table("budget", lnum(v, "per_call", &p->budget_per_call, err) ||
                               lnum(v, "per_session", &p->budget_per_session, err), err))
      return -1;
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "breaker");
  if (cJSON_IsFalse(v)) {
    p->breaker_threshold = 0;
  } else if (v != NULL) {
    static const char *const K[] = {"threshold", "cooldown", NULL};
    if (!cJSON_IsObject(v) || sub_keys(v, "breaker", K, err) != 0) {
      if (!err[0]) snprintf(err, RUN_ERRLEN, "client.breaker must be a table or false");
      return -1;
    }
    if (in_table("breaker", inum(v, "threshold", 1, 1000, &p->breaker_threshold, err) ||
                                num(v, "cooldown", 0, 86400, &p->breaker_cooldown, err), err))
      return -1;
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "retry_budget");
  if (cJSON_IsFalse(v)) {
    p->retry_budget_capacity = 0;
  } else if (v != NULL) {
    static const char *const K[] = {"capacity", "cost", "refill", NULL};
    if (!cJSON_IsObject(v) || sub_keys(v, "retry_budget", K, err) != 0) {
      if (!err[0]) snprintf(err, RUN_ERRLEN, "client.retry_budget must be a table or false");
      return -1;
    }
    if (in_table("retry_budget", num(v, "capacity", 0, 1e9, &p->retry_budget_capacity, err) ||
                                     num(v, "cost", 0, 1e9, &p->retry_budget_cost, err) ||
                                     num(v, "refill", 0, 1e9, &p->retry_budget_refill, err), err))
      return -1;
  }
  v = cJSON_GetObjectItemCaseSensitive(c, "degraded");
  if (v != NULL) {
    if (!cJSON_IsString(v) || !v->valuestring[0]) {
      snprintf(err, RUN_ERRLEN, "client.degraded must be a non-empty string");
      return -1;
    }
    p->degraded_text = v->valuestring; /* copied by guard_new */
  }
  return 0;
}

/* The try/except-retry-3-times wrapper (docs/scenarios.md). */
static guard_policy naive_policy(void) {
  guard_policy p = guard_policy_default();
  p.attempts = 3;
  p.backoff_base = 1;
  p.jitter = GUARD_JITTER_NONE;
  p.deadline = 0;
  p.max_total_wait = 0;
  p.attempt_timeout_cap = 10;
  p.attempt_timeout_floor = 10;
  p.connect_timeout = 10;
  p.stream_idle_timeout = 0;
  p.breaker_threshold = 0;
  p.retry_budget_capacity = 0;
  p.flags = GUARD_RETRY_EVERYTHING | GUARD_IGNORE_RETRY_AFTER | GUARD_NEW_KEY_PER_ATTEMPT |
            GUARD_SPLICE_PARTIAL | GUARD_FIXED_WAIT | GUARD_BLIND_REEXECUTE | GUARD_TRUST_TOOLS;
  return p;
}

/* A typical SDK's defaults (docs/scenarios.md). */
static guard_policy sdk_policy(void) {
  guard_policy p = guard_policy_default();
  p.attempts = 3;
  p.backoff_base = 0.5;
  p.backoff_cap = 8;
  p.jitter = GUARD_JITTER_SUBTRACT;
  p.jitter_fraction = 0.25;
  p.retry_after_cap = 60;
  p.retry_after_bad = GUARD_RA_IGNORE;
  p.deadline = 0;
  p.max_total_wait = 0;
  p.attempt_timeout_cap = 60;
  p.attempt_timeout_floor = 60;
  p.connect_timeout = 60;
  p.stream_idle_timeout = 0;
  p.breaker_threshold = 0;
  p.retry_budget_capacity = 0;
  p.flags = GUARD_STATUS_ONLY | GUARD_NO_KEY | GUARD_BLIND_REEXECUTE | GUARD_TRUST_TOOLS;
  return p;
}

/* Which provider names, in order, the client calls: the chain, checked
   against the scenario's providers. */
static int read_chain(const cJSON *c, const sim_scenario *sc, int guard_client,
                      char names[][RUN_NAMELEN], int *n, char err[RUN_ERRLEN]) {
  int np = sim_scenario_nproviders(sc);
  *n = 0;
  const cJSON *v = c ? cJSON_GetObjectItemCaseSensitive(c, "chain") : NULL;
  if (v != NULL) {
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1 || cJSON_GetArraySize(v) > RUN_MAX_CHAIN) {
      snprintf(err, RUN_ERRLEN, "client.chain must be a list of 1 to %d provider names", RUN_MAX_CHAIN);
      return -1;
    }
    const cJSON *e;
    int at = 0;
    cJSON_ArrayForEach(e, v) {
      int found = 0;
      at++;
      for (int i = 0; cJSON_IsString(e) && i < np; i++)
        if (strcmp(sim_scenario_provider_name(sc, i), e->valuestring) == 0) found = 1;
      if (!found) {
        snprintf(err, RUN_ERRLEN, "client.chain[%d]: no provider named '%.60s'", at,
                 cJSON_IsString(e) ? e->valuestring : "?");
        return -1;
      }
      snprintf(names[(*n)++], RUN_NAMELEN, "%s", e->valuestring);
    }
  } else {
    for (int i = 0; i < np && i < RUN_MAX_CHAIN; i++)
      snprintf(names[(*n)++], RUN_NAMELEN, "%s", sim_scenario_provider_name(sc, i));
  }
  if (*n == 0) snprintf(names[(*n)++], RUN_NAMELEN, "primary"); /* effects-only scenario */
  if (!guard_client) *n = 1; /* the reference clients know one provider */
  return 0;
}

/* Checks the scenario's `client` table; see run.h. */
int run_client_validate(const sim_scenario *sc, char err[RUN_ERRLEN]) {
  err[0] = '\0';
  const char *client_json = sim_scenario_client_json(sc);
  if (client_json == NULL) return 0;
  cJSON *c = cJSON_Parse(client_json);
  if (!cJSON_IsObject(c)) {
    cJSON_Delete(c);
    snprintf(err, RUN_ERRLEN, "client must be a table");
    return -1;
  }
  int rc = 0;
  const cJSON *k;
  cJSON_ArrayForEach(k, c) {
    if (!in(k->string, WORKLOAD_KEYS) && !in(k->string, POLICY_KEYS)) {
      const char *near = suggest(k->string);
      if (near)
        snprintf(err, RUN_ERRLEN, "client.%.60s: unknown key (did you mean '%s'?)", k->string,
                 near);
      else
        snprintf(err, RUN_ERRLEN, "client.%.60s: unknown key", k->string);
      rc = -1;
      break;
    }
  }
  run_workload w;
  guard_policy p = guard_policy_default();
  char names[RUN_MAX_CHAIN][RUN_NAMELEN];
  int n = 0;
  if (rc == 0) rc = read_workload(c, &w, err);
  if (rc == 0) rc = read_policy(c, &p, err);
  if (rc == 0) rc = read_chain(c, sc, 1, names, &n, err);
  cJSON_Delete(c);
  return rc;
}

/* What a scenario asks of a client, without building one; see run.h. */
int run_client_describe(const char *client_json, run_workload *w, double *deadline_s,
                        double *attempt_timeout_s, char err[RUN_ERRLEN]) {
  err[0] = '\0';
  cJSON *c = client_json ? cJSON_Parse(client_json) : NULL;
  guard_policy pol = guard_policy_default();
  int rc = read_workload(c, w, err);
  if (rc == 0) rc = read_policy(c, &pol, err);
  *deadline_s = cJSON_GetObjectItemCaseSensitive(c, "deadline") ? pol.deadline : 0;
  *attempt_timeout_s =
      cJSON_GetObjectItemCaseSensitive(c, "attempt_timeout") ? pol.attempt_timeout_cap : 0;
  cJSON_Delete(c);
  return rc;
}

/* Builds the client for one scenario session; see run.h. */
int run_client_new(const sim_scenario *sc, run_client_kind kind, sim_server *srv,
                   double time_scale, uint64_t seed, guard **out, run_workload *w,
                   char err[RUN_ERRLEN]) {
  err[0] = '\0';
  const char *client_json = sim_scenario_client_json(sc);
  cJSON *c = client_json ? cJSON_Parse(client_json) : NULL;
  int rc = read_workload(c, w, err);
  guard_policy pol = guard_policy_default();
  if (rc == 0) {
    if (kind == RUN_CLIENT_GUARD) rc = read_policy(c, &pol, err);
    else pol = kind == RUN_CLIENT_NAIVE ? naive_policy() : sdk_policy();
  }
  char names[RUN_MAX_CHAIN][RUN_NAMELEN];
  int n = 0;
  if (rc == 0) rc = read_chain(c, sc, kind == RUN_CLIENT_GUARD, names, &n, err);
  if (rc == 0) {
    char urls[RUN_MAX_CHAIN][96];
    guard_provider prov[RUN_MAX_CHAIN];
    char effects_url[96];
    int port = sim_server_port(srv);
    for (int i = 0; i < n; i++) {
      /* Bedrock, Ollama and Cohere carry their version in their own paths
         (/model/..., /api/chat, /v2/chat): their base is the provider's. */
      int own = w->dialect == GUARD_BEDROCK || w->dialect == GUARD_OLLAMA ||
                w->dialect == GUARD_COHERE;
      snprintf(urls[i], sizeof urls[i], "http://127.0.0.1:%d/%s%s", port, names[i],
               own ? "" : "/v1");
      prov[i] = (guard_provider){.name = names[i], .base_url = urls[i],
                                 .dialect = (guard_dialect)w->dialect,
                                 .api_key = "sk-fusebox-placeholder", .model = "fusebox-model"};
    }
    snprintf(effects_url, sizeof effects_url, "http://127.0.0.1:%d/v1", port);
    guard_config cfg;
    guard_config_init(&cfg);
    cfg.providers = prov;
    cfg.nproviders = n;
    cfg.policy = pol;
    cfg.time_scale = time_scale;
    cfg.seed = seed;
    cfg.effects_url = effects_url;
    char gerr[GUARD_ERRLEN] = "";
    if (guard_new(&cfg, out, gerr) != GUARD_OK) {
      snprintf(err, RUN_ERRLEN, "client: %.240s", gerr);
      rc = -1;
    }
  }
  cJSON_Delete(c);
  return rc;
}

/* "guard", "naive", "sdk-default". */
const char *run_client_name(run_client_kind kind) {
  switch (kind) {
  case RUN_CLIENT_GUARD: return "guard";
  case RUN_CLIENT_NAIVE: return "naive";
  case RUN_CLIENT_SDK: return "sdk-default";
  }
  return "?";
}
