/*
 * policy_facts.c - a client profile (as sim_profile_load gives it, JSON) read
 * as a list of facts with human names and values, and two such lists
 * compared fact by fact (`fusebox diff-policy`, docs/learn.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/policy_facts.h"

/* A key the profile may leave out, and what leaving it out means. */
typedef struct fact_key {
  const char *path;   /* "backoff.cap" */
  const char *label;  /* what a reviewer reads */
  const char *dflt;   /* the value when absent (profiles/README.md), NULL: "unset" */
} fact_key;

static const fact_key KEYS[] = {
    {"max_attempts", "attempts per call", NULL},
    {"backoff.base", "backoff base (s)", NULL},
    {"backoff.factor", "backoff growth", "2"},
    {"backoff.cap", "backoff cap (s)", "none"},
    {"backoff.jitter", "backoff jitter", "none"},
    {"backoff.fraction", "jitter fraction", NULL},
    {"backoff.schedule", "backoff schedule (s)", NULL},
    {"x_should_retry", "x-should-retry obeyed", "false"},
    {"retry_after.honoured", "Retry-After honoured", NULL},
    {"retry_after.forms", "Retry-After forms read", NULL},
    {"retry_after.invalid", "unparsable Retry-After", "backoff"},
    {"retry_after.negative", "zero or negative Retry-After", "backoff"},
    {"retry_after.past", "past Retry-After date", "backoff"},
    {"retry_after.decimal", "decimal Retry-After", "read"},
    {"retry_after.combine", "Retry-After and backoff", "replace"},
    {"timeout", "attempt timeout (s)", "none"},
    {"timeout_covers", "timeout covers", NULL},
    {"deadline", "call deadline (s)", "none"},
    {"streams_retried", "broken stream retried", "false"},
    {"idempotency_key", "Idempotency-Key", "false"},
    {"dialect", "API called", NULL},
};

/* What a Retry-After outcome word means. */
static const char *outcome_words(const char *w) {
  if (strcmp(w, "backoff") == 0) return "falls back to backoff";
  if (strcmp(w, "immediate") == 0) return "retried at once";
  if (strcmp(w, "stop") == 0) return "gives up";
  if (strcmp(w, "hang") == 0) return "hangs";
  if (strcmp(w, "truncate") == 0) return "its whole seconds waited";
  if (strcmp(w, "read") == 0) return "waited as asked";
  return w;
}

/* What a streams_retried value means. */
static const char *stream_words(const char *w) {
  if (strcmp(w, "true") == 0) return "retried";
  if (strcmp(w, "false") == 0) return "not retried";
  if (strcmp(w, "before_content") == 0) return "retried only before any text";
  return w;
}

static const cJSON *at_path(const cJSON *root, const char *path) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", path);
  const cJSON *node = root;
  for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && node; k = strtok_r(NULL, ".", &save))
    node = cJSON_GetObjectItemCaseSensitive(node, k);
  return node;
}

/* One JSON value as a short word: false is "none" for a number key. */
static void render(const cJSON *v, char *out, size_t n) {
  if (cJSON_IsNumber(v)) {
    snprintf(out, n, "%.10g", v->valuedouble);
  } else if (cJSON_IsString(v)) {
    snprintf(out, n, "%s", v->valuestring);
  } else if (cJSON_IsBool(v)) {
    snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
  } else if (cJSON_IsArray(v)) {
    size_t used = 0;
    out[0] = '\0';
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
      char one[256];
      render(e, one, sizeof one);
      int w = snprintf(out + used, n - used, "%s%s", used ? ", " : "", one);
      if (w < 0 || (size_t)w >= n - used) break;
      used += (size_t)w;
    }
  } else {
    char *t = cJSON_PrintUnformatted(v);
    snprintf(out, n, "%s", t ? t : "?");
    free(t);
  }
}

static int fact_add(policy_facts *f, const char *key, const char *label, const char *value) {
  if (f->n == POLICY_FACTS_MAX) return -1;
  policy_fact *p = &f->fact[f->n++];
  snprintf(p->key, sizeof p->key, "%s", key);
  snprintf(p->label, sizeof p->label, "%s", label);
  snprintf(p->value, sizeof p->value, "%s", value);
  return 0;
}

/* "false" where a duration is expected means none. */
static void none_for_false(const char *path, char *v) {
  int duration = strstr(path, "cap") || strcmp(path, "timeout") == 0 || strcmp(path, "deadline") == 0;
  if (duration && strcmp(v, "false") == 0) strcpy(v, "none");
}

