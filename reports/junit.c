/*
 * junit.c - JUnit XML for CI: one <testsuite> for the run, one <testcase>
 * per scenario, one <failure> per failed verdict carrying its evidence, an
 * <error> for a scenario that could not be judged. Every text is escaped and
 * cleaned to valid UTF-8, so the file is well-formed whatever the trace held.
 */
#include <string.h>

#include "reports/reports_int.h"

/* classname: "fusebox." + the scenario's folder ("ratelimit"), or "fusebox". */
static void put_classname(FILE *f, const char *file) {
  fputs("fusebox", f);
  if (file == NULL) return;
  const char *slash = strrchr(file, '/');
  if (slash == NULL || slash == file) return;
  const char *start = slash - 1;
  while (start > file && start[-1] != '/') start--;
  char dir[128];
  size_t n = (size_t)(slash - start);
  if (n == 0 || n >= sizeof dir) return;
  memcpy(dir, start, n);
  dir[n] = '\0';
  fputc('.', f);
  rpt__put_xml(f, dir, 1);
}

static void testcase(FILE *f, const rpt__entry *e) {
  fputs("    <testcase classname=\"", f);
  put_classname(f, e->file);
  fputs("\" name=\"", f);
  rpt__put_xml(f, e->name, 1);
  if (e->client) {
    fputs(" [", f);
    rpt__put_xml(f, e->client, 1);
    fputc(']', f);
  }
  fputc('"', f);
  if (e->file) {
    fputs(" file=\"", f);
    rpt__put_xml(f, e->file, 1);
    fputc('"', f);
  }
  fprintf(f, " time=\"%.3f\">\n", rpt__entry_time(e) / 1000.0);
  if (e->error) {
    fputs("      <error message=\"", f);
    rpt__put_xml(f, e->error, 1);
    fputs("\" type=\"error\">", f);
    rpt__put_xml(f, e->error, 0);
    fputs("</error>\n", f);
  }
  /* One <failure> naming every failed verdict, each with its evidence. */
  int nfail = rpt_judgement_failed(e->j);
  if (!e->error && nfail > 0) {
    fprintf(f, "      <failure message=\"%d verdict%s failed: ", nfail, nfail == 1 ? "" : "s");
    for (int i = 0, k = 0; i < e->j->n; i++)
      if (e->j->v[i].status == RPT_FAIL) {
        if (k++) fputs(", ", f);
        rpt__put_xml(f, e->j->v[i].name, 1);
      }
    int killed, code = rpt__entry_exit(e, &killed);
    if (killed) fputs(" (killed by --timeout)", f);
    else if (code >= 0) fprintf(f, " (exit %d)", code);
    fputs("\" type=\"verdict\">", f);
    for (int i = 0; i < e->j->n; i++) {
      const rpt_verdict *v = &e->j->v[i];
      if (v->status != RPT_FAIL) continue;
      rpt__put_xml(f, v->name, 0);
      fputs(": ", f);
      rpt__put_xml(f, v->evidence, 0);
      fputc('\n', f);
    }
    const char *line = e->trace && e->trace->ncli ? e->trace->cli[0].error_line : NULL;
    if (line && line[0]) {
      fputs("client error: ", f);
      rpt__put_xml(f, line, 0);
      fputc('\n', f);
    }
    fputs("</failure>\n", f);
  } else if (!e->error && strcmp(rpt__entry_status(e), "n/a") == 0) {
    const rpt_verdict *ex = rpt_judgement_find(e->j, "exercised");
    fputs("      <skipped message=\"", f);
    if (ex && ex->status == RPT_NA) {
      fputs("not exercised: ", f);
      rpt__put_xml(f, ex->evidence, 1);
    } else {
      fputs("no verdict applied to what the client did", f);
    }
    fputs("\"/>\n", f);
  }
  /* Every verdict, for people reading the CI log. */
  int any = (e->j && e->j->n) || (e->trace && !rpt_trace_complete(e->trace));
  if (any) {
    fputs("      <system-out>", f);
    for (int i = 0; e->j && i < e->j->n; i++) {
      const rpt_verdict *v = &e->j->v[i];
      fputs(v->status == RPT_PASS ? "PASS " : v->status == RPT_FAIL ? "FAIL " : "N/A  ", f);
      rpt__put_xml(f, v->name, 0);
      fputs(": ", f);
      rpt__put_xml(f, v->evidence, 0);
      fputc('\n', f);
    }
    if (e->trace && !rpt_trace_complete(e->trace)) {
      fputs("WARN ", f);
      rpt__put_xml(f, e->trace->warning, 0);
      fputc('\n', f);
    }
    fputs("</system-out>\n", f);
  }
  fputs("    </testcase>\n", f);
}


/* Writes the run as JUnit XML to path ("-" = stdout). */
int rpt_run_write_junit(const rpt_run *run, const char *path, char err[RPT_ERRLEN]) {
  if (run == NULL || err == NULL) return RPT_EINVAL;
  FILE *f = rpt__open_out(path, err);
  if (f == NULL) return RPT_EIO;
  rpt_summary s;
  rpt_run_summary(run, &s);
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
  fprintf(f,
          "<testsuites name=\"fusebox\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
          "time=\"%.3f\">\n",
          s.scenarios, s.failed, s.errors, s.time_ms / 1000.0);
  rpt__junit_suite(f, run, NULL);
  fputs("</testsuites>\n", f);
  return rpt__close_out(f, path, err);
}

/* Writes one <testsuite> for a run (name NULL = "fusebox", else "fusebox NAME"). */
void rpt__junit_suite(FILE *f, const rpt_run *run, const char *name) {
  rpt_summary s;
  rpt_run_summary(run, &s);
  double secs = s.time_ms / 1000.0;
  fputs("  <testsuite name=\"fusebox", f);
  if (name) {
    fputc(' ', f);
    rpt__put_xml(f, name, 1);
  }
  fprintf(f,
          "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
          "skipped=\"%d\" time=\"%.3f\">\n",
          s.scenarios, s.failed, s.errors, s.not_applicable, secs);
  char head[RPT_ERRLEN * 2];
  if (rpt_run_headline(run, head, sizeof head)) {
    fputs("    <properties><property name=\"headline\" value=\"", f);
    rpt__put_xml(f, head, 1);
    fputs("\"/></properties>\n", f);
  }
  for (int i = 0; i < run->n; i++) testcase(f, &run->e[i]);
  fputs("  </testsuite>\n", f);
}
