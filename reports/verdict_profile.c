/*
 * verdict_profile.c - policy conformance: does a client do what its profile
 * (a file under profiles/, as JSON) says it does? Per logical request: no more
 * attempts than promised; a retry only after a failure the profile retries
 * (per-status rules with exceptions and Retry-After conditions included);
 * no giving up after such a failure with attempts left; each gap at least
 * what the profile waits (its backoff or fixed schedule, its Retry-After
 * reading with cap, invalid, negative, past, decimal and over-cap rules, or the longer of the
 * two) and not far over it. Every key of the profile is read; an unknown
 * key or a bad value is an error, never a silent default.
 */
#include "reports/reports_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a client does with a Retry-After it does not simply wait out. */
enum { RA_BACKOFF, RA_IMMEDIATE, RA_STOP, RA_HANG, RA_TRUNCATE };
static const char *const BEHAVIOURS[] = {"backoff", "immediate", "stop", "hang", "truncate", NULL};

/* Which broken 2xx streams are retried: none, any, or only those that had
   sent no text yet (a client that buffers tool-call deltas can retry a cut
   inside a tool call's arguments: nothing reached its caller). The AI SDK
   6 and LangChain JS 1.4 do neither (profiles/: their retry wraps only the
   request, the stream is read after it). */
enum { STREAMS_NO, STREAMS_YES, STREAMS_BEFORE_CONTENT };

typedef struct profile {
  const char *name;
  int max_attempts;
  double base_ms, factor, cap_ms, fraction;
  const char *jitter;      /* none, subtract, full, equal, add */
  const cJSON *schedule;   /* fixed waits in seconds, or NULL */
  const cJSON *retries;    /* the list */
  int x_should_retry;
  int ra_honoured;
  const cJSON *ra_forms;   /* "retry-after-ms", "seconds", "decimal", "date"; NULL = all */
  double ra_cap_ms;        /* < 0: no cap */
  int over_cap, invalid, past, negative; /* RA_* */
  int decimal;             /* RA_*, or -1: waited as asked (absent, as before the key) */
  int combine_max;         /* wait the longer of backoff and Retry-After */
  int streams_retried;     /* STREAMS_* */
  const cJSON *dialect;    /* string, list, or NULL */
  double timeout_ms, deadline_ms; /* < 0: none */
  const char *covers;      /* headers, idle, whole */
  const char *idem;        /* per_call, per_attempt, or NULL (none sent) */
  int idem_given;          /* the profile says (absent: not judged) */
} profile;

static const char *const TOP_KEYS[] = {
    "name", "version", "doc", "dialect", "example", "max_attempts", "backoff", "retries",
    "x_should_retry", "retry_after", "timeout", "timeout_covers", "deadline",
    "streams_retried", "idempotency_key", NULL};
static const char *const BACKOFF_KEYS[] = {"base", "factor", "cap", "jitter", "fraction",
                                           "schedule", NULL};
static const char *const RA_KEYS[] = {"honoured", "forms", "cap", "over_cap", "invalid", "past",
                                      "negative", "decimal", "combine", NULL};
static const char *const RULE_KEYS[] = {"status", "except", "retry_after", NULL};
static const char *const JITTERS[] = {"none", "subtract", "full", "equal", "add", NULL};
static const char *const FORMS[] = {"retry-after-ms", "seconds", "decimal", "date", NULL};
/* "shape" is the old word for both not_json and missing_fields. */
static const char *const KINDS[] = {"connection", "timeout", "body", "stream_error", "shape",
                                    "not_json", "missing_fields", "no_end_marker", NULL};

static int word_in(const char *s, const char *const *set) {
  for (int i = 0; set[i]; i++)
    if (strcmp(s, set[i]) == 0) return i;
  return -1;
}

/* Whether the profile's client reads this Retry-After form (no list: all). */
static int has_form(const profile *p, const char *form) {
  if (p->ra_forms == NULL) return 1;
  const cJSON *e;
  cJSON_ArrayForEach(e, p->ra_forms)
    if (cJSON_IsString(e) && strcmp(e->valuestring, form) == 0) return 1;
  return 0;
}

/* Checks that obj's keys are among allowed; where names the table. */
static int keys_in(rpt__ctx *c, const char *name, const cJSON *obj, const char *const *allowed,
                   const char *where) {
  const cJSON *it;
  cJSON_ArrayForEach(it, obj) {
    if (it->string == NULL || word_in(it->string, allowed) < 0)
      return rpt__bad_value(c, name, "unknown key '%s%s%.40s'", where, where[0] ? "." : "",
                            it->string ? it->string : "?");
  }
  return 0;
}