/* The statuses a retry policy is judged on (docs/learn.md). */
static const int STATUSES[] = {400, 401, 403, 404, 408, 409, 410, 413, 422, 429,
                               451, 500, 501, 502, 503, 504, 529};
static const char *const KINDS[] = {"connection", "timeout", "body", "stream_error", "not_json",
                                    "missing_fields", "no_end_marker"};

/* 1 when a retries word names kind: "shape" is the old word for both. */
static int names_kind(const char *word, const char *kind) {
  if (strcmp(word, kind) == 0) return 1;
  return strcmp(word, "shape") == 0 &&
         (strcmp(kind, "not_json") == 0 || strcmp(kind, "missing_fields") == 0);
}

/* 1 when a retries entry (429, ">=500", "500-504") covers status. */
static int covers(const cJSON *e, int status) {
  if (cJSON_IsNumber(e)) return (int)e->valuedouble == status;
  if (!cJSON_IsString(e)) return 0;
  int lo, hi;
  if (sscanf(e->valuestring, ">=%d", &lo) == 1) return status >= lo;
  if (sscanf(e->valuestring, "%d-%d", &lo, &hi) == 2) return status >= lo && status <= hi;
  if (sscanf(e->valuestring, "%d", &lo) == 1) return status == lo;
  return 0;
}

/* Whether status is retried, and on which conditions (a rule table). */
static void retried_status(const cJSON *retries, int status, char *out, size_t n) {
  snprintf(out, n, "not retried");
  const cJSON *e;
  cJSON_ArrayForEach(e, retries) {
    if (covers(e, status)) {
      snprintf(out, n, "retried");
      return;
    }
    if (cJSON_IsObject(e) && covers(cJSON_GetObjectItemCaseSensitive(e, "status"), status)) {
      const cJSON *ex = cJSON_GetObjectItemCaseSensitive(e, "except");
      const cJSON *ra = cJSON_GetObjectItemCaseSensitive(e, "retry_after");
      char exs[128] = "";
      if (ex) render(ex, exs, sizeof exs);
      snprintf(out, n, "retried%s%s%s", exs[0] ? " unless " : "", exs,
               cJSON_IsString(ra) && strcmp(ra->valuestring, "required") == 0
                   ? ", only with a Retry-After" : "");
      return;
    }
  }
}

/* Sets backoff.KEY to a number or a string (the one not NULL). */
static void set_backoff(cJSON *b, const char *key, double num, const char *str) {
  cJSON *v = str ? cJSON_CreateString(str) : cJSON_CreateNumber(num);
  if (v && !cJSON_ReplaceItemInObjectCaseSensitive(b, key, v) && !cJSON_AddItemToObject(b, key, v))
    cJSON_Delete(v);
}

/* One wait window, one spelling: [b, b(1 + f)] ("add") is the subtract
   jitter of base b(1 + f) with f / (1 + f) off, "equal" is subtract 0.5,
   and subtract 1 is "full"; so a learned 2 s "up to 50 % off" and a
   written 1 s "plus up to 100 %" are the same backoff. */
static void backoff_canonical(cJSON *root) {
  cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "backoff");
  const cJSON *j = b ? cJSON_GetObjectItemCaseSensitive(b, "jitter") : NULL;
  const cJSON *base = b ? cJSON_GetObjectItemCaseSensitive(b, "base") : NULL;
  const cJSON *fr = b ? cJSON_GetObjectItemCaseSensitive(b, "fraction") : NULL;
  if (!cJSON_IsString(j)) return;
  double f = cJSON_IsNumber(fr) ? fr->valuedouble : 0;
  if (strcmp(j->valuestring, "add") == 0 && cJSON_IsNumber(base) && f > 0) {
    double bb = base->valuedouble * (1 + f);
    set_backoff(b, "base", bb, NULL);
    set_backoff(b, "fraction", f / (1 + f), NULL);
    set_backoff(b, "jitter", 0, "subtract");
  } else if (strcmp(j->valuestring, "equal") == 0) {
    set_backoff(b, "fraction", 0.5, NULL);
    set_backoff(b, "jitter", 0, "subtract");
  } else if (strcmp(j->valuestring, "subtract") == 0 && f >= 1) {
    set_backoff(b, "jitter", 0, "full");
  }
}

/* Sets retry_after.KEY to the string v. */
static void set_ra(cJSON *ra, const char *key, const char *v) {
  cJSON *s = cJSON_CreateString(v);
  if (s && !cJSON_ReplaceItemInObjectCaseSensitive(ra, key, s) && !cJSON_AddItemToObject(ra, key, s))
    cJSON_Delete(s);
}

