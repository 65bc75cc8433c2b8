/*
 * test_trace_fold.c - a report's trace read folded (trace_fold.c: the first
 * arrivals kept, every one folded as it streams past) gives the same
 * verdicts and the same terminal, JSON and JUnit reports as one read whole:
 * every data trace judged with one arrival kept against all kept; a request
 * that comes back after it was folded, and more requests open at once than
 * the fold holds, are read whole; the JSON attempts of a folded trace are
 * read again in order, an attempt that never ends included.
 */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/reports_int.h"
#include "rpt_test.h"

/* The terminal, JSON and JUnit reports of path judged with opts. */
typedef struct reports {
  int rc;
  char *term, *json, *junit;
  int folded; /* judged from the fold, not read whole */
} reports;

static reports judge(const char *path, int keep) {
  reports r = {0};
  rpt_opts o = {.keep_arrivals = keep};
  rpt_run *run = rpt_run_new();
  char err[RPT_ERRLEN];
  rpt_input in = {.trace_path = path, .opts = keep ? &o : NULL};
  r.rc = rpt_run_add(run, &in, err);
  if (r.rc == 0) {
    size_t len = 0;
    FILE *f = open_memstream(&r.term, &len);
    rpt_run_write_term(run, f, 0);
    fclose(f);
    r.json = rpt_run_json_text(run, err);
    char *x = rt_tmppath(".xml");
    rpt_run_write_junit(run, x, err);
    r.junit = rt_slurp(x, NULL);
    unlink(x);
    free(x);
    r.folded = rpt__trace_folded(run->e[0].trace);
  }
  rpt_run_free(run);
  return r;
}

static void reports_free(reports *r) {
  free(r->term);
  free(r->json);
  free(r->junit);
}

/* 1 when a and b are the same reports; names the first that differs. */
static int same(const char *name, const reports *a, const reports *b) {
  const char *what = a->rc != b->rc                           ? "exit code"
                     : a->rc                                  ? NULL
                     : !a->term || !b->term || strcmp(a->term, b->term) ? "terminal"
                     : !a->json || !b->json || strcmp(a->json, b->json) ? "JSON"
                     : !a->junit || !b->junit || strcmp(a->junit, b->junit) ? "JUnit"
                                                                          : NULL;
  if (what) fprintf(stderr, "\n  %s: the %s report differs when folded\n", name, what);
  return what == NULL;
}

static void test_every_data_trace(void) {
  DIR *d = opendir(rt_data_dir());
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  int n = 0, folded = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name);
    if (len < 6 || strcmp(de->d_name + len - 6, ".jsonl") != 0) continue;
    char path[4096];
    rt_data_path(de->d_name, path, sizeof path);
    reports whole = judge(path, 0), fold = judge(path, 1);
    CU_ASSERT(same(de->d_name, &whole, &fold));
    CU_ASSERT_FALSE(whole.folded);
    folded += fold.folded;
    n++;
    reports_free(&whole);
    reports_free(&fold);
  }
  closedir(d);
  CU_ASSERT(n > 100);
  /* Traces judged from the fold, not read whole (the others need a verdict
     the fold does not give: client accounts, effects, backoff...). */
  fprintf(stderr, "\n  %d data traces, %d judged folded\n", n, folded);
  CU_ASSERT(folded >= 20);
}

/* Writes a trace of requests 0..nreq-1, one 503 each then (every 7th) a
   retry 10 ms after a Retry-After of 1 s (a violation), then extra. */
static char *storm(int nreq, const char *expect, const char *extra) {
  size_t cap = (size_t)nreq * 600 + 4096, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n,
                        "{\"ev\":\"session\",\"t\":0,\"scenario\":\"s\",\"expect\":%s}\n", expect);
  long id = 1;
  for (int k = 0; k < nreq; k++) {
    double t0 = k * 10.0;
    n += (size_t)snprintf(t + n, cap - n,
                          "{\"ev\":\"arrive\",\"t\":%.1f,\"id\":%ld,\"key\":\"k%d\",\"attempt\":1}\n"
                          "{\"ev\":\"end\",\"t\":%.1f,\"id\":%ld,\"status\":503,"
                          "\"retry_after_ms\":1000}\n",
                          t0, id, k, t0 + 1, id);
    id++;
    if (k % 7 == 3) {
      n += (size_t)snprintf(t + n, cap - n,
                            "{\"ev\":\"arrive\",\"t\":%.1f,\"id\":%ld,\"key\":\"k%d\",\"attempt\":2}\n"
                            "{\"ev\":\"end\",\"t\":%.1f,\"id\":%ld,\"status\":200}\n",
                            t0 + 11, id, k, t0 + 12, id);
      id++;
    }
  }
  n += (size_t)snprintf(t + n, cap - n, "%s{\"ev\":\"done\",\"t\":%d}\n", extra, nreq * 10 + 100);
  char *p = rt_tmpfile(t, n);
  free(t);
  return p;
}

