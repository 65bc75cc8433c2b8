/*
 * html.c - one self-contained HTML page for a run: a summary for triage
 * (html_triage.c: failed first, the failed verdicts, an offline filter,
 * per-verdict counts), then per scenario its verdicts with evidence, an SVG
 * timeline (html_timeline.c) and the client's account. Inline CSS and SVG,
 * and one inline script (the summary's filter, allowed by its hash); no
 * external request (a Content-Security-Policy says so to the browser).
 * Every text from a trace is untrusted and escaped.
 */
#include <stdlib.h>
#include <string.h>

#include "reports/html_int.h"

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;"
    "padding:24px 32px;color:#1d1d1f;background:#fafafa}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 6px}"
    ".summary{font-size:15px;margin:0 0 16px}"
    "table{border-collapse:collapse;margin:8px 0 16px}"
    "th,td{text-align:left;padding:3px 10px;border-bottom:1px solid #e3e3e3;vertical-align:top}"
    "th{font-weight:600;color:#555}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "a{color:#1558b0;text-decoration:none}a:hover{text-decoration:underline}"
    "section{background:#fff;border:1px solid #ddd;border-radius:8px;padding:14px 18px;"
    "margin:0 0 18px}section.fail,section.error{border-left:5px solid #d03030}"
    "section.pass{border-left:5px solid #2e9e44}"
    ".badge{display:inline-block;font-size:12px;font-weight:700;color:#fff;border-radius:4px;"
    "padding:1px 7px;margin-right:6px;vertical-align:2px}"
    ".badge.pass{background:#2e9e44}.badge.fail,.badge.error{background:#d03030}"
    ".meta{color:#666;margin:0 0 8px;font-size:13px}.warn{color:#9a6700;margin:4px 0}"
    "ul.verdicts{list-style:none;padding:0;margin:6px 0 10px}"
    "ul.verdicts li{padding:2px 0}ul.verdicts b{font-family:ui-monospace,monospace;"
    "font-size:13px;margin-right:6px}"
    ".v-pass:before{content:'\\2713  ';color:#2e9e44;font-weight:700}"
    ".v-fail:before{content:'\\2717  ';color:#d03030;font-weight:700}"
    ".v-na:before{content:'n/a  ';color:#a07000;font-weight:700}"
    ".v-na{color:#777}.v-fail{color:#8b1a1a}"
    "section.na{border-left:5px solid #d0a000}.badge.na{background:#b08800}"
    ".headline{background:#fbe0dd;border:1px solid #d03030;padding:8px 12px;font-weight:700}"
    "details{margin:6px 0}summary{cursor:pointer;color:#555}";

static void calls_table(FILE *f, const rpt_trace *tr) {
  if (tr == NULL || tr->ncli == 0) return;
  char tb[32];
  fprintf(f, "<details><summary>Client account: %d call%s</summary>\n<table><tr><th>call</th>"
             "<th>outcome</th><th>time</th><th>attempts</th><th>tokens</th><th>reason</th></tr>\n",
          tr->ncli, tr->ncli == 1 ? "" : "s");
  for (int i = 0; i < tr->ncli && i < 500; i++) {
    const rpt__client_ev *c = &tr->cli[i];
    fprintf(f, "<tr><td class=\"n\">%d</td><td>", c->call);
    rpt__html_text(f, c->outcome);
    fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%d</td><td class=\"n\">",
            c->total_ms >= 0 ? rpt__fmt_ms(c->total_ms, tb, sizeof tb) : "", c->nattempts);
    if (c->has_tokens) fprintf(f, "%ld", c->tokens);
    fputs("</td><td>", f);
    rpt__html_text(f, c->reason);
    fputs("</td></tr>\n", f);
  }
  fputs("</table></details>\n", f);
}

