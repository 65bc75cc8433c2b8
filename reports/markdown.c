/*
 * markdown.c - the run as GitHub-flavoured Markdown, for a CI job summary
 * ($GITHUB_STEP_SUMMARY) or a pull-request comment: a headline, one table
 * row per scenario, then each failed or unjudged scenario's verdicts with
 * their evidence in a <details> block. Text from the trace is cleaned to
 * valid UTF-8 without control characters, and every character Markdown or
 * HTML would read (| * _ ` [ ] < > & \ ~ #) is escaped, so a hostile
 * scenario name cannot break the table, link anywhere or inject markup.
 */
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

/* Writes s as inline Markdown text: escaped, one line. NULL writes "". */
static void put_md(FILE *f, const char *s) {
  if (s == NULL) return;
  char *clean = rpt__utf8_dup(s);
  const unsigned char *p = (const unsigned char *)(clean ? clean : "");
  for (; *p; p++) {
    unsigned char c = *p;
    if (c == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) { /* a C1 control */
      fputc(' ', f);
      p++;
      continue;
    }
    switch (c) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '|': case '*': case '_': case '`': case '[': case ']': case '\\': case '~': case '#':
    case '!':
      fputc('\\', f);
      fputc(c, f);
      break;
    default:
      fputc(c < 0x20 || c == 0x7F ? ' ' : c, f);
    }
  }
  free(clean);
}

static const char *status_cell(const char *st) {
  return strcmp(st, "pass") == 0   ? "✅ pass"
         : strcmp(st, "fail") == 0 ? "❌ **FAIL**"
         : strcmp(st, "n/a") == 0  ? "➖ N/A"
                                   : "⚠️ **ERROR**";
}

static const char *verdict_word(rpt_status st) {
  return st == RPT_PASS ? "pass" : st == RPT_FAIL ? "**fail**" : "n/a";
}

/* The <details> block of one scenario that did not pass. */
static void details(FILE *f, const rpt_run *run, int i, const rpt_result *r) {
  fputs("<details><summary>", f);
  fputs(strcmp(r->status, "fail") == 0 ? "❌ " : strcmp(r->status, "n/a") == 0 ? "➖ " : "⚠️ ", f);
  put_md(f, r->name);
  if (r->client) {
    fputs(" \\[", f);
    put_md(f, r->client);
    fputs("\\]", f);
  }
  if (r->error) fputs(": could not be judged", f);
  else if (r->failed) fprintf(f, ": %d verdict%s failed", r->failed, r->failed == 1 ? "" : "s");
  else fputs(": no verdict applied (nothing was judged)", f);
  fputs("</summary>\n\n", f);
  if (r->file) {
    fputs("File: ", f);
    put_md(f, r->file);
    fputs("\n\n", f);
  }
  if (r->error) {
    fputs("- error: ", f);
    put_md(f, r->error);
    fputc('\n', f);
  }
  /* Failed verdicts first, then the rest, each with its evidence. */
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0;; k++) {
      const rpt_verdict *v = rpt_run_verdict(run, i, k);
      if (v == NULL) break;
      if ((v->status == RPT_FAIL) != (pass == 0)) continue;
      fprintf(f, "- %s `", verdict_word(v->status));
      /* a verdict name is an identifier; keep it literal but safe */
      for (const char *c = v->name; c && *c; c++)
        fputc(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-", *c) ? *c : '?', f);
      fputs("`: ", f);
      put_md(f, v->evidence);
      fputc('\n', f);
    }
  if (r->killed) fputs("- the command was killed by --timeout\n", f);
  else if (r->exit_code >= 0) fprintf(f, "- the command exited with status %d\n", r->exit_code);
  fputs("\n</details>\n\n", f);
}

/* Writes the run as Markdown to path ("-" = stdout); see reports.h. */
int rpt_run_write_markdown(const rpt_run *run, const char *path, char err[RPT_ERRLEN]) {
  if (run == NULL || err == NULL) return RPT_EINVAL;
  FILE *f = rpt__open_out(path, err);
  if (f == NULL) return RPT_EIO;
  rpt_summary s;
  rpt_run_summary(run, &s);
  fprintf(f, "## fusebox: %s %d scenario%s, %d passed, %d failed", s.failed || s.errors ? "❌" : "✅",
          s.scenarios, s.scenarios == 1 ? "" : "s", s.passed, s.failed);
  if (s.errors) fprintf(f, ", %d error%s", s.errors, s.errors == 1 ? "" : "s");
  if (s.not_applicable) fprintf(f, ", %d n/a", s.not_applicable);
  int judged = s.verdicts - s.verdicts_skipped;
  fprintf(f, "\n\n%d/%d verdicts hold; %.1f s of scenario time.\n\n", judged - s.verdicts_failed,
          judged, s.time_ms / 1000.0);
  char head[RPT_ERRLEN * 2];
  if (rpt_run_headline(run, head, sizeof head)) {
    fputs("> ", f);
    put_md(f, head);
    fputs("\n\n", f);
  }
  fputs("| status | scenario | verdicts | attempts | time |\n|---|---|--:|--:|--:|\n", f);
  int n = rpt_run_count(run), bad = 0;
  for (int i = 0; i < n; i++) {
    rpt_result r;
    if (rpt_run_result(run, i, &r) != RPT_OK) continue;
    fprintf(f, "| %s | ", status_cell(r.status));
    put_md(f, r.name);
    if (r.client) {
      fputs(" \\[", f);
      put_md(f, r.client);
      fputs("\\]", f);
    }
    if (r.error) fputs(" | — | — | — |\n", f);
    else {
      int held = r.verdicts - r.not_applicable - r.failed;
      fprintf(f, " | %d/%d | %d | %.0f ms |\n", held, r.verdicts - r.not_applicable, r.attempts,
              r.time_ms);
    }
    if (strcmp(r.status, "pass") != 0) bad++;
  }
  if (bad) {
    fputs("\n### Not passed\n\n", f);
    for (int i = 0; i < n; i++) {
      rpt_result r;
      if (rpt_run_result(run, i, &r) == RPT_OK && strcmp(r.status, "pass") != 0)
        details(f, run, i, &r);
    }
  }
  return rpt__close_out(f, path, err);
}