/* One spelling of the Retry-After facts: a negative number follows `past`
   when the profile does not say (profiles/README.md), and a decimal is
   its own fact, "read" whether the forms list it or the profile is older
   than the key; so "decimal" leaves the forms. */
static void ra_canonical(cJSON *root) {
  cJSON *ra = cJSON_GetObjectItemCaseSensitive(root, "retry_after");
  if (!cJSON_IsObject(ra)) return;
  const cJSON *past = cJSON_GetObjectItemCaseSensitive(ra, "past");
  if (!cJSON_GetObjectItemCaseSensitive(ra, "negative"))
    set_ra(ra, "negative", cJSON_IsString(past) ? past->valuestring : "backoff");
  cJSON *forms = cJSON_GetObjectItemCaseSensitive(ra, "forms"), *e;
  if (!cJSON_IsArray(forms)) return;
  int sec = 0, dec = -1, i = 0;
  cJSON_ArrayForEach(e, forms) {
    if (cJSON_IsString(e) && strcmp(e->valuestring, "seconds") == 0) sec = 1;
    if (cJSON_IsString(e) && strcmp(e->valuestring, "decimal") == 0) dec = i;
    i++;
  }
  if (dec >= 0 && sec) {
    cJSON_DeleteItemFromArray(forms, dec);
  } else if (dec >= 0) { /* a client that reads decimals reads whole seconds too */
    cJSON *w = cJSON_CreateString("seconds");
    if (w && !cJSON_ReplaceItemInArray(forms, dec, w)) cJSON_Delete(w);
  } else if (!sec && !cJSON_GetObjectItemCaseSensitive(ra, "decimal")) {
    set_ra(ra, "decimal", "backoff"); /* no number of seconds read at all */
  }
}

/* The window of the first backoff wait, from the canonical backoff. */
static void first_window(const cJSON *root, policy_facts *f) {
  const cJSON *base = at_path(root, "backoff.base"), *j = at_path(root, "backoff.jitter");
  const cJSON *fr = at_path(root, "backoff.fraction");
  f->wait_lo = f->wait_hi = -1;
  if (!cJSON_IsNumber(base)) return;
  f->wait_hi = base->valuedouble;
  const char *jit = cJSON_IsString(j) ? j->valuestring : "none";
  double frac = cJSON_IsNumber(fr) ? fr->valuedouble : 0;
  f->wait_lo = strcmp(jit, "full") == 0 ? 0
               : strcmp(jit, "subtract") == 0 ? f->wait_hi * (1 - frac) : f->wait_hi;
}

int policy_facts_read(const char *profile_json, policy_facts *f) {
  memset(f, 0, sizeof *f);
  cJSON *root = cJSON_Parse(profile_json);
  if (root == NULL) return -1;
  backoff_canonical(root);
  ra_canonical(root);
  first_window(root, f);
  int honoured = cJSON_IsTrue(at_path(root, "retry_after.honoured"));
  int retries_at_all = 1;
  const cJSON *ma = at_path(root, "max_attempts");
  if (cJSON_IsNumber(ma) && ma->valuedouble <= 1) retries_at_all = 0;
  for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
    const fact_key *k = &KEYS[i];
    if (strncmp(k->path, "backoff.", 8) == 0 && !retries_at_all) continue;
    if (strncmp(k->path, "retry_after.", 12) == 0 && strcmp(k->path, "retry_after.honoured") != 0 &&
        !honoured)
      continue;
    const cJSON *jit = at_path(root, "backoff.jitter");
    int fraction_used = cJSON_IsString(jit) && (strcmp(jit->valuestring, "subtract") == 0 ||
                                                strcmp(jit->valuestring, "add") == 0);
    if (strcmp(k->path, "backoff.fraction") == 0 && !fraction_used) continue;
    char v[POLICY_VALUE_LEN];
    const cJSON *node = at_path(root, k->path);
    if (node) render(node, v, sizeof v);
    else snprintf(v, sizeof v, "%s", k->dflt ? k->dflt : "unset");
    none_for_false(k->path, v);
    if (strncmp(k->path, "retry_after.", 12) == 0 && strcmp(k->path, "retry_after.honoured") != 0 &&
        strcmp(k->path, "retry_after.forms") != 0 && strcmp(k->path, "retry_after.combine") != 0)
      snprintf(v, sizeof v, "%s", outcome_words(v));
    if (strcmp(k->path, "streams_retried") == 0) snprintf(v, sizeof v, "%s", stream_words(v));
    if (fact_add(f, k->path, k->label, v) != 0) break;
  }
  /* the Retry-After cap and what a longer value does are one fact, judged
     at a value (policy_facts_diff): keep both parts */
  if (honoured) {
    const cJSON *cap = at_path(root, "retry_after.cap");
    const cJSON *over = at_path(root, "retry_after.over_cap");
    f->ra_cap = cJSON_IsNumber(cap) ? cap->valuedouble : -1;
    snprintf(f->ra_over, sizeof f->ra_over, "%s", cJSON_IsString(over) ? over->valuestring : "backoff");
  } else {
    f->ra_cap = -2; /* not honoured at all */
  }
  /* each status that matters and each kind of failure is its own fact, so
     ">=500" and "500-599" are the same policy */
  const cJSON *retries = at_path(root, "retries");
  for (size_t i = 0; i < sizeof STATUSES / sizeof STATUSES[0]; i++) {
    char v[POLICY_VALUE_LEN], key[32], label[48];
    retried_status(retries, STATUSES[i], v, sizeof v);
    snprintf(key, sizeof key, "retries[%d]", STATUSES[i]);
    snprintf(label, sizeof label, "status %d", STATUSES[i]);
    if (fact_add(f, key, label, v) != 0) break;
  }
  for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++) {
    char key[48], label[64];
    int on = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, retries) on |= cJSON_IsString(e) && names_kind(e->valuestring, KINDS[i]);
    snprintf(key, sizeof key, "retries[%s]", KINDS[i]);
    snprintf(label, sizeof label, "failure '%s'", KINDS[i]);
    if (fact_add(f, key, label, on ? "retried" : "not retried") != 0) break;
  }
  cJSON_Delete(root);
  return 0;
}