/* A number >= 0, or false (none: *out = -1); absent gives def. */
static int num_or_false(rpt__ctx *c, const char *name, const cJSON *o, const char *k, double def,
                        double *out, const char *where) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  *out = def;
  if (v == NULL) return 0;
  if (cJSON_IsFalse(v)) {
    *out = -1;
    return 0;
  }
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble))
    return rpt__bad_value(c, name, "%s.%s must be a number >= 0%s", where, k,
                          def < 0 ? " or false" : "");
  *out = v->valuedouble;
  return 0;
}

/* What retry_after.k says a value leads to; absent gives def. "truncate"
   (wait the whole seconds) is a word of `decimal` only. */
static int behaviour(rpt__ctx *c, const char *name, const cJSON *ra, const char *k, int def,
                     int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(ra, k);
  int trunc = strcmp(k, "decimal") == 0;
  *out = def;
  if (v == NULL) return 0;
  int i = cJSON_IsString(v) ? word_in(v->valuestring, BEHAVIOURS) : -1;
  if (i < 0 || (i == RA_TRUNCATE && !trunc))
    return rpt__bad_value(c, name, "retry_after.%s: expected backoff, immediate, stop%s hang%s", k,
                          trunc ? "," : " or", trunc ? " or truncate" : "");
  *out = i;
  return 0;
}

/* A status condition: 429, ">=500" or "500-504". */
static int status_cond(const cJSON *e, int *lo, int *hi) {
  if (cJSON_IsNumber(e)) {
    *lo = *hi = (int)e->valuedouble;
    return 1;
  }
  if (!cJSON_IsString(e)) return 0;
  char tail;
  if (sscanf(e->valuestring, ">=%d%c", lo, &tail) == 1) {
    *hi = 1000;
    return 1;
  }
  if (sscanf(e->valuestring, "%d-%d%c", lo, hi, &tail) == 2) return *lo <= *hi;
  return 0;
}

static int check_rule(rpt__ctx *c, const char *name, const cJSON *e) {
  int lo, hi, rc;
  if (status_cond(e, &lo, &hi)) return 0;
  if (cJSON_IsString(e)) {
    if (word_in(e->valuestring, KINDS) < 0)
      return rpt__bad_value(c, name, "retries: unknown condition '%.40s' (a status, \">=500\", "
                            "\"500-504\", connection, timeout, body, stream_error, not_json, "
                            "missing_fields, shape, no_end_marker)", e->valuestring);
    return 0;
  }
  if (!cJSON_IsObject(e))
    return rpt__bad_value(c, name, "retries: each item is a status, a range, a kind or a rule table");
  if ((rc = keys_in(c, name, e, RULE_KEYS, "retries[]"))) return rc;
  if (!status_cond(cJSON_GetObjectItemCaseSensitive(e, "status"), &lo, &hi))
    return rpt__bad_value(c, name, "retries[].status: a status or a range is required");
  const cJSON *ex = cJSON_GetObjectItemCaseSensitive(e, "except"), *it;
  if (ex && !cJSON_IsArray(ex)) return rpt__bad_value(c, name, "retries[].except: a list of error codes");
  cJSON_ArrayForEach(it, ex) if (!cJSON_IsString(it))
    return rpt__bad_value(c, name, "retries[].except: a list of error codes");
  const cJSON *ra = cJSON_GetObjectItemCaseSensitive(e, "retry_after");
  if (ra && !(cJSON_IsString(ra) && (strcmp(ra->valuestring, "required") == 0 ||
                                     strcmp(ra->valuestring, "any") == 0)))
    return rpt__bad_value(c, name, "retries[].retry_after: \"required\" or \"any\"");
  return 0;
}

static int read_backoff(rpt__ctx *c, const char *name, const cJSON *b, profile *p) {
  int rc;
  p->factor = 2;
  p->jitter = "none";
  p->cap_ms = -1;
  if (b == NULL) {
    if (p->max_attempts > 1) return rpt__bad_value(c, name, "backoff is required when max_attempts > 1");
    return 0;
  }
  if (!cJSON_IsObject(b)) return rpt__bad_value(c, name, "backoff must be a table");
  if ((rc = keys_in(c, name, b, BACKOFF_KEYS, "backoff"))) return rc;
  double v;
  if ((rc = num_or_false(c, name, b, "base", 0, &v, "backoff"))) return rc;
  p->base_ms = v * 1000.0;
  if ((rc = num_or_false(c, name, b, "factor", 2, &p->factor, "backoff"))) return rc;
  if ((rc = num_or_false(c, name, b, "cap", -1, &v, "backoff"))) return rc;
  p->cap_ms = v < 0 ? -1 : v * 1000.0;
  if ((rc = num_or_false(c, name, b, "fraction", 0, &p->fraction, "backoff"))) return rc;
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(b, "jitter");
  if (j) {
    if (!cJSON_IsString(j) || word_in(j->valuestring, JITTERS) < 0)
      return rpt__bad_value(c, name, "backoff.jitter: expected none, subtract, full, equal or add");
    p->jitter = j->valuestring;
  }
  if ((strcmp(p->jitter, "subtract") == 0 || strcmp(p->jitter, "add") == 0) &&
      !cJSON_GetObjectItemCaseSensitive(b, "fraction"))
    return rpt__bad_value(c, name, "backoff.fraction is required with jitter \"%s\"", p->jitter);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(b, "schedule"), *it;
  if (s) {
    if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) == 0)
      return rpt__bad_value(c, name, "backoff.schedule: a list of waits in seconds");
    cJSON_ArrayForEach(it, s) if (!cJSON_IsNumber(it) || it->valuedouble < 0)
      return rpt__bad_value(c, name, "backoff.schedule: a list of waits in seconds");
    p->schedule = s;
  } else if (!cJSON_GetObjectItemCaseSensitive(b, "base")) {
    return rpt__bad_value(c, name, "backoff: give base (with factor, cap) or schedule");
  }
  return 0;
}

