/*
 * policy_card.c - a learned policy as a card a reviewer reads in a minute:
 * one table of the facts, then what the wire showed for each; in Markdown
 * (--markdown) or as a standalone HTML page (--html). The rows are made
 * once and rendered either way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore_int.h"

#define MAX_ROWS 16

typedef struct card {
  char fact[MAX_ROWS][48];
  char value[MAX_ROWS][256];
  int n;
} card;

static void row(card *c, const char *fact, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void row(card *c, const char *fact, const char *fmt, ...) {
  if (c->n == MAX_ROWS) return;
  snprintf(c->fact[c->n], sizeof c->fact[0], "%s", fact);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->value[c->n], sizeof c->value[0], fmt, ap);
  va_end(ap);
  c->n++;
}

/* Appends to the last row's value. */
static void more(card *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void more(card *c, const char *fmt, ...) {
  char *v = c->value[c->n - 1];
  size_t len = strlen(v);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v + len, sizeof c->value[0] - len, fmt, ap);
  va_end(ap);
}

static void make(card *c, const xpl_policy *p) {
  c->n = 0;
  row(c, "attempts per call", "%d", p->max_attempts);
  if (p->max_attempts > 1) {
    row(c, "backoff", "%g s, x%g per retry, ", p->base, p->factor);
    if (p->cap > 0) more(c, "capped at %g s, ", p->cap);
    else more(c, "no cap seen, ");
    more(c, "jitter %s", p->jitter);
    if (strcmp(p->jitter, "subtract") == 0) more(c, " (up to %g%% off)", p->fraction * 100);
  }
  row(c, "retried", "%s", p->nretries ? "" : "nothing");
  for (int i = 0; i < p->nretries; i++)
    more(c, "%s%s%s%s", i ? ", " : "", p->retries[i],
         strcmp(p->retries[i], "429") == 0 && p->quota_except ? " (not insufficient_quota)" : "",
         strcmp(p->retries[i], "429") == 0 && p->ra_required ? " (only with a Retry-After)" : "");
  row(c, "x-should-retry", "%s", p->should_retry ? "obeyed" : "ignored");
  if (p->ra_honoured) {
    row(c, "Retry-After read as", "%s", "");
    for (int i = 0; i < p->nforms; i++) more(c, "%s%s", i ? ", " : "", p->forms[i]);
    if (p->ra_cap > 0) row(c, "Retry-After over cap", "over %g s: %s", p->ra_cap, p->over_cap);
    else row(c, "Retry-After cap", "none (%g s waited out)", p->ra_cap_probed);
    row(c, "unparsable Retry-After", "%s", p->invalid);
    row(c, "zero or negative Retry-After", "%s", p->negative);
    row(c, "past Retry-After date", "%s", p->past);
    if (p->decimal[0]) row(c, "decimal Retry-After", "%s", strcmp(p->decimal, "truncate") == 0
                                                            ? "its whole seconds waited" : p->decimal);
    row(c, "Retry-After shorter than the backoff", "%s",
        !p->combine[0] ? "not probed (no retry whose backoff is clearly longer)"
        : strcmp(p->combine, "max") == 0 ? "the backoff waited (the longer)" : "the Retry-After waited");
  } else {
    row(c, "Retry-After", "%s", p->retries_429 ? "not honoured" : "429 not retried");
  }
  if (p->timeout_len > 0) row(c, "attempt timeout", "%g s", p->timeout_len);
  else row(c, "attempt timeout", "none shorter than the longest wait probed");
  row(c, "attempt timeout covers", "%s", p->covers[0] ? p->covers : "not told apart");
  row(c, "stream cut after content", "%s",
      !p->streams_probed ? "not probed (the client did not stream when asked)"
      : p->streams_retried == 1 ? "retried" : "not retried");
  if (p->streams_probed)
    row(c, "stream cut in a tool call, no text yet", "%s",
        p->tool_cut < 0 ? "not probed (no stream when tools were offered)"
        : p->tool_cut ? "retried" : "not retried");
  row(c, "Idempotency-Key", "%s", strcmp(p->idem, "false") == 0 ? "none" : p->idem);
}

