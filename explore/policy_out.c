/*
 * policy_out.c - a learned policy written as a profile file (the format of
 * profiles/NAME.lua, so `exec --profile` judges by it and `diff-policy`
 * compares it), each fact with its evidence as a comment. The policy card
 * is policy_card.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore_int.h"

static void add_retries(xpl__sbuf *b, const xpl_policy *p) {
  xpl__add(b, "  retries = {");
  for (int i = 0; i < p->nretries; i++) {
    const char *r = p->retries[i];
    int num = r[0] >= '0' && r[0] <= '9' && !strchr(r, '-');
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
  if (p->decimal[0]) xpl__add(b, "    decimal = \"%s\",\n", p->decimal);
  if (p->combine[0]) xpl__add(b, "    combine = \"%s\",\n", p->combine);
  xpl__add(b, "    invalid = \"%s\",\n    negative = \"%s\",\n    past = \"%s\",\n  },\n", p->invalid,
           p->negative, p->past);
}

/* The evidence of fact k as a comment line, when there is some. */
static void add_evidence(xpl__sbuf *b, const xpl_policy *p, int k) {
  if (p->evidence[k][0]) xpl__add(b, "  -- %s\n", p->evidence[k]);
}

/* How sure the yes/no facts are: the plays behind each. */
static void add_confidence(xpl__sbuf *b, const xpl_policy *p) {
  if (p->plays <= 1)
    xpl__add(b, "  -- each yes/no fact from one play (its consistency not checked: --confidence)\n");
  else
    xpl__add(b, "  -- each yes/no fact from %d plays: one that flips half the time would have "
                "shown with chance %.3g\n", p->plays, p->confidence);
  if (p->nflaky)
    xpl__add(b, "  -- %d of them differed between plays: the majority is written\n", p->nflaky);
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
  add_confidence(&b, p);
  add_evidence(&b, p, XPL_EV_ATTEMPTS);
  xpl__add(&b, "  max_attempts = %d,\n", p->max_attempts > 0 ? p->max_attempts : 1);
  if (p->max_attempts > 1) {
    add_evidence(&b, p, XPL_EV_BACKOFF);
    xpl__add(&b, "  backoff = { base = %g, factor = %g, ", p->base, p->factor);
    if (p->cap > 0) xpl__add(&b, "cap = %g, ", p->cap);
    xpl__add(&b, "jitter = \"%s\"", p->jitter);
    if (strcmp(p->jitter, "subtract") == 0) xpl__add(&b, ", fraction = %g", p->fraction);
    xpl__add(&b, " },\n");
  }
  add_evidence(&b, p, XPL_EV_RETRIES);
  add_evidence(&b, p, XPL_EV_TIMEOUT);
  add_retries(&b, p);
  xpl__add(&b, "  x_should_retry = %s,\n", p->should_retry ? "true" : "false");
  for (int k = XPL_EV_RA_FORMS; k <= XPL_EV_RA_COMBINE; k++) add_evidence(&b, p, k);
  add_retry_after(&b, p);
  if (p->timeout_len > 0) xpl__add(&b, "  timeout = %g,\n", p->timeout_len);
  if (p->covers[0]) xpl__add(&b, "  timeout_covers = \"%s\",\n", p->covers);
  add_evidence(&b, p, XPL_EV_STREAMS);
  if (p->streams_probed) xpl__add(&b, "  streams_retried = %s,\n",
                                 p->streams_retried == 2 ? "\"before_content\""
                                 : p->streams_retried ? "true" : "false");
  add_evidence(&b, p, XPL_EV_IDEM);
  if (strcmp(p->idem, "false") == 0 || !p->idem[0]) xpl__add(&b, "  idempotency_key = false,\n");
  else xpl__add(&b, "  idempotency_key = \"%s\",\n", p->idem);
  xpl__add(&b, "}\n");
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}