static int read_retry_after(rpt__ctx *c, const char *name, const cJSON *ra, profile *p) {
  int rc;
  p->ra_cap_ms = -1;
  if (!cJSON_IsObject(ra)) return rpt__bad_value(c, name, "retry_after must be a table");
  if ((rc = keys_in(c, name, ra, RA_KEYS, "retry_after"))) return rc;
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(ra, "honoured");
  if (!cJSON_IsBool(h)) return rpt__bad_value(c, name, "retry_after.honoured: true or false");
  p->ra_honoured = cJSON_IsTrue(h);
  if (!p->ra_honoured) {
    const cJSON *it;
    cJSON_ArrayForEach(it, ra) if (strcmp(it->string, "honoured") != 0)
      return rpt__bad_value(c, name, "retry_after.%s: only when honoured = true", it->string);
    return 0;
  }
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(ra, "forms"), *it;
  if (f) {
    if (!cJSON_IsArray(f)) return rpt__bad_value(c, name, "retry_after.forms must be a list");
    cJSON_ArrayForEach(it, f) if (!cJSON_IsString(it) || word_in(it->valuestring, FORMS) < 0)
      return rpt__bad_value(c, name, "retry_after.forms: retry-after-ms, seconds, decimal or date");
    p->ra_forms = f;
  }
  double cap;
  if ((rc = num_or_false(c, name, ra, "cap", -1, &cap, "retry_after"))) return rc;
  p->ra_cap_ms = cap < 0 ? -1 : cap * 1000.0;
  if ((rc = behaviour(c, name, ra, "over_cap", RA_BACKOFF, &p->over_cap))) return rc;
  if (cJSON_GetObjectItemCaseSensitive(ra, "over_cap") && p->ra_cap_ms < 0)
    return rpt__bad_value(c, name, "retry_after.over_cap: only with a cap");
  if ((rc = behaviour(c, name, ra, "invalid", RA_BACKOFF, &p->invalid))) return rc;
  if ((rc = behaviour(c, name, ra, "past", RA_BACKOFF, &p->past))) return rc;
  /* absent, a negative number means what `past` says (one key held both) */
  if ((rc = behaviour(c, name, ra, "negative", p->past, &p->negative))) return rc;
  if ((rc = behaviour(c, name, ra, "decimal", -1, &p->decimal))) return rc;
  if (p->decimal >= 0 && has_form(p, "decimal"))
    return rpt__bad_value(c, name, "retry_after.decimal: only when forms lists seconds, not decimal");
  const cJSON *cb = cJSON_GetObjectItemCaseSensitive(ra, "combine");
  if (cb && !(cJSON_IsString(cb) && (strcmp(cb->valuestring, "max") == 0 ||
                                     strcmp(cb->valuestring, "replace") == 0)))
    return rpt__bad_value(c, name, "retry_after.combine: \"replace\" or \"max\"");
  p->combine_max = cb && strcmp(cb->valuestring, "max") == 0;
  return 0;
}

/* A bool key: absent is false. */
static int flag(rpt__ctx *c, const char *name, const cJSON *o, const char *k, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  *out = 0;
  if (v == NULL) return 0;
  if (!cJSON_IsBool(v)) return rpt__bad_value(c, name, "%s: true or false", k);
  *out = cJSON_IsTrue(v);
  return 0;
}

/* streams_retried: true, false (or absent) or "before_content". */
static int streams_flag(rpt__ctx *c, const char *name, const cJSON *o, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "streams_retried");
  *out = STREAMS_NO;
  if (v == NULL) return 0;
  if (cJSON_IsString(v) && strcmp(v->valuestring, "before_content") == 0) {
    *out = STREAMS_BEFORE_CONTENT;
    return 0;
  }
  if (!cJSON_IsBool(v)) return rpt__bad_value(c, name, "streams_retried: true, false or \"before_content\"");
  *out = cJSON_IsTrue(v) ? STREAMS_YES : STREAMS_NO;
  return 0;
}

