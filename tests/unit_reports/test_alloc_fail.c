/*
 * test_alloc_fail.c - the reports module when memory runs out: reading
 * three small data traces (rpt_trace_read_mem), judging them with their own
 * expect table and with one that names every family (rpt_judge), checking
 * an expect table (rpt_expect_check), collecting them in a run and writing
 * it as a terminal table, JSON, JUnit and HTML, with the Nth allocation
 * failing, for every N up to the total. For every N: no crash, the first
 * failing call returns RPT_ENOMEM (RPT_EIO for a writer whose fopen ran out
 * of memory), a call that succeeds gives the same verdicts and the same
 * bytes as without failures, and after everything is freed the number of
 * live allocations is back where it started (a leak check by counting).
 * Then again with every allocation from the Nth on failing.
 *
 * The file replaces malloc, calloc, realloc and free for the whole test
 * program (glibc's strdup, cJSON and stdio call them); they count, fail when
 * armed, and otherwise forward to glibc's own allocator. Under
 * AddressSanitizer, which owns the allocator, the suite only says it was
 * skipped.
 */
#include "rpt_test.h"

#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define AF_SKIP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define AF_SKIP 1
#endif
#endif

#ifndef AF_SKIP

#include "fail_alloc.h"

/* ------------------------------------------------------------ the work */

static const char *const TRACES[] = {"fx_pass.jsonl", "backoff_pass.jsonl",
                                     "splice_fail.jsonl"};
#define NTRACES 3

/* Every family, with values that make each one judge something. */
static const char EXPECT[] =
    "{\"attempts\":{\"min\":1,\"max\":3},\"max_requests\":10,"
    "\"no_retry_after\":[401,\"permanent\",\"quota\"],\"retry_after_honoured\":true,"
    "\"backoff\":{\"min_gap\":0.2,\"max_gap\":5,\"growth\":true,\"jitter\":true},"
    "\"within_deadline\":true,\"herd\":{\"window\":1,\"max\":3},"
    "\"outcome\":[\"ok\",\"degraded\"],\"side_effects\":true,"
    "\"no_stream_splice\":true,\"cost\":{\"max_ratio\":2,\"max_billed\":1000}}";
static const char CLIENT[] = "{\"deadline\":5}";

/* The inputs, read before any allocation is counted. */
typedef struct inputs {
  char *text[NTRACES];
  size_t len[NTRACES];
  char *out[3]; /* JSON, JUnit, HTML paths */
  FILE *term;
} inputs;

/* What a pass produced. */
typedef struct work {
  int rc;         /* RPT_OK or the first error code */
  int eio_oom;    /* that code was RPT_EIO from a writer that ran out of memory */
  char sig[2048]; /* the verdicts, in order */
} work;

static void sig_judgement(work *w, const rpt_judgement *j) {
  for (int i = 0; i < rpt_judgement_count(j); i++) {
    const rpt_verdict *v = rpt_judgement_verdict(j, i);
    size_t len = strlen(w->sig);
    snprintf(w->sig + len, sizeof w->sig - len, "%s=%d:%.60s;", v->name, (int)v->status,
             v->evidence);
  }
  size_t len = strlen(w->sig);
  snprintf(w->sig + len, sizeof w->sig - len, "|");
}

/* A writer's RPT_EIO is accepted when it ran out of memory (fopen, stdio). */
static int writer_failed(work *w, int rc, const char *err) {
  if (rc == RPT_OK) return 0;
  w->rc = rc;
  if (rc == RPT_EIO && strstr(err, strerror(ENOMEM)) != NULL) w->eio_oom = 1;
  return 1;
}