static const char *const EXPECT =
    "{\"attempts\":{\"max\":1},\"retry_after_honoured\":true,\"max_requests\":100000,"
    "\"herd\":{\"window\":0.05,\"max\":4},\"no_retry_after\":[503]}";

/* A bad client (retries too soon, too often) fails the same verdicts folded. */
static void test_folded_verdicts_fail(void) {
  char *p = storm(RPT__OPEN_MAX * 2, EXPECT, "");
  reports whole = judge(p, 0), fold = judge(p, 1);
  CU_ASSERT(fold.folded);
  CU_ASSERT(same("storm", &whole, &fold));
  CU_ASSERT(rt_has(fold.term, "2 attempts for request k3, expected 0..1 (and 1169 more of 8192"));
  CU_ASSERT(rt_has(fold.term, "attempt 2 of request k3 arrived 10 ms after a 503 asking for"));
  CU_ASSERT(rt_has(fold.term, "herd: peak 6 arrivals within 50 ms"));
  CU_ASSERT(rt_has(fold.term, "no_retry_after: attempt 2 of request k3 arrived 10 ms after a 503"));
  reports_free(&whole);
  reports_free(&fold);
  unlink(p);
  free(p);
}

/* A request seen again after it was folded: the trace is read whole, so
   its attempts are counted together. */
static void test_request_back_after_fold(void) {
  char extra[256];
  snprintf(extra, sizeof extra,
           "{\"ev\":\"arrive\",\"t\":99999,\"id\":999999,\"key\":\"k0\",\"attempt\":5}\n");
  char *p = storm(RPT__OPEN_MAX + 10, "{\"attempts\":1}", extra);
  reports whole = judge(p, 0), fold = judge(p, 1);
  CU_ASSERT_FALSE(fold.folded);
  CU_ASSERT(same("back", &whole, &fold));
  /* Folded twice, k0 would be two requests of one attempt: k3 first. */
  CU_ASSERT(rt_has(fold.term, "2 attempts for request k0, expected 1 (and"));
  reports_free(&whole);
  reports_free(&fold);
  unlink(p);
  free(p);
}

/* An arrival id repeating one folded: read whole, the same error. */
static void test_id_again_after_fold(void) {
  const char *extra = "{\"ev\":\"arrive\",\"t\":99999,\"id\":1,\"key\":\"new\",\"attempt\":1}\n";
  char *p = storm(RPT__OPEN_MAX + 10, "{\"attempts\":1}", extra);
  char err[RPT_ERRLEN];
  rpt_run *run = rpt_run_new();
  rpt_opts o = {.keep_arrivals = 1};
  rpt_input in = {.trace_path = p, .opts = &o};
  CU_ASSERT_EQUAL(rpt_run_add(run, &in, err), RPT_ETRACE);
  CU_ASSERT(rt_has(err, "arrival id 1 appears twice"));
  rpt_run_free(run);
  unlink(p);
  free(p);
}

/* Requests of 1,000 attempts, more attempts than the fold holds open in
   all: the oldest requests are folded early, the verdicts the same. */
