/*
 * guard.c - the client handle: configuration checked and copied, names of
 * the public enums, error strings, process set-up.
 */
#include "guard/guard_int.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A static description of an error code. */
const char *guard_strerror(int code) {
  switch (code) {
  case GUARD_OK: return "ok";
  case GUARD_ENOMEM: return "out of memory";
  case GUARD_EINVAL: return "invalid argument";
  case GUARD_ETOOBIG: return "too large";
  case GUARD_EINIT: return "initialisation failed";
  }
  return "unknown error";
}

/* One-time process set-up: libcurl. */
int guard_global_init(void) {
  return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? GUARD_OK : GUARD_EINIT;
}

/* Undoes guard_global_init. */
void guard_global_cleanup(void) {
  guard__transport_curl_release();
  curl_global_cleanup();
}

/* Kind names as in the trace format. */
const char *guard_kind_name(guard_kind k) {
  static const char *const n[] = {"ok", "transient", "permanent", "shape",
                                  "deadline", "unknown", "skipped"};
  return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

/* Outcome names as in the trace format. */
const char *guard_outcome_name(guard_outcome o) {
  static const char *const n[] = {"ok", "degraded", "blocked", "pending", "error"};
  return (unsigned)o < sizeof n / sizeof n[0] ? n[o] : "?";
}

/* Wait reasons as in the trace format. */
const char *guard_wait_why_name(guard_wait_why w) {
  static const char *const n[] = {"none", "backoff", "retry_after"};
  return (unsigned)w < sizeof n / sizeof n[0] ? n[w] : "?";
}

/* Fills *cfg with zeros and the default policy. */
void guard_config_init(guard_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->policy = guard_policy_default();
}

static const char DEGRADED[] =
    "[degraded] The assistant cannot answer right now: every provider failed. "
    "This is a fallback message, not a model answer; please try again shortly.";
static const char BLOCKED[] =
    "[blocked] This request was not sent: it would exceed the token budget.";

static int fail(char *err, int code, const char *fmt, const char *arg) {
  if (err != NULL) snprintf(err, GUARD_ERRLEN, fmt, arg);
  return code;
}

/* Joins base and suffix without doubling the slash. */
static char *join(const char *base, const char *suffix) {
  size_t bl = strlen(base);
  while (bl > 0 && base[bl - 1] == '/') bl--;
  size_t sl = strlen(suffix);
  char *s = malloc(bl + sl + 1);
  if (s == NULL) return NULL;
  memcpy(s, base, bl);
  memcpy(s + bl, suffix, sl + 1);
  return s;
}

/* 1 when s (NULL is fine) is short enough and has no control characters,
 * so it cannot break a header line. */
static int header_safe(const char *s, size_t max) {
  if (s == NULL) return 1;
  size_t n = 0;
  for (; s[n]; n++)
    if ((unsigned char)s[n] < 0x20 || s[n] == 0x7f) return 0;
  return n <= max;
}

static int ends_with_v1(const char *base) {
  size_t bl = strlen(base);
  while (bl > 0 && base[bl - 1] == '/') bl--;
  return bl >= 3 && memcmp(base + bl - 3, "/v1", 3) == 0;
}

static int add_provider(guard *g, const guard_provider *p, char *err) {
  guard__prov *q = &g->prov[g->nprov];
  if (p->name == NULL || p->name[0] == '\0' || strlen(p->name) >= 32)
    return fail(err, GUARD_EINVAL, "provider %s: name must be 1..31 characters",
                p->name ? p->name : "(null)");
  if (p->base_url == NULL || (strncmp(p->base_url, "http://", 7) != 0 &&
                              strncmp(p->base_url, "https://", 8) != 0))
    return fail(err, GUARD_EINVAL, "provider %s: base_url must be http(s)://...",
                p->name);
  if ((unsigned)p->dialect > GUARD_COHERE)
    return fail(err, GUARD_EINVAL, "provider %s: unknown dialect", p->name);
  if (!header_safe(p->base_url, 2048) || !header_safe(p->api_key, GUARD__MAX_SECRET) ||
      !header_safe(p->model, 256))
    return fail(err, GUARD_EINVAL,
                "provider %s: base_url, api_key or model too long or holds a "
                "control character", p->name);
  if (p->policy != NULL) {
    char why[128];
    if (guard__policy_check(p->policy, why, sizeof why) != GUARD_OK) {
      char msg[200];
      snprintf(msg, sizeof msg, "provider %s: %s", p->name, why);
      return fail(err, GUARD_EINVAL, "%s", msg);
    }
  }
  int oom = 0;
  q->name = guard__strdup(p->name, &oom);
  q->key = guard__strdup(p->api_key, &oom);
  q->model = guard__strdup(p->model ? p->model : "", &oom);
  if (p->dialect == GUARD_ANTHROPIC && !ends_with_v1(p->base_url))
    q->base = join(p->base_url, "/v1");
  else
    q->base = join(p->base_url, "");
  if (q->base == NULL) oom = 1;
  if (!oom && p->dialect == GUARD_GEMINI) {
    char path[320];
    snprintf(path, sizeof path, "/models/%s:generateContent", q->model);
    q->url = join(q->base, path);
    snprintf(path, sizeof path, "/models/%s:streamGenerateContent?alt=sse", q->model);
    q->url_stream = join(q->base, path);
    if (q->url_stream == NULL) oom = 1;
  } else if (!oom && p->dialect == GUARD_BEDROCK) {
    char id[256 * 3 + 1], path[sizeof id + 32]; /* a model is at most 256 bytes */
    guard__bedrock_model_path(q->model, id, sizeof id);
    snprintf(path, sizeof path, "/model/%s/converse", id);
    q->url = join(q->base, path);
    snprintf(path, sizeof path, "/model/%s/converse-stream", id);
    q->url_stream = join(q->base, path);
    if (q->url_stream == NULL) oom = 1;
  } else if (!oom && (p->dialect == GUARD_OLLAMA || p->dialect == GUARD_COHERE)) {
    q->url = join(q->base, p->dialect == GUARD_OLLAMA ? "/api/chat" : "/v2/chat");
  } else if (!oom) {
    q->url = join(q->base, p->dialect == GUARD_ANTHROPIC   ? "/messages"
                           : p->dialect == GUARD_RESPONSES ? "/responses"
                                                           : "/chat/completions");
  }
  if (q->url == NULL) oom = 1;
  q->dialect = p->dialect;
  guard__pol_from(&q->pol, p->policy ? p->policy : &g->pubpol, g->scale);
  q->pol.flags = g->pol.flags; /* behaviour flags are the client's */
  g->nprov++; /* counted even when incomplete, so guard_free releases it */
  return oom ? fail(err, GUARD_ENOMEM, "%s", "out of memory") : GUARD_OK;
}

/* Creates a client handle from *cfg; the caller owns *out. */
int guard_new(const guard_config *cfg, guard **out, char err[GUARD_ERRLEN]) {
  *out = NULL;
  if (cfg == NULL) return fail(err, GUARD_EINVAL, "%s", "no configuration");
  if (cfg->nproviders < 1 || cfg->nproviders > GUARD__MAX_PROVIDERS ||
      cfg->providers == NULL)
    return fail(err, GUARD_EINVAL, "%s", "1 to 16 providers are needed");
  char why[128];
  if (guard__policy_check(&cfg->policy, why, sizeof why) != GUARD_OK)
    return fail(err, GUARD_EINVAL, "policy: %s", why);
  double scale = cfg->time_scale == 0 ? 1.0 : cfg->time_scale;
  if (!(scale > 0) || scale > 1000)
    return fail(err, GUARD_EINVAL, "%s", "time_scale must be > 0");
  for (int i = 0; i < cfg->nproviders; i++)
    for (int j = 0; j < i; j++)
      if (cfg->providers[i].name && cfg->providers[j].name &&
          strcmp(cfg->providers[i].name, cfg->providers[j].name) == 0)
        return fail(err, GUARD_EINVAL, "provider %s appears twice",
                    cfg->providers[i].name);

  guard *g = calloc(1, sizeof *g);
  if (g == NULL) return fail(err, GUARD_ENOMEM, "%s", "out of memory");
  if (pthread_mutex_init(&g->mu, NULL) != 0) {
    free(g);
    return fail(err, GUARD_ENOMEM, "%s", "cannot create a mutex");
  }
  g->scale = scale;
  g->pubpol = cfg->policy;
  g->pubpol.degraded_text = NULL;
  g->pubpol.blocked_text = NULL;
  guard__pol_from(&g->pol, &cfg->policy, scale);
  g->budget_per_call = cfg->policy.budget_per_call;
  g->budget_per_session = cfg->policy.budget_per_session;
  g->env = cfg->env;
  g->prng = cfg->seed;
  g->max_body = cfg->max_response_bytes ? cfg->max_response_bytes : GUARD__MAX_BODY_DEFAULT;
  guard__rbudget_init(&g->rbudget, cfg->policy.retry_budget_capacity,
                      cfg->policy.retry_budget_cost, cfg->policy.retry_budget_refill);

  int rc = GUARD_OK, oom = 0;
  g->degraded_text = guard__strdup(cfg->policy.degraded_text ? cfg->policy.degraded_text : DEGRADED, &oom);
  g->blocked_text = guard__strdup(cfg->policy.blocked_text ? cfg->policy.blocked_text : BLOCKED, &oom);
  g->user_agent = guard__strdup(cfg->user_agent ? cfg->user_agent : "fusebox-guard/1", &oom);
  if (oom) {
    rc = fail(err, GUARD_ENOMEM, "%s", "out of memory");
    goto fail;
  }
  for (int i = 0; i < cfg->nproviders; i++) {
    rc = add_provider(g, &cfg->providers[i], err);
    if (rc != GUARD_OK) goto fail;
  }
  if (cfg->effects_url != NULL) {
    if (strncmp(cfg->effects_url, "http://", 7) != 0 &&
        strncmp(cfg->effects_url, "https://", 8) != 0) {
      rc = fail(err, GUARD_EINVAL, "%s", "effects_url must be http(s)://...");
      goto fail;
    }
    g->effects_url = join(cfg->effects_url, "");
  } else {
    g->effects_url = join(g->prov[0].base, "");
  }
  if (g->effects_url == NULL) {
    rc = fail(err, GUARD_ENOMEM, "%s", "out of memory");
    goto fail;
  }
  *out = g;
  return GUARD_OK;
fail:
  guard_free(g);
  return rc;
}

/* Releases a handle. */
void guard_free(guard *g) {
  if (g == NULL) return;
  for (int i = 0; i < g->nprov; i++) {
    free(g->prov[i].name);
    free(g->prov[i].base);
    free(g->prov[i].url);
    free(g->prov[i].url_stream);
    free(g->prov[i].key);
    free(g->prov[i].model);
  }
  free(g->degraded_text);
  free(g->blocked_text);
  free(g->effects_url);
  free(g->user_agent);
  pthread_mutex_destroy(&g->mu);
  free(g);
}
