/*
 * fuzz_trace.c - the reports module on hostile input: the trace reader
 * (rpt_trace_read_mem), the verdicts (rpt_judge) with a fixed expect table
 * that names every family and with the trace's own session.expect, every
 * writer (terminal, JSON, JUnit, HTML) on the judged run, and the input
 * taken as an expect table by itself (rpt_expect_check).
 */
#include "reports/reports.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every verdict family, with values that make each one judge something. */
static const char EXPECT[] =
    "{\"attempts\":{\"min\":1,\"max\":3},\"max_requests\":10,"
    "\"no_retry_after\":[401,\"permanent\",\"quota\",429],"
    "\"retry_after_honoured\":true,"
    "\"backoff\":{\"min_gap\":0.2,\"max_gap\":5,\"growth\":true,\"jitter\":true},"
    "\"within_deadline\":true,\"herd\":{\"window\":1,\"max\":3},"
    "\"outcome\":[\"ok\",\"degraded\"],\"side_effects\":true,"
    "\"no_stream_splice\":true,\"cost\":{\"max_ratio\":2,\"max_billed\":1000}}";
static const char CLIENT[] = "{\"deadline\":5,\"attempts\":3}";

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  devnull = fopen("/dev/null", "w");
  return devnull ? 0 : 1;
}

static void check_judgement(const rpt_judgement *j) {
  int n = rpt_judgement_count(j), failed = 0;
  for (int i = 0; i < n; i++) {
    const rpt_verdict *v = rpt_judgement_verdict(j, i);
    if (v == NULL || v->name == NULL || v->evidence == NULL) abort();
    if (v->status != RPT_PASS && v->status != RPT_FAIL && v->status != RPT_SKIP) abort();
    if (strlen(v->evidence) > 4096) abort();
    failed += v->status == RPT_FAIL;
    if (rpt_judgement_find(j, v->name) == NULL) abort();
  }
  if (failed != rpt_judgement_failed(j)) abort();
}

static void judge(const rpt_trace *tr, const char *expect, const char *client) {
  static const rpt_opts opts[2] = {{.time_scale = 0}, {.time_scale = 2.5, .tol_ms = 10, .slack_ms = -1}};
  for (int o = 0; o < 2; o++) {
    rpt_judgement *j = NULL;
    char err[RPT_ERRLEN];
    int rc = rpt_judge(tr, expect, client, &opts[o], &j, err);
    if (rc == 0) {
      if (j == NULL) abort();
      check_judgement(j);
    } else if (j != NULL || memchr(err, '\0', sizeof err) == NULL) {
      abort();
    }
    rpt_judgement_free(j);
  }
}

static void write_all(rpt_trace *tr, const char *expect) {
  rpt_run *run = rpt_run_new();
  if (run == NULL) abort();
  char err[RPT_ERRLEN];
  rpt_input in = {.client = "guard", .trace = tr, .expect_json = expect};
  if (rpt_run_add(run, &in, err) != 0)
    rpt_run_add_error(run, NULL, NULL, err); /* the run took the trace anyway */
  rpt_run_add_verdict(run, "command exited 0", RPT_PASS, "exit status 0");
  rpt_summary s;
  rpt_run_summary(run, &s);
  if (s.scenarios != 1) abort();
  rpt_run_write_term(run, devnull, 1);
  rpt_run_write_term(run, devnull, 0);
  rpt_run_write_json(run, "/dev/null", err);
  rpt_run_write_junit(run, "/dev/null", err);
  rpt_run_write_html(run, "/dev/null", err);
  rpt_run_free(run);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 256 * 1024) return 0;
  rpt_trace *tr = NULL;
  char err[RPT_ERRLEN];
  int rc = rpt_trace_read_mem((const char *)data, size, "fuzz.jsonl", &tr, err);
  if (rc == 0) {
    if (tr == NULL) abort();
    (void)rpt_trace_scenario(tr);
    (void)rpt_trace_file(tr);
    (void)rpt_trace_time_scale(tr);
    (void)rpt_trace_duration_ms(tr);
    (void)rpt_trace_arrivals(tr);
    if (rpt_trace_complete(tr) != (rpt_trace_warning(tr)[0] == '\0')) abort();
    judge(tr, EXPECT, CLIENT);
    judge(tr, EXPECT, NULL);
    const char *own = rpt_trace_expect_json(tr);
    if (own != NULL) judge(tr, own, rpt_trace_client_json(tr));
    write_all(tr, own != NULL ? own : EXPECT); /* takes tr */
  } else {
    if (tr != NULL) abort();
    if (err[0] == '\0' || memchr(err, '\0', sizeof err) == NULL) abort();
  }

  /* The same bytes as an expect table. */
  char *text = malloc(size + 1);
  if (text == NULL) abort();
  memcpy(text, data, size);
  text[size] = '\0';
  rc = rpt_expect_check(text, NULL, err);
  rc = rpt_expect_check(text, CLIENT, err);
  if (rc != 0 && err[0] == '\0') abort(); /* an error says why */
  free(text);
  return 0;
}