static void test_many_attempts_held(void) {
  int nreq = RPT__HELD_MAX / 1000 + 20;
  size_t cap = (size_t)nreq * 1000 * 130 + 256, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n, "{\"ev\":\"session\",\"t\":0,\"expect\":"
                        "{\"attempts\":{\"max\":999},\"no_retry_after\":[401]}}\n");
  long id = 1;
  for (int k = 0; k < nreq; k++)
    for (int a = 1; a <= 1000; a++, id++)
      n += (size_t)snprintf(t + n, cap - n,
                            "{\"ev\":\"arrive\",\"t\":%ld,\"id\":%ld,\"key\":\"k%d\",\"attempt\":%d}\n"
                            "{\"ev\":\"end\",\"t\":%ld,\"id\":%ld,\"status\":%d}\n",
                            id * 2, id, k, a, id * 2 + 1, id, k == 70 && a == 3 ? 401 : 503);
  char *p = rt_tmpfile(t, n);
  free(t);
  reports whole = judge(p, 0), fold = judge(p, 1);
  CU_ASSERT(fold.folded);
  CU_ASSERT(same("held", &whole, &fold));
  CU_ASSERT(rt_has(fold.term, "1000 attempts for request k0, expected 0..999"));
  CU_ASSERT(rt_has(fold.term, "attempt 4 of request k70 arrived 1.0 ms after a 401"));
  reports_free(&whole);
  reports_free(&fold);
  unlink(p);
  free(p);
}

/* More requests open (no end) at once than the fold holds: read whole. */
static void test_too_many_open(void) {
  size_t cap = (RPT__OPEN_MAX + 10) * 120 + 256, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n,
                        "{\"ev\":\"session\",\"t\":0,\"expect\":{\"attempts\":1}}\n");
  for (int k = 0; k < RPT__OPEN_MAX + 10; k++)
    n += (size_t)snprintf(t + n, cap - n,
                          "{\"ev\":\"arrive\",\"t\":%d,\"id\":%d,\"key\":\"k%d\",\"attempt\":1}\n",
                          k, k, k);
  char *p = rt_tmpfile(t, n);
  free(t);
  reports whole = judge(p, 0), fold = judge(p, 1);
  CU_ASSERT_FALSE(fold.folded);
  CU_ASSERT(same("open", &whole, &fold));
  reports_free(&whole);
  reports_free(&fold);
  unlink(p);
  free(p);
}

/* The JSON attempts of a folded trace, read again: an attempt that never
   ends, ends out of order, more waiting than the re-read holds at once. */
static void test_json_attempts_read_again(void) {
  char extra[512];
  snprintf(extra, sizeof extra,
           "{\"ev\":\"arrive\",\"t\":5,\"id\":0,\"key\":\"hung\",\"attempt\":1}\n");
  /* The hung attempt arrives before the others: everything after it waits. */
  char *p = storm(5000, EXPECT, extra);
  char *body = rt_slurp(p, NULL);
  char *nl = strchr(body, '\n');
  size_t len = strlen(body);
  char *moved = malloc(len + 1);
  /* session line, then the hung arrival, then the rest without it. */
  char *hung = strstr(body, "{\"ev\":\"arrive\",\"t\":5,\"id\":0,");
  size_t hl = (size_t)(strchr(hung, '\n') - hung) + 1, sl = (size_t)(nl - body) + 1, m = 0;
  memcpy(moved + m, body, sl), m += sl;
  memcpy(moved + m, hung, hl), m += hl;
  memcpy(moved + m, body + sl, (size_t)(hung - body) - sl), m += (size_t)(hung - body) - sl;
  memcpy(moved + m, hung + hl, len - (size_t)(hung - body) - hl), m += len - (size_t)(hung - body) - hl;
  char *q = rt_tmpfile(moved, m);
  reports whole = judge(q, 0), fold = judge(q, 1);
  CU_ASSERT(fold.folded);
  CU_ASSERT(same("hung", &whole, &fold));
  CU_ASSERT(rt_has(fold.json, "\"key\":\t\"hung\""));
  reports_free(&whole);
  reports_free(&fold);
  unlink(p);
  unlink(q);
  free(p);
  free(q);
  free(body);
  free(moved);
}

#define ADD(s, name, fn) \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_trace_fold(void) {
  CU_pSuite s = CU_add_suite("trace_fold", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "every data trace: the same reports folded", test_every_data_trace);
  ADD(s, "a bad client fails the same verdicts folded", test_folded_verdicts_fail);
  ADD(s, "a request back after it was folded: read whole", test_request_back_after_fold);
  ADD(s, "an id repeating one folded: read whole, the same error", test_id_again_after_fold);
  ADD(s, "more attempts than the fold holds open: the oldest folded", test_many_attempts_held);
  ADD(s, "more requests open than the fold holds: read whole", test_too_many_open);
  ADD(s, "JSON attempts of a folded trace read again in order", test_json_attempts_read_again);
  return 0;
}
