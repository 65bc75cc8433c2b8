/*
 * html_int.h - what the two HTML pages (a run: html.c; a matrix:
 * matrix.c) share: the triage parts (html_triage.c: status order, the
 * offline filter and its script, per-verdict counts) and the timeline of one
 * scenario (html_timeline.c). Private to reports/.
 */
#ifndef FUSEBOX_REPORTS_HTML_INT_H
#define FUSEBOX_REPORTS_HTML_INT_H

#include <stdio.h>

#include "reports/reports_int.h"

/* The filter's script, and its SHA-256 for the page's Content-Security-
   Policy: change one and recompute the other
   (printf '%s' "$js" | openssl dgst -sha256 -binary | base64);
   tests/cli/html_chromium.sh fails when they disagree. */
extern const char rpt__html_filter_js[];
#define RPT__HTML_FILTER_SHA256 "sha256-IxqZPmugmoQvbw2Lp1ml04LQIoZvan+bC+ROGtL16K0="

/* Writes s as escaped text. */
void rpt__html_text(FILE *f, const char *s);
/* Writes at most max characters of s as escaped text, "…" when cut. */
void rpt__html_label(FILE *f, const char *s, int max);
/* 0 failed (or error), 1 n/a, 2 passed: the order a person triages in. */
int rpt__html_rank(const char *status);
/* The filter a status belongs to: "failed", "na" or "passed". */
const char *rpt__html_filter_word(const char *status);
/* The CSS class of a status word ("n/a" is "na"). */
const char *rpt__html_st_class(const char *status);
/* The filter bar: all / failed / n/a / passed with their counts. */
void rpt__html_filters(FILE *f, int all, int nfail, int nna, int npass);
/* The filter's CSS (the bar, hidden rows). */
extern const char rpt__html_filter_css[];

/* One judged place a failed verdict can point at: a scenario card (run) or
   a cell (matrix). */
typedef struct rpt__html_ref {
  const rpt__entry *e;
  char anchor[24];  /* the id linked to, "s3" */
  char label[24];   /* the link's text, "#3" */
  const char *title; /* the link's tooltip (the scenario's name) */
} rpt__html_ref;

/* "retry_after_honoured failed in 9 <unit>s: #3 #7 ...", most first, each a
   link to its card or cell; nothing when no verdict failed. */
void rpt__html_tally(FILE *f, const rpt__html_ref *refs, int n, const char *unit);

/* The first line of the first failure of an entry (its error, else the
   first failed verdict's evidence), at most 160 characters; nothing when it
   did not fail. */
void rpt__html_first_failure(FILE *f, const rpt__entry *e);
/* The failed verdict names of an entry, comma-separated, escaped. Returns
   how many. */
int rpt__html_failed_names(FILE *f, const rpt__entry *e);

/* The SVG timeline of one scenario (html_timeline.c): one row per logical
   request, many concurrent ones as one band with their count. Returns 0,
   or RPT_ENOMEM (then the page is not whole). */
int rpt__html_timeline(FILE *f, const rpt__entry *e);
/* The timeline's legend. */
void rpt__html_legend(FILE *f);
/* The timeline's CSS. */
extern const char rpt__html_timeline_css[];

#endif
