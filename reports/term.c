/*
 * term.c - the terminal table and the live progress line.
 *
 * Everything from a trace is untrusted: scenario names and evidence go
 * through rpt__put_term, which turns control characters (escape sequences
 * included) into '?'.
 */
#include <string.h>

#include "reports/reports_int.h"

#define NAME_COLS 48
#define NAME_MAX_COLS 200 /* a longer name is cut (with an ellipsis) */

/* The code points of s: the columns it takes, near enough for names. */
static int cols_of(const char *s) {
  int n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

typedef struct style {
  const char *ok, *bad, *warn, *dim, *bold, *off;
} style;

static const style plain = {"", "", "", "", "", ""};
static const style ansi = {"\033[32m", "\033[31m", "\033[33m", "\033[2m", "\033[1m", "\033[0m"};

static void pad(FILE *f, int n) {
  for (; n > 0; n--) fputc(' ', f);
}

static void scenario_line(FILE *f, const rpt__entry *e, const style *s) {
  const char *st = rpt__entry_status(e);
  int na = strcmp(st, "n/a") == 0;
  const char *col = strcmp(st, "pass") == 0 ? s->ok : na ? s->warn : s->bad;
  fprintf(f, "  %s%-5s%s ", col,
          strcmp(st, "pass") == 0 ? "PASS" : strcmp(st, "fail") == 0 ? "FAIL" : na ? "N/A" : "ERROR",
          s->off);
  /* A name too long for its column is written whole and the numbers go on
     the next line: a cut name ("[gu…]") hides what a person searches for. */
  int want = cols_of(e->name) + (e->client ? cols_of(e->client) + 3 : 0);
  int cols = rpt__put_term(f, e->name, want > NAME_COLS ? NAME_MAX_COLS : NAME_COLS);
  if (e->client) {
    fputs(" [", f);
    cols += 2 + rpt__put_term(f, e->client, 64);
    fputc(']', f);
    cols++;
  }
  if (cols > NAME_COLS) {
    fputc('\n', f);
    cols = -8; /* the status column's width, "  FAIL  " */
  }
  pad(f, NAME_COLS + 1 - cols);
  if (e->error) {
    fputc('\n', f);
    fprintf(f, "          %s", s->bad);
    rpt__put_term(f, e->error, 200);
    fprintf(f, "%s\n", s->off);
    return;
  }
  int passed, judged;
  rpt__entry_counts(e, &passed, &judged);
  char verd[32], tbuf[32];
  snprintf(verd, sizeof verd, "%d/%d", passed, judged);
  int skipped = (e->j ? e->j->n : 0) - judged;
  fprintf(f, "%8s  %8d  %9s", verd, rpt__entry_attempts(e),
          rpt__fmt_ms(rpt__entry_time(e), tbuf, sizeof tbuf));
  int killed, code = rpt__entry_exit(e, &killed);
  if (killed) fprintf(f, "  killed");
  else if (code >= 0) fprintf(f, "  exit %d", code);
  /* An outside command's slow start-up (never counted against a deadline). */
  const rpt__client_ev *ce = e->trace && e->trace->ncli > 0 ? &e->trace->cli[0] : NULL;
  double startup, counted;
  char up[80];
  if (ce && rpt__client_startup(e->trace, ce, &startup, &counted) &&
      (startup < 0 || startup >= RPT__STARTUP_SHOWN_MS))
    fprintf(f, "  %s", rpt__startup_note(e->trace, ce, up, sizeof up));
  if (skipped) fprintf(f, "  %s%d n/a%s", s->dim, skipped, s->off);
  fputc('\n', f);
  for (int i = 0; e->j && i < e->j->n; i++) {
    const rpt_verdict *v = &e->j->v[i];
    if (v->status == RPT_PASS) continue;
    if (v->status == RPT_FAIL)
      fprintf(f, "          %s\xE2\x9C\x97 %s%s: ", s->bad, v->name, s->off);
    else
      fprintf(f, "          %s- %s n/a: ", s->dim, v->name);
    rpt__put_term(f, v->evidence, 400);
    fprintf(f, "%s\n", v->status == RPT_FAIL ? "" : s->off);
  }
  if (e->trace && !rpt_trace_complete(e->trace)) {
    fprintf(f, "          %s! ", s->warn);
    rpt__put_term(f, e->trace->warning, 200);
    fprintf(f, "%s\n", s->off);
  }
}

/*
 * Writes the terminal table: one line per scenario, the evidence of each
 * failed verdict under it, then a totals line. Returns RPT_EIO when the
 * stream reports an error.
 */
int rpt_run_write_term(const rpt_run *run, FILE *f, int color) {
  if (run == NULL || f == NULL) return RPT_EINVAL;
  const style *s = color ? &ansi : &plain;
  char head[RPT_ERRLEN * 2];
  if (rpt_run_headline(run, head, sizeof head)) {
    fprintf(f, "%s", s->bad);
    rpt__put_term(f, head, -1);
    fprintf(f, "%s\n\n", s->off);
  }
  fprintf(f, "  %s%-5s %-*s %8s  %8s  %9s%s\n", s->bold, "", NAME_COLS, "SCENARIO", "VERDICTS",
          "ATTEMPTS", "TIME", s->off);
  for (int i = 0; i < run->n; i++) scenario_line(f, &run->e[i], s);
  rpt_summary sum;
  rpt_run_summary(run, &sum);
  char tbuf[32];
  int bad = sum.failed + sum.errors;
  fprintf(f, "\n  %s%d scenario%s: %d passed, %d failed", bad ? s->bad : s->ok, sum.scenarios,
          sum.scenarios == 1 ? "" : "s", sum.passed, sum.failed);
  if (sum.not_applicable) fprintf(f, ", %d n/a", sum.not_applicable);
  if (sum.errors) fprintf(f, ", %d error%s", sum.errors, sum.errors == 1 ? "" : "s");
  fprintf(f, "%s; %d/%d verdicts hold", s->off, sum.verdicts - sum.verdicts_failed - sum.verdicts_skipped,
          sum.verdicts - sum.verdicts_skipped);
  if (sum.verdicts_skipped) fprintf(f, ", %d n/a", sum.verdicts_skipped);
  if (sum.incomplete) fprintf(f, "; %s%d trace%s incomplete%s", s->warn, sum.incomplete,
                              sum.incomplete == 1 ? "" : "s", s->off);
  fprintf(f, "; %s\n", rpt__fmt_ms(sum.time_ms, tbuf, sizeof tbuf));
  return ferror(f) ? RPT_EIO : 0;
}

/*
 * Redraws the live progress line "N/M scenarios, P passed, F failed".
 * Does nothing when tty is 0.
 */
void rpt_progress(FILE *f, int done, int total, int passed, int failed, int tty) {
  if (!tty || f == NULL) return;
  fprintf(f, "\r%d/%d scenarios, %d passed, %d failed\033[K", done, total, passed, failed);
  fflush(f);
}

/* Erases the progress line (before the table is written). */
void rpt_progress_clear(FILE *f, int tty) {
  if (!tty || f == NULL) return;
  fputs("\r\033[K", f);
  fflush(f);
}