/* Reads, judges and writes everything; stops at the first error code. */
static void run_work(const inputs *in, work *w) {
  memset(w, 0, sizeof *w);
  char err[RPT_ERRLEN] = "";
  rpt_run *run = NULL;
  rpt_trace *tr = NULL;
  rpt_judgement *j = NULL;

  w->rc = rpt_expect_check(EXPECT, CLIENT, err);
  if (w->rc != RPT_OK) goto out;
  run = rpt_run_new();
  if (run == NULL) {
    w->rc = RPT_ENOMEM;
    goto out;
  }
  for (int i = 0; i < NTRACES; i++) {
    w->rc = rpt_trace_read_mem(in->text[i], in->len[i], TRACES[i], &tr, err);
    if (w->rc != RPT_OK) goto out;
    w->rc = rpt_judge(tr, EXPECT, CLIENT, NULL, &j, err);
    if (w->rc != RPT_OK) goto out;
    sig_judgement(w, j);
    rpt_judgement_free(j);
    j = NULL;
    rpt_input ri = {.client = "guard", .trace = tr}; /* its own expect table */
    tr = NULL; /* the run takes it, even when rpt_run_add fails */
    w->rc = rpt_run_add(run, &ri, err);
    if (w->rc != RPT_OK) goto out;
  }
  w->rc = rpt_run_add_error(run, "broken", "broken.lua", "did not load: syntax error");
  if (w->rc != RPT_OK) goto out;
  w->rc = rpt_run_add_verdict(run, "command exited 0", RPT_PASS, "exit status 0");
  if (w->rc != RPT_OK) goto out;

  rewind(in->term);
  w->rc = rpt_run_write_term(run, in->term, 1);
  if (w->rc == RPT_OK) w->rc = fflush(in->term) == 0 ? RPT_OK : RPT_EIO;
  if (w->rc != RPT_OK) goto out;
  if (writer_failed(w, rpt_run_write_json(run, in->out[0], err), err)) goto out;
  if (writer_failed(w, rpt_run_write_junit(run, in->out[1], err), err)) goto out;
  writer_failed(w, rpt_run_write_html(run, in->out[2], err), err);
out:
  if (w->rc != RPT_OK && err[0] == '\0' && w->rc != RPT_ENOMEM) w->rc = 99; /* says why */
  rpt_judgement_free(j);
  rpt_trace_free(tr);
  rpt_run_free(run);
}

/* The bytes the writers left, to compare with a pass that failed nothing. */
typedef struct outputs {
  char *data[4];
  size_t len[4];
} outputs;

static void outputs_read(const inputs *in, outputs *o) {
  fflush(in->term);
  long n = ftell(in->term);
  o->len[0] = n > 0 ? (size_t)n : 0;
  o->data[0] = calloc(1, o->len[0] + 1);
  if (o->data[0] != NULL) {
    rewind(in->term);
    o->len[0] = fread(o->data[0], 1, o->len[0], in->term);
  }
  for (int i = 0; i < 3; i++) o->data[i + 1] = rt_slurp(in->out[i], &o->len[i + 1]);
}

static int outputs_same(const outputs *a, const outputs *b) {
  for (int i = 0; i < 4; i++)
    if (a->data[i] == NULL || b->data[i] == NULL || a->len[i] != b->len[i] ||
        memcmp(a->data[i], b->data[i], a->len[i]) != 0)
      return 0;
  return 1;
}

static void outputs_free(outputs *o) {
  for (int i = 0; i < 4; i++) free(o->data[i]);
}

/* Runs the work failing the Nth allocation (or every one from the Nth on),
 * for every N up to the total of a pass that fails none. */