static const policy_fact *find(const policy_facts *f, const char *key) {
  for (int i = 0; i < f->n; i++)
    if (strcmp(f->fact[i].key, key) == 0) return &f->fact[i];
  return NULL;
}

static int same_num(double x, double y, double tol) {
  return fabs(x - y) <= tol * fmax(fabs(x), fabs(y));
}

/* Both numbers within tol (relative) of each other. */
static int same_value(const char *a, const char *b, double tol) {
  if (strcmp(a, b) == 0) return 1;
  char *ea, *eb;
  double x = strtod(a, &ea), y = strtod(b, &eb);
  if (*a == '\0' || *b == '\0' || *ea != '\0' || *eb != '\0') return 0;
  return fabs(x - y) <= tol * fmax(fabs(x), fabs(y));
}

/* What a profile does with a Retry-After just over limit seconds. */
static const char *over_limit(const policy_facts *f, double limit) {
  if (f->ra_cap == -2) return "not read";
  if (f->ra_cap < 0 || f->ra_cap > limit) return "slept as asked";
  return outcome_words(f->ra_over);
}

int policy_facts_diff(const policy_facts *a, const policy_facts *b, double tol,
                      void (*emit)(void *ctx, const char *line), void *ctx) {
  int changed = 0;
  char line[POLICY_VALUE_LEN * 2 + POLICY_LABEL_LEN + 16];
  /* a fact on one side only is not applicable on the other because a fact
     it depends on (attempts, jitter, Retry-After honoured) changed: that one
     is named */
  /* with a tolerance, a backoff is its first wait's window: "up to 25 %
     off" against "none" within it is the noise of measuring jitter from
     a few samples (two learns of one client), not a change */
  int same_window = tol > 0 && a->wait_hi >= 0 && b->wait_hi >= 0 &&
                    same_num(a->wait_lo, b->wait_lo, tol) && same_num(a->wait_hi, b->wait_hi, tol);
  for (int i = 0; i < a->n; i++) {
    const policy_fact *x = &a->fact[i], *y = find(b, x->key);
    if (y == NULL || same_value(x->value, y->value, tol)) continue;
    if (same_window && (strcmp(x->key, "backoff.base") == 0 || strcmp(x->key, "backoff.jitter") == 0 ||
                        strcmp(x->key, "backoff.fraction") == 0))
      continue;
    snprintf(line, sizeof line, "%s: %s → %s", x->label, x->value, y->value);
    emit(ctx, line);
    changed++;
  }
  /* the cap, stated as the behaviour at the smaller finite cap */
  if (a->ra_cap >= 0 || b->ra_cap >= 0) {
    double limit = a->ra_cap < 0 ? b->ra_cap : b->ra_cap < 0 ? a->ra_cap : fmin(a->ra_cap, b->ra_cap);
    const char *old = over_limit(a, limit), *new = over_limit(b, limit);
    if (strcmp(old, new) != 0) {
      snprintf(line, sizeof line, "Retry-After over %.10g s: %s → %s", limit, old, new);
      emit(ctx, line);
      changed++;
    }
  }
  return changed;
}