/* One scenario's card. Returns 0 or RPT_ENOMEM. */
static int scenario_section(FILE *f, const rpt__entry *e, int idx) {
  const char *st = rpt__entry_status(e);
  char tb[32];
  fprintf(f, "<section id=\"s%d\" class=\"%s\" data-st=\"%s\">\n<h2><span class=\"badge %s\">%s</span>",
          idx, rpt__html_st_class(st), rpt__html_filter_word(st), rpt__html_st_class(st),
          strcmp(st, "pass") == 0 ? "PASS" : strcmp(st, "fail") == 0 ? "FAIL"
          : strcmp(st, "n/a") == 0 ? "N/A" : "ERROR");
  rpt__html_text(f, e->name);
  if (e->client) {
    fputs(" <small>[", f);
    rpt__html_text(f, e->client);
    fputs("]</small>", f);
  }
  fputs("</h2>\n<p class=\"meta\">", f);
  if (e->file) {
    rpt__html_text(f, e->file);
    fputs(" · ", f);
  }
  fprintf(f, "%s", rpt__fmt_ms(rpt__entry_time(e), tb, sizeof tb));
  if (e->trace) {
    int att = rpt__entry_attempts(e), killed, code = rpt__entry_exit(e, &killed);
    fprintf(f, " · %d attempt%s · time scale %g", att, att == 1 ? "" : "s", e->scale);
    if (killed) fputs(" · killed by --timeout", f);
    else if (code >= 0) fprintf(f, " · exit %d", code);
    if (e->deadline_ms > 0) fprintf(f, " · deadline %s", rpt__fmt_ms(e->deadline_ms, tb, sizeof tb));
  }
  if (e->trace_path) {
    fputs(" · trace ", f);
    rpt__html_text(f, e->trace_path);
  }
  fputs("</p>\n", f);
  if (e->error) {
    fputs("<p class=\"v-fail\">", f);
    rpt__html_text(f, e->error);
    fputs("</p>\n</section>\n", f);
    return 0;
  }
  if (e->trace && !rpt_trace_complete(e->trace)) {
    fputs("<p class=\"warn\">", f);
    rpt__html_text(f, e->trace->warning);
    fputs("</p>\n", f);
  }
  fputs("<ul class=\"verdicts\">\n", f);
  for (int i = 0; e->j && i < e->j->n; i++) {
    const rpt_verdict *v = &e->j->v[i];
    fprintf(f, "<li class=\"v-%s\"><b>",
            v->status == RPT_PASS ? "pass" : v->status == RPT_FAIL ? "fail" : "na");
    rpt__html_text(f, v->name);
    fputs("</b>", f);
    rpt__html_text(f, v->evidence);
    fputs("</li>\n", f);
  }
  if (e->j == NULL || e->j->n == 0) fputs("<li>No expectation.</li>\n", f);
  fputs("</ul>\n", f);
  int rc = rpt__html_timeline(f, e);
  calls_table(f, e->trace);
  fputs("</section>\n", f);
  return rc;
}