static int read_profile(rpt__ctx *c, const char *name, const cJSON *val, profile *p) {
  if (!cJSON_IsObject(val)) return rpt__bad_value(c, name, "expected a profile table");
  memset(p, 0, sizeof *p);
  int rc = keys_in(c, name, val, TOP_KEYS, "");
  if (rc) return rc;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(val, "name");
  p->name = cJSON_IsString(v) ? v->valuestring : "the profile";
  v = cJSON_GetObjectItemCaseSensitive(val, "max_attempts");
  if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1000 ||
      v->valuedouble != floor(v->valuedouble))
    return rpt__bad_value(c, name, "max_attempts must be a whole number from 1 to 1000");
  p->max_attempts = (int)v->valuedouble;
  if ((rc = read_backoff(c, name, cJSON_GetObjectItemCaseSensitive(val, "backoff"), p))) return rc;
  p->retries = cJSON_GetObjectItemCaseSensitive(val, "retries");
  /* Lua writes an empty list as {}: no retries at all. */
  int empty = cJSON_IsObject(p->retries) && p->retries->child == NULL;
  if (!cJSON_IsArray(p->retries) && !empty) return rpt__bad_value(c, name, "retries must be a list");
  const cJSON *e;
  cJSON_ArrayForEach(e, p->retries) if ((rc = check_rule(c, name, e))) return rc;
  if ((rc = flag(c, name, val, "x_should_retry", &p->x_should_retry))) return rc;
  if ((rc = streams_flag(c, name, val, &p->streams_retried))) return rc;
  const cJSON *ra = cJSON_GetObjectItemCaseSensitive(val, "retry_after");
  if (ra == NULL) return rpt__bad_value(c, name, "retry_after is required");
  if ((rc = read_retry_after(c, name, ra, p))) return rc;
  static const char *const TEXTS[] = {"name", "version", "doc", "example", NULL};
  for (int i = 0; TEXTS[i]; i++) {
    v = cJSON_GetObjectItemCaseSensitive(val, TEXTS[i]);
    if (v && !cJSON_IsString(v)) return rpt__bad_value(c, name, "%s must be text", TEXTS[i]);
  }
  v = cJSON_GetObjectItemCaseSensitive(val, "dialect");
  if (v && !cJSON_IsString(v) && !cJSON_IsArray(v))
    return rpt__bad_value(c, name, "dialect: \"openai\", \"anthropic\", \"responses\", "
                                   "\"gemini\" or a list");
  p->dialect = v;
  double t;
  if ((rc = num_or_false(c, name, val, "timeout", -1, &t, "profile"))) return rc;
  p->timeout_ms = t < 0 ? -1 : t * 1000.0;
  if ((rc = num_or_false(c, name, val, "deadline", -1, &t, "profile"))) return rc;
  p->deadline_ms = t < 0 ? -1 : t * 1000.0;
  v = cJSON_GetObjectItemCaseSensitive(val, "timeout_covers");
  static const char *const COVERS[] = {"headers", "idle", "whole", NULL};
  if (v && !(cJSON_IsString(v) && word_in(v->valuestring, COVERS) >= 0))
    return rpt__bad_value(c, name, "timeout_covers: headers, idle or whole");
  p->covers = v ? v->valuestring : "whole";
  v = cJSON_GetObjectItemCaseSensitive(val, "idempotency_key");
  static const char *const IDEM[] = {"per_call", "per_attempt", NULL};
  if (v && !cJSON_IsFalse(v) && !(cJSON_IsString(v) && word_in(v->valuestring, IDEM) >= 0))
    return rpt__bad_value(c, name, "idempotency_key: false, \"per_call\" or \"per_attempt\"");
  p->idem = v && cJSON_IsString(v) ? v->valuestring : NULL;
  p->idem_given = v != NULL;
  return 0;
}

/* 1 when a profile's word (openai, anthropic, responses, gemini) names the
   trace's API (openai-chat, openai-responses, ...; older traces: openai). */
static int same_api(const char *word, const char *d) {
  if (strcmp(word, d) == 0) return 1;
  if (strcmp(word, "openai") == 0) return strcmp(d, "openai-chat") == 0;
  if (strcmp(word, "responses") == 0) return strcmp(d, "openai-responses") == 0;
  return 0;
}

/* 1 when the profile names this dialect (or names none); the effect
   endpoint is no API: any client can post to it. */
static int speaks(const profile *p, const char *d) {
  if (p->dialect == NULL || d == NULL || strcmp(d, "effect") == 0) return 1;
  if (cJSON_IsString(p->dialect)) return same_api(p->dialect->valuestring, d);
  const cJSON *e;
  cJSON_ArrayForEach(e, p->dialect) if (cJSON_IsString(e) && same_api(e->valuestring, d)) return 1;
  return 0;
}

