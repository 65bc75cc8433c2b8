/*
 * policy_out.c - a learned policy written as a profile file (the format of
 * profiles/NAME.lua, so `exec --profile` judges by it and `diff-policy`
 * compares it) and as a policy card in Markdown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore_int.h"

static void add_retries(xpl__sbuf *b, const xpl_policy *p) {
  xpl__add(b, "  retries = {");
  for (int i = 0; i < p->nretries; i++) {
    const char *r = p->retries[i];
    int num = r[0] >= '0' && r[0] <= '9';
    if (strcmp(r, "429") == 0 && (p->quota_except || p->ra_required)) {
      xpl__add(b, " { status = 429");
      if (p->quota_except) xpl__add(b, ", except = { \"insufficient_quota\" }");
      if (p->ra_required) xpl__add(b, ", retry_after = \"required\"");
      xpl__add(b, " },");
    }
    else if (num) xpl__add(b, " %s,", r);
    else xpl__add(b, " \"%s\",", r);
  }
  xpl__add(b, " },\n");
}

static void add_retry_after(xpl__sbuf *b, const xpl_policy *p) {
  if (!p->ra_honoured) {
    xpl__add(b, "  retry_after = { honoured = false },\n");
    return;
  }
  xpl__add(b, "  retry_after = {\n    honoured = true,\n    forms = {");
  for (int i = 0; i < p->nforms; i++) xpl__add(b, " \"%s\",", p->forms[i]);
  xpl__add(b, " },\n");
  if (p->ra_cap > 0) xpl__add(b, "    cap = %g,\n    over_cap = \"%s\",\n", p->ra_cap, p->over_cap);
  else xpl__add(b, "    cap = false, -- none: %g s was waited out\n", p->ra_cap_probed);
  xpl__add(b, "    invalid = \"%s\",\n    past = \"%s\",\n  },\n", p->invalid, p->past);
}

char *xpl_policy_lua(const xpl_policy *p, const char *name, const char *version, const char *doc,
                     const char *dialect) {
  xpl__sbuf b = {0};
  xpl__add(&b, "-- written by fusebox learn (%ld probes)\nreturn profile {\n  name    = ", p->runs);
  xpl__add_quoted(&b, name ? name : "learned");
  xpl__add(&b, ",\n  version = ");
  xpl__add_quoted(&b, version ? version : "as learned");
  xpl__add(&b, ",\n  doc     = ");
  xpl__add_quoted(&b, doc ? doc : "Learned by fusebox learn from what the client did on the wire.");
  xpl__add(&b, ",\n  dialect = \"%s\",\n\n", dialect ? dialect : "openai");
  xpl__add(&b, "  max_attempts = %d,\n", p->max_attempts > 0 ? p->max_attempts : 1);
  if (p->max_attempts > 1) {
    xpl__add(&b, "  backoff = { base = %g, factor = %g, jitter = \"%s\"", p->base, p->factor,
             p->jitter);
    if (strcmp(p->jitter, "subtract") == 0) xpl__add(&b, ", fraction = %g", p->fraction);
    xpl__add(&b, " },\n");
  }
  add_retries(&b, p);
  add_retry_after(&b, p);
  if (p->streams_probed) xpl__add(&b, "  streams_retried = %s,\n", p->streams_retried ? "true" : "false");
  if (strcmp(p->idem, "false") == 0 || !p->idem[0]) xpl__add(&b, "  idempotency_key = false,\n");
  else xpl__add(&b, "  idempotency_key = \"%s\",\n", p->idem);
  xpl__add(&b, "}\n");
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

char *xpl_policy_markdown(const xpl_policy *p, const char *name, const char *how) {
  xpl__sbuf b = {0};
  xpl__add(&b, "## Retry policy of %s\n\n%s\n\n| fact | learned |\n|---|---|\n", name ? name : "the client",
           how ? how : "");
  xpl__add(&b, "| attempts per call | %d |\n", p->max_attempts);
  if (p->max_attempts > 1) {
    xpl__add(&b, "| backoff | %g s, x%g per retry, jitter %s", p->base, p->factor, p->jitter);
    if (strcmp(p->jitter, "subtract") == 0) xpl__add(&b, " (up to %g%% off)", p->fraction * 100);
    xpl__add(&b, " |\n");
  }
  xpl__add(&b, "| retried |");
  for (int i = 0; i < p->nretries; i++)
    xpl__add(&b, "%s %s%s%s", i ? "," : "", p->retries[i],
             strcmp(p->retries[i], "429") == 0 && p->quota_except ? " (not insufficient_quota)" : "",
             strcmp(p->retries[i], "429") == 0 && p->ra_required ? " (only with a Retry-After)" : "");
  xpl__add(&b, "%s |\n", p->nretries ? "" : " nothing");
  if (p->ra_honoured) {
    xpl__add(&b, "| Retry-After read as |");
    for (int i = 0; i < p->nforms; i++) xpl__add(&b, "%s %s", i ? "," : "", p->forms[i]);
    xpl__add(&b, " |\n");
    if (p->ra_cap > 0) xpl__add(&b, "| Retry-After over %g s | %s |\n", p->ra_cap, p->over_cap);
    else xpl__add(&b, "| Retry-After cap | none (%g s waited out) |\n", p->ra_cap_probed);
    xpl__add(&b, "| unparsable Retry-After | %s |\n| Retry-After in the past | %s |\n", p->invalid,
             p->past);
  } else {
    xpl__add(&b, "| Retry-After | %s |\n", p->retries_429 ? "not honoured" : "429 not retried");
  }
  xpl__add(&b, "| stream cut after content | %s |\n",
           !p->streams_probed ? "not probed (the client did not stream when asked)"
           : p->streams_retried ? "retried" : "not retried");
  xpl__add(&b, "| Idempotency-Key | %s |\n", strcmp(p->idem, "false") == 0 ? "none" : p->idem);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}