static void sweep(int fail_rest) {
  inputs in;
  memset(&in, 0, sizeof in);
  for (int i = 0; i < NTRACES; i++) {
    char path[1024];
    in.text[i] = rt_slurp(rt_data_path(TRACES[i], path, sizeof path), &in.len[i]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in.text[i]);
  }
  in.out[0] = rt_tmppath(".json");
  in.out[1] = rt_tmppath(".xml");
  in.out[2] = rt_tmppath(".html");
  in.term = tmpfile();
  CU_ASSERT_PTR_NOT_NULL_FATAL(in.term);
  setvbuf(in.term, NULL, _IOFBF, 1 << 16); /* its buffer, allocated now */
  fputc('x', in.term);
  rewind(in.term);

  work base, w;
  outputs obase, o;
  long live0 = af_live;
  af_arm(0, 0);
  run_work(&in, &base);
  af_disarm();
  long total = af_count, live1 = af_live;
  CU_ASSERT_EQUAL_FATAL(base.rc, RPT_OK);
  outputs_read(&in, &obase);
  if (total == 0) {
    fprintf(stderr, "\n  alloc_fail: skipped: malloc is not this file's (valgrind takes it"
                    " over unless run with --soname-synonyms=somalloc=nouserintercepts)\n");
    goto done;
  }
  CU_ASSERT_EQUAL(live1, live0);
  CU_ASSERT(total > 100);

  long enomem = 0, eio = 0, same = 0, differ = 0, bad = 0, leaks = 0;
  for (long n = 1; n <= total + 1; n++) {
    long before = af_live;
    af_arm(n, fail_rest);
    run_work(&in, &w);
    af_disarm();
    if (af_live != before) {
      leaks++;
      if (leaks <= 5)
        fprintf(stderr, "\n  alloc_fail: %ld block(s) leaked when allocation %ld%s failed",
                af_live - before, n, fail_rest ? " on" : "");
    }
    if (w.rc == RPT_ENOMEM) {
      enomem++;
    } else if (w.rc == RPT_EIO && w.eio_oom) {
      eio++;
    } else if (w.rc != RPT_OK) {
      bad++;
      if (bad <= 5)
        fprintf(stderr, "\n  alloc_fail: allocation %ld%s failed: code %d", n,
                fail_rest ? " on" : "", w.rc);
    } else {
      outputs_read(&in, &o);
      if (strcmp(w.sig, base.sig) == 0 && outputs_same(&o, &obase)) {
        same++;
      } else {
        differ++; /* RPT_OK, but the verdicts or the reports differ */
        if (differ <= 5)
          fprintf(stderr, "\n  alloc_fail: allocation %ld%s failed, yet RPT_OK with %s",
                  n, fail_rest ? " on" : "",
                  strcmp(w.sig, base.sig) ? "other verdicts" : "other report bytes");
      }
      outputs_free(&o);
    }
    CU_ASSERT(n > total ? af_failed == 0 : af_failed > 0);
  }
  fprintf(stderr, "\n  alloc_fail (%s): %ld allocations; ENOMEM %ld, EIO (out of memory) %ld, "
                  "same result %ld, differ %ld, other %ld, leaks %ld\n",
          fail_rest ? "from N on" : "Nth only", total, enomem, eio, same, differ, bad, leaks);
  CU_ASSERT_EQUAL(leaks, 0);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(differ, 0);
  CU_ASSERT(enomem > 0);

done:
  outputs_free(&obase);
  fclose(in.term);
  for (int i = 0; i < 3; i++) {
    unlink(in.out[i]);
    free(in.out[i]);
  }
  for (int i = 0; i < NTRACES; i++) free(in.text[i]);
}

static void test_nth(void) { sweep(0); }
static void test_from_nth(void) { sweep(1); }

/* Registers the allocation-failure suite. */
int suite_alloc_fail(void) {
  CU_pSuite s = CU_add_suite("alloc_fail", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "read, judge, write with the Nth allocation failing, every N",
                   test_nth) ||
      !CU_add_test(s, "read, judge, write with every allocation from the Nth on failing",
                   test_from_nth))
    return CU_get_error();
  return 0;
}

#else /* AF_SKIP */

static void test_skipped(void) {
  fprintf(stderr, "\n  alloc_fail: skipped under AddressSanitizer (it owns malloc)\n");
}

/* Registers the allocation-failure suite (a note under AddressSanitizer). */
int suite_alloc_fail(void) {
  CU_pSuite s = CU_add_suite("alloc_fail", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "skipped under AddressSanitizer", test_skipped)) return CU_get_error();
  return 0;
}

#endif