/*
 * 1 when an arrival is a request the profiled SDK made, the only kind a
 * profile judges: not a GET (a model list, a health probe), not a path no
 * provider serves (judged by `served`), and not a call to the effect
 * endpoint (dialect "effect"): that is the client's own tool executor, whose
 * keys, attempts and timeouts are the client's, not the SDK's. Except when
 * the scenario asks for the effect call itself (client.call = "effect",
 * effect_call): then it is the one call the client was asked to make, and a
 * client makes it through its SDK (examples/clients: `client.post`).
 */
static int sdk_request(const rpt__arrival *a, int effect_call) {
  if (a->unserved || (a->method && strcmp(a->method, "GET") == 0)) return 0;
  return a->dialect == NULL || strcmp(a->dialect, "effect") != 0 || effect_call;
}

/* 1 when the scenario's client table asks for the effect call itself. */
static int asks_effect_call(const rpt__ctx *c) {
  const cJSON *call = cJSON_GetObjectItemCaseSensitive(c->client, "call");
  return cJSON_IsString(call) && strcmp(call->valuestring, "effect") == 0;
}

/*
 * The promises that are not about retries: the dialect it calls, its
 * Idempotency-Key habit, its attempt timeout and its deadline. Returns 1
 * with a verdict added when one is broken, 0 when all hold, <0 on error.
 */
static int other_promises(rpt__ctx *c, const char *name, const profile *p) {
  const rpt_trace *tr = c->tr;
  int fx = asks_effect_call(c);
  char key[64];
  for (int i = 0; i < tr->narr; i++) {
    const rpt__arrival *a = &tr->arr[i];
    if (!sdk_request(a, fx)) continue;
    if (!speaks(p, a->dialect)) {
      int rc = rpt__verdict_add(c, name, RPT_FAIL, "attempt %d of request %s called the %s "
                                "dialect, which %s does not speak", a->attempt,
                                rpt__short_key(a->key, key, sizeof key), a->dialect, p->name);
      return rc ? rc : 1;
    }
    int keyed = a->key && strncmp(a->key, "idem:", 5) == 0;
    if (p->idem_given && p->idem == NULL && keyed) {
      int rc = rpt__verdict_add(c, name, RPT_FAIL, "request %s sent an Idempotency-Key; %s sends "
                                "none", rpt__short_key(a->key, key, sizeof key), p->name);
      return rc ? rc : 1;
    }
    if (p->idem && !keyed) {
      int rc = rpt__verdict_add(c, name, RPT_FAIL, "request %s came without an Idempotency-Key; "
                                "%s sends one %s", rpt__short_key(a->key, key, sizeof key),
                                p->name, p->idem);
      return rc ? rc : 1;
    }
    /* An attempt the client gave up on itself, with no status line yet. */
    if (p->timeout_ms >= 0 && a->has_end && a->status == 0 && a->how &&
        strcmp(a->how, "client_abort") == 0 && strcmp(p->covers, "idle") != 0) {
      double took = a->t_end - a->t_arrive, allow = p->timeout_ms * c->scale * 1.1 + c->tol + 250;
      if (took > allow) {
        int rc = rpt__verdict_add(c, name, RPT_FAIL, "attempt %d of request %s waited %.0f ms "
                                  "for an answer; %s times out after %.0f ms", a->attempt,
                                  rpt__short_key(a->key, key, sizeof key), took, p->name,
                                  p->timeout_ms * c->scale);
        return rc ? rc : 1;
      }
    }
  }
  if (p->deadline_ms >= 0)
    for (int g = 0; g < tr->ngroups; g++) {
      const rpt__group *gr = &tr->groups[g];
      const rpt__arrival *f = NULL, *l = NULL;
      for (int k = 0; k < gr->n; k++) {
        const rpt__arrival *a = &tr->arr[gr->idx[k]];
        if (!sdk_request(a, fx)) continue;
        if (f == NULL) f = a;
        l = a;
      }
      if (f == NULL) continue;
      double span = (l->has_end ? l->t_end : tr->t_last) - f->t_arrive;
      if (span > p->deadline_ms * c->scale * 1.05 + c->tol + 250) {
        int rc = rpt__verdict_add(c, name, RPT_FAIL, "request %s took %.0f ms in all; %s stops "
                                  "after %.0f ms", rpt__short_key(gr->key, key, sizeof key),
                                  span, p->name, p->deadline_ms * c->scale);
        return rc ? rc : 1;
      }
    }
  return 0;
}