/* Writes the run as one self-contained HTML page to path ("-" = stdout). */
int rpt_run_write_html(const rpt_run *run, const char *path, char err[RPT_ERRLEN]) {
  if (run == NULL || err == NULL) return RPT_EINVAL;
  FILE *f = rpt__open_out(path, err);
  if (f == NULL) return RPT_EIO;
  rpt_summary s;
  rpt_run_summary(run, &s);
  char tb[32];
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src '" RPT__HTML_FILTER_SHA256 "'\">\n"
        "<title>fusebox report</title>\n<style>",
        f);
  fputs(css, f);
  fputs(rpt__html_filter_css, f);
  fputs(rpt__html_timeline_css, f);
  fputs("</style>\n</head>\n<body>\n<h1>fusebox report</h1>\n", f);
  char head[RPT_ERRLEN * 2];
  if (rpt_run_headline(run, head, sizeof head)) {
    fputs("<p class=\"headline\">", f);
    rpt__html_text(f, head);
    fputs("</p>\n", f);
  }
  fprintf(f, "<p class=\"summary\"><b>%d scenario%s</b>: %d passed, %d failed", s.scenarios,
          s.scenarios == 1 ? "" : "s", s.passed, s.failed);
  if (s.errors) fprintf(f, ", %d error%s", s.errors, s.errors == 1 ? "" : "s");
  if (s.not_applicable) fprintf(f, ", %d n/a", s.not_applicable);
  fprintf(f, " · %d/%d verdicts hold", s.verdicts - s.verdicts_failed - s.verdicts_skipped,
          s.verdicts - s.verdicts_skipped);
  if (s.verdicts_skipped) fprintf(f, ", %d n/a", s.verdicts_skipped);
  if (s.incomplete) fprintf(f, " · %d incomplete trace%s", s.incomplete, s.incomplete == 1 ? "" : "s");
  fprintf(f, " · %s</p>\n", rpt__fmt_ms(s.time_ms, tb, sizeof tb));
  /* Failed first, then n/a, then passed: the order a person triages in. */
  int *order = malloc(sizeof *order * (size_t)(run->n > 0 ? run->n : 1));
  if (order == NULL) {
    rpt__close_out(f, path, err);
    snprintf(err, RPT_ERRLEN, "out of memory");
    return RPT_ENOMEM;
  }
  int no = 0;
  for (int rank = 0; rank < 3; rank++)
    for (int i = 0; i < run->n; i++)
      if (rpt__html_rank(rpt__entry_status(&run->e[i])) == rank) order[no++] = i;
  int nfail = 0, nna = 0, npass = 0;
  for (int i = 0; i < run->n; i++) {
    int r = rpt__html_rank(rpt__entry_status(&run->e[i]));
    nfail += r == 0;
    nna += r == 1;
    npass += r == 2;
  }
  rpt__html_filters(f, run->n, nfail, nna, npass);
  int rc = 0;
  rpt__html_ref *refs = malloc(sizeof *refs * (size_t)(run->n > 0 ? run->n : 1));
  if (refs == NULL) rc = RPT_ENOMEM;
  else {
    for (int i = 0; i < run->n; i++) {
      refs[i].e = &run->e[i];
      snprintf(refs[i].anchor, sizeof refs[i].anchor, "s%d", i + 1);
      snprintf(refs[i].label, sizeof refs[i].label, "#%d", i + 1);
      refs[i].title = run->e[i].name;
    }
    rpt__html_tally(f, refs, run->n, "scenario");
    free(refs);
  }
  rpt__html_legend(f);
  fputs("<table class=\"index\">\n<tr><th>#</th><th>Scenario</th><th>Result</th>"
        "<th>Failed verdicts</th><th>First failure</th><th>Verdicts</th>"
        "<th>Attempts</th><th>Time</th></tr>\n",
        f);
  for (int k = 0; k < no; k++) {
    int i = order[k];
    const rpt__entry *e = &run->e[i];
    int passed, judged;
    rpt__entry_counts(e, &passed, &judged);
    const char *st = rpt__entry_status(e);
    fprintf(f, "<tr data-st=\"%s\"><td class=\"n\">%d</td><td><a href=\"#s%d\">",
            rpt__html_filter_word(st), i + 1, i + 1);
    rpt__html_text(f, e->name);
    if (e->client) {
      fputs(" [", f);
      rpt__html_text(f, e->client);
      fputc(']', f);
    }
    fprintf(f, "</a></td><td><span class=\"badge %s\">%s</span></td><td class=\"fv\">",
            rpt__html_st_class(st), st);
    rpt__html_failed_names(f, e);
    fputs("</td><td class=\"ev\">", f);
    rpt__html_first_failure(f, e);
    fputs("</td>", f);
    if (e->error) {
      fputs("<td class=\"n\">–</td><td class=\"n\">–</td>", f);
    } else {
      int killed, code = rpt__entry_exit(e, &killed);
      fprintf(f, "<td class=\"n\">%d/%d</td><td class=\"n\">%d", passed, judged,
              rpt__entry_attempts(e));
      if (killed) fputs(" · killed", f);
      else if (code >= 0) fprintf(f, " · exit %d", code);
      fputs("</td>", f);
    }
    fprintf(f, "<td class=\"n\">%s</td></tr>\n", rpt__fmt_ms(rpt__entry_time(e), tb, sizeof tb));
  }
  fputs("</table>\n", f);
  for (int k = 0; k < no; k++) rc |= scenario_section(f, &run->e[order[k]], order[k] + 1);
  free(order);
  if (rc) {
    rpt__close_out(f, path, err);
    snprintf(err, RPT_ERRLEN, "out of memory writing the HTML report");
    return RPT_ENOMEM;
  }
  fprintf(f, "<script>%s</script>\n", rpt__html_filter_js);
  fputs("</body>\n</html>\n", f);
  return rpt__close_out(f, path, err);
}