static const char *const EV_NAME[XPL_EV_N] = {
    "attempts", "backoff", "retried", "attempt timeout", "streams",
    "Retry-After forms", "Retry-After cap", "bad Retry-After", "Retry-After and backoff",
    "Idempotency-Key"};

static void confidence(xpl__sbuf *b, const xpl_policy *p) {
  if (p->plays <= 1) xpl__add(b, "Each yes/no fact from one play (its consistency not checked).");
  else
    xpl__add(b, "Each yes/no fact from %d plays: one that flips half the time would have shown "
                "with chance %.3g.", p->plays, p->confidence);
  if (p->nflaky) xpl__add(b, " %d differed between plays: the majority is shown.", p->nflaky);
}

char *xpl_policy_markdown(const xpl_policy *p, const char *name, const char *how) {
  card c;
  make(&c, p);
  xpl__sbuf b = {0};
  xpl__add(&b, "## Retry policy of %s\n\n%s\n\n| fact | learned |\n|---|---|\n", name ? name : "the client",
           how ? how : "");
  for (int i = 0; i < c.n; i++) xpl__add(&b, "| %s | %s |\n", c.fact[i], c.value[i]);
  xpl__add(&b, "\n### What the wire showed\n\n");
  confidence(&b, p);
  xpl__add(&b, "\n\n");
  for (int k = 0; k < XPL_EV_N; k++)
    if (p->evidence[k][0]) xpl__add(&b, "- %s: %s\n", EV_NAME[k], p->evidence[k]);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

/* Text for an HTML page: the five characters that mean markup escaped. */
static void add_html(xpl__sbuf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<': xpl__add(b, "&lt;"); break;
    case '>': xpl__add(b, "&gt;"); break;
    case '&': xpl__add(b, "&amp;"); break;
    case '"': xpl__add(b, "&quot;"); break;
    case '\'': xpl__add(b, "&#39;"); break;
    default: xpl__add(b, "%c", *s);
    }
  }
}

char *xpl_policy_html(const xpl_policy *p, const char *name, const char *how) {
  card c;
  make(&c, p);
  xpl__sbuf b = {0};
  const char *who = name ? name : "the client";
  xpl__add(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>Retry policy of ");
  add_html(&b, who);
  xpl__add(&b, "</title>\n<style>body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto;"
               "padding:0 1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;"
               "text-align:left;vertical-align:top}th{background:#f4f4f4}.ev{color:#444}</style>\n"
               "</head><body>\n<h1>Retry policy of ");
  add_html(&b, who);
  xpl__add(&b, "</h1>\n<p>");
  add_html(&b, how ? how : "");
  xpl__add(&b, "</p>\n<table>\n<tr><th>fact</th><th>learned</th></tr>\n");
  for (int i = 0; i < c.n; i++) {
    xpl__add(&b, "<tr><td>");
    add_html(&b, c.fact[i]);
    xpl__add(&b, "</td><td>");
    add_html(&b, c.value[i]);
    xpl__add(&b, "</td></tr>\n");
  }
  xpl__add(&b, "</table>\n<h2>What the wire showed</h2>\n<p>");
  xpl__sbuf conf = {0};
  confidence(&conf, p);
  add_html(&b, conf.p ? conf.p : "");
  free(conf.p);
  xpl__add(&b, "</p>\n<ul class=\"ev\">\n");
  for (int k = 0; k < XPL_EV_N; k++) {
    if (!p->evidence[k][0]) continue;
    xpl__add(&b, "<li><b>%s</b>: ", EV_NAME[k]);
    add_html(&b, p->evidence[k]);
    xpl__add(&b, "</li>\n");
  }
  xpl__add(&b, "</ul>\n</body></html>\n");
  if (b.oom || conf.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}