/* What kind of failure an attempt was, in the profile's words; NULL = ok. */
static const char *failure(const rpt__arrival *a, char *buf, size_t n) {
  const char *how = a->how ? a->how : "open";
  if (!a->has_end || strcmp(how, "client_abort") == 0 || strcmp(how, "shutdown") == 0)
    return "timeout";
  if (strcmp(how, "dropped") == 0 || strcmp(how, "reset") == 0)
    /* a stream broken after it began; a client that asked for no stream
       read it as a body that broke off (exec once told a streamed tools
       call not to stream, and LangChain's retry of that read as a
       stream retried) */
    return a->status >= 200 && a->status < 300 && a->chunks > 0 ? (a->stream ? "stream_error" : "body")
                                                                 : "connection";
  if (strcmp(how, "early_close") == 0) return "body";
  if (a->status >= 200 && a->status < 300) {
    /* a body cut short does not parse; a garbage body may be JSON that
       lacks the fields of an answer (the server says: body_json) */
    if (a->step && strcmp(a->step, "truncate") == 0) return "not_json";
    if (a->step && strcmp(a->step, "garbage") == 0) return a->body_json ? "missing_fields" : "not_json";
    /* a 2xx stream that ended in an in-band error event broke like a cut
       one (before, it read as "ok" and any retry of it failed the verdict) */
    if (a->error_event) return "stream_error";
    if (a->no_end_marker) return "no_end_marker";
    return NULL;
  }
  snprintf(buf, n, "%d", a->status);
  return buf;
}

/* ------------------------------------------------------- Retry-After */

/* none read; a wait; unparsable; a date now or past; a number <= 0; a
   decimal the client does not read as one */
enum { RAK_NONE, RAK_VALID, RAK_INVALID, RAK_PAST, RAK_NEGATIVE, RAK_DECIMAL };

/* A whole number or decimal, nothing else: its value in *v. */
static int numeric(const char *s, double *v) {
  char *end;
  *v = strtod(s, &end);
  return end != s && *end == '\0' && isfinite(*v);
}

/*
 * A number of seconds in Retry-After: a wait (*ms), a number <= 0, or a
 * decimal the client reads as such, truncates (curl: 2.5 is 2 s) or
 * treats as `decimal` says; NONE when it reads no such form.
 */
static int ra_seconds(const profile *p, double v, double *ms) {
  int dec = v != floor(v), reads_dec = has_form(p, "decimal");
  if (!has_form(p, "seconds") && !reads_dec) return RAK_NONE;
  if (v <= 0) return RAK_NEGATIVE;
  *ms = v * 1000.0;
  if (!dec || reads_dec || p->decimal < 0) return RAK_VALID;
  if (p->decimal != RA_TRUNCATE) return RAK_DECIMAL;
  *ms = floor(v) * 1000.0;
  return *ms > 0 ? RAK_VALID : RAK_NEGATIVE; /* 0.75 is a zero */
}

/*
 * What the response's Retry-After means to this client: none it reads,
 * a usable wait (*ms), an unparseable value, a past date, a number <= 0,
 * or a decimal not read as one. The forms are tried in the profile's order.
 */
static int ra_kind(const profile *p, const rpt__arrival *a, double *ms) {
  double v;
  *ms = 0;
  if (!p->ra_honoured) return RAK_NONE;
  if (a->ra_ms_header && has_form(p, "retry-after-ms") && numeric(a->ra_ms_header, &v)) {
    *ms = v;
    return v > 0 ? RAK_VALID : RAK_NEGATIVE;
  }
  if (a->ra_header) {
    if (numeric(a->ra_header, &v)) return ra_seconds(p, v, ms);
    if (!has_form(p, "date")) return RAK_NONE;
    /* An HTTP-date: the server recorded what it meant (negative = past). */
    if (strchr(a->ra_header, ',') && a->retry_after_ms != -1) {
      *ms = a->retry_after_ms;
      return *ms > 0 ? RAK_VALID : RAK_PAST;
    }
    return RAK_INVALID;
  }
  if (a->ra_ms_header) return has_form(p, "retry-after-ms") ? RAK_INVALID : RAK_NONE;
  if (a->retry_after_ms >= 0) { /* the trace named no header: trust it */
    *ms = a->retry_after_ms;
    return *ms > 0 ? RAK_VALID : RAK_PAST;
  }
  return RAK_NONE;
}

/* What the client does after this response: RA_BACKOFF, RA_IMMEDIATE,
   RA_STOP or RA_HANG, or -1 = wait the Retry-After (*ra_ms). */
static int ra_plan(const profile *p, const rpt__arrival *a, double *ra_ms) {
  switch (ra_kind(p, a, ra_ms)) {
  case RAK_VALID:
    if (p->ra_cap_ms >= 0 && *ra_ms > p->ra_cap_ms) return p->over_cap;
    return -1;
  case RAK_INVALID: return p->invalid;
  case RAK_PAST: return p->past;
  case RAK_NEGATIVE: return p->negative;
  case RAK_DECIMAL: return p->decimal;
  default: return RA_BACKOFF;
  }
}

/* ----------------------------------------------------------- retries */

static int code_in(const cJSON *list, const char *code) {
  const cJSON *e;
  if (code == NULL) return 0;
  cJSON_ArrayForEach(e, list) if (cJSON_IsString(e) && strcmp(e->valuestring, code) == 0) return 1;
  return 0;
}

/* 1 if the profile retries this failure (Retry-After plans aside). */
static int retries(const profile *p, const rpt__arrival *a, const char *f) {
  if (p->x_should_retry && a->should_retry) return strcmp(a->should_retry, "true") == 0;
  if (strcmp(f, "stream_error") == 0) {
    if (p->streams_retried == STREAMS_NO) return 0;
    if (p->streams_retried == STREAMS_BEFORE_CONTENT && a->text && a->text[0]) return 0;
  }
  /* "shape" covers both ways a 2xx body can fail to be an answer */
  int shape = strcmp(f, "not_json") == 0 || strcmp(f, "missing_fields") == 0;
  int is_status = f[0] >= '0' && f[0] <= '9', lo, hi;
  const cJSON *e;
  cJSON_ArrayForEach(e, p->retries) {
    if (cJSON_IsObject(e)) {
      if (!is_status || !status_cond(cJSON_GetObjectItemCaseSensitive(e, "status"), &lo, &hi) ||
          a->status < lo || a->status > hi)
        continue;
      if (code_in(cJSON_GetObjectItemCaseSensitive(e, "except"), a->code)) return 0;
      const cJSON *ra = cJSON_GetObjectItemCaseSensitive(e, "retry_after");
      double ms;
      /* "required": a Retry-After in a form the client reads */
      if (ra && strcmp(ra->valuestring, "required") == 0 && ra_kind(p, a, &ms) == RAK_NONE)
        return 0;
      return 1;
    }
    if (status_cond(e, &lo, &hi)) {
      if (is_status && a->status >= lo && a->status <= hi) return 1;
    } else if (cJSON_IsString(e) && (strcmp(e->valuestring, f) == 0 ||
                                     (shape && strcmp(e->valuestring, "shape") == 0))) {
      return 1;
    }
  }
  return 0;
}

/* " after text" / " before any text" for a broken stream judged by
   streams_retried = "before_content" (what decided it), else "". */
static const char *text_note(const profile *p, const rpt__arrival *a, const char *f) {
  if (p->streams_retried != STREAMS_BEFORE_CONTENT || strcmp(f, "stream_error") != 0) return "";
  return a->text && a->text[0] ? " after text" : " before any text";
}

/* The least and most backoff the profile allows before retry number n (1-based). */
static void backoff_window(const profile *p, int n, double *lo, double *hi) {
  double b;
  if (p->schedule) {
    int len = cJSON_GetArraySize(p->schedule);
    b = cJSON_GetArrayItem(p->schedule, n <= len ? n - 1 : len - 1)->valuedouble * 1000.0;
  } else {
    b = p->base_ms * pow(p->factor, n - 1);
    if (p->cap_ms >= 0 && b > p->cap_ms) b = p->cap_ms;
  }
  *hi = b;
  if (strcmp(p->jitter, "full") == 0) *lo = 0;
  else if (strcmp(p->jitter, "equal") == 0) *lo = b / 2;
  else if (strcmp(p->jitter, "subtract") == 0) *lo = b * (1 - p->fraction);
  else if (strcmp(p->jitter, "add") == 0) {
    *lo = b;
    *hi = b * (1 + p->fraction);
  } else *lo = b;
}

/* The window for the gap before retry n after prev; what it is based on in *why. */
static void wait_window(const profile *p, const rpt__arrival *prev, int n, double *lo, double *hi,
                        const char **why) {
  double ra;
  int plan = ra_plan(p, prev, &ra);
  backoff_window(p, n, lo, hi);
  *why = "backoff";
  if (plan == -1) {
    if (p->combine_max) {
      if (ra > *lo) *lo = ra;
      if (ra > *hi) *hi = ra;
      *why = "the longer of backoff and Retry-After";
    } else {
      *lo = *hi = ra;
      *why = "Retry-After";
    }
  } else if (plan == RA_IMMEDIATE) {
    *lo = *hi = 0;
    *why = "an unusable Retry-After: at once";
  }
}

/*
 * profile = { ...a client profile as JSON... }: see the file comment. One
 * verdict, failing on the first request that breaks a promise; n/a when no
 * attempt failed (no retry decision was asked of the client).
 */
int rpt__v_profile(rpt__ctx *c, const char *name, const cJSON *val) {
  profile p;
  int rc = read_profile(c, name, val, &p);
  if (rc || c->tr == NULL) return rc;
  const rpt_trace *tr = c->tr;
  int killed = tr->ncli > 0 && tr->cli[0].timed_out, fx = asks_effect_call(c);
  char fb[16], key[64], note[200] = "";
  int checked = 0, failures = 0;
  for (int g = 0; g < tr->ngroups; g++) {
    const rpt__group *gr = &tr->groups[g];
    const rpt__arrival *prev = NULL;
    int n = 0;
    rpt__short_key(gr->key, key, sizeof key);
    for (int k = 0; k < gr->n; k++) {
      const rpt__arrival *a = &tr->arr[gr->idx[k]];
      if (!sdk_request(a, fx)) continue;
      n++;
      if (n > p.max_attempts)
        return rpt__verdict_add(c, name, RPT_FAIL, "request %s: attempt %d, but %s makes at most %d",
                                key, n, p.name, p.max_attempts);
      if (prev != NULL) {
        const char *f = failure(prev, fb, sizeof fb);
        double ra;
        int plan = f ? ra_plan(&p, prev, &ra) : RA_BACKOFF;
        if (f == NULL || !retries(&p, prev, f) || plan == RA_STOP || plan == RA_HANG)
          return rpt__verdict_add(c, name, RPT_FAIL,
                                  "request %s: retried after attempt %d ended %s%s%s, which %s does "
                                  "not retry",
                                  key, n - 1, f ? f : "ok", f ? text_note(&p, prev, f) : "",
                                  plan == RA_STOP || plan == RA_HANG ? " with its Retry-After" : "",
                                  p.name);
        double gap = a->t_arrive - (prev->has_end ? prev->t_end : prev->t_arrive);
        double lo, hi;
        const char *why;
        wait_window(&p, prev, n - 1, &lo, &hi, &why);
        lo *= c->scale;
        hi *= c->scale;
        if (gap < lo - c->tol)
          return rpt__verdict_add(c, name, RPT_FAIL,
                                  "request %s: attempt %d came %.0f ms after attempt %d; %s waits at "
                                  "least %.0f ms (%s)",
                                  key, n, gap, n - 1, p.name, lo, why);
        /* Late is allowed some slack: a loaded machine wakes up late. */
        if (gap > hi * 1.5 + c->tol + 250.0)
          return rpt__verdict_add(c, name, RPT_FAIL,
                                  "request %s: attempt %d came %.0f ms after attempt %d; %s waits at "
                                  "most %.0f ms (%s)",
                                  key, n, gap, n - 1, p.name, hi, why);
      }
      if (failure(a, fb, sizeof fb)) failures++;
      prev = a;
    }
    if (prev == NULL) continue;
    checked++;
    const char *f = failure(prev, fb, sizeof fb);
    double ra = 0;
    int plan = f ? ra_plan(&p, prev, &ra) : RA_BACKOFF;
    if (f == NULL || !retries(&p, prev, f) || n >= p.max_attempts || plan == RA_STOP ||
        plan == RA_HANG)
      continue;
    if (killed) {
      double waited = tr->t_last - (prev->has_end ? prev->t_end : prev->t_arrive);
      snprintf(note, sizeof note, "; killed by --timeout %.0f ms after attempt %d ended %s, %s",
               waited, n, f,
               plan == -1 ? "while waiting out its Retry-After as promised" : "before its retry");
      continue;
    }
    if (tr->has_done && !tr->cut_line)
      return rpt__verdict_add(c, name, RPT_FAIL,
                              "request %s: gave up after attempt %d ended %s%s, which %s retries "
                              "(up to %d attempts)",
                              key, n, f, text_note(&p, prev, f), p.name, p.max_attempts);
  }
  if (checked == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no request reached the scenario: no promise to judge");
  rc = other_promises(c, name, &p);
  if (rc) return rc < 0 ? rc : 0;
  if (failures == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no attempt failed: no retry decision to judge "
                            "(%d request%s)", checked, checked == 1 ? "" : "s");
  return rpt__verdict_add(c, name, RPT_PASS, "%d request%s, each as %s promises%s", checked,
                          checked == 1 ? "" : "s", p.name, note);
}

/* Validates a client profile the way the verdict reads it; see reports.h. */
int rpt_profile_check(const char *profile_json, char err[RPT_ERRLEN]) {
  if (profile_json == NULL || err == NULL) return RPT_EINVAL;
  err[0] = '\0';
  int oom = 0;
  cJSON *v = rpt__json_parse(profile_json, strlen(profile_json), &oom);
  if (v == NULL) {
    snprintf(err, RPT_ERRLEN, oom ? "out of memory" : "profile: not valid JSON");
    return oom ? RPT_ENOMEM : RPT_EEXPECT;
  }
  rpt__ctx c = {.tr = NULL, .scale = 1, .err = err};
  profile p;
  int rc = read_profile(&c, "profile", v, &p);
  cJSON_Delete(v);
  if (rc == RPT_EEXPECT && strncmp(err, "expect.", 7) == 0) memmove(err, err + 7, strlen(err + 7) + 1);
  return rc;
}
