/*
 * rpt_test.h - helpers of the unit_reports tests: where the trace data
 * lives, temporary files, and the data-driven check of a trace file against
 * the verdicts written beside it.
 *
 * A data trace (tests/data/traces/NAME.jsonl) carries its own case in the
 * session event, in fields the reader ignores:
 *   "expect": {...}, "client": {...}   the tables judged (as a run writes them)
 *   "x_test": {"verdicts": {"attempts": "pass"|"fail"|"skip", ...},
 *              "evidence": {"attempts": "substring of the evidence"},
 *              "count": N,               verdicts expected in all (optional)
 *              "complete": true|false,   (optional)
 *              "error": "substring"}     judging must fail with RPT_EEXPECT
 */
#ifndef RPT_TEST_H
#define RPT_TEST_H

#include <stddef.h>

#include "reports/reports.h"

/* The folder of the data traces (no trailing slash). */
const char *rt_data_dir(void);
/* The full path of data trace name into out; returns out. */
const char *rt_data_path(const char *name, char *out, size_t n);
/* Writes text to a new temporary file; returns its path (caller frees and unlinks). */
char *rt_tmpfile(const char *text, size_t len);
/* A temporary path that does not exist yet (caller frees and unlinks). */
char *rt_tmppath(const char *suffix);
/* Reads a whole file (caller frees); NULL on failure. */
char *rt_slurp(const char *path, size_t *len);
/*
 * Checks one data trace against its x_test. Returns 1 when it holds, else 0
 * with the reason in why.
 */
int rt_check_data_file(const char *path, char *why, size_t n);
/* Runs rt_check_data_file on every data trace whose name starts with prefix,
   one CUnit assertion each (at least one file must match). */
void rt_check_prefix(const char *prefix);
/* Judges a trace given as text. The caller frees the judgement. */
rpt_judgement *rt_judge_text(const char *trace, const char *expect, const char *client,
                             int *rc, char err[RPT_ERRLEN]);
/* The status of the named verdict, or -1 when absent. */
int rt_status(const rpt_judgement *j, const char *name);
/* The evidence of the named verdict, or "" when there is none (never NULL,
   so a missing verdict fails the assertion instead of crashing). */
const char *rt_evidence(const rpt_judgement *j, const char *name);
/* 1 when haystack contains needle. */
int rt_has(const char *haystack, const char *needle);

#endif

#ifndef RPT_TEST_RUN_DECLARED
#define RPT_TEST_RUN_DECLARED
/*
 * A run of four scenarios: one passing (with a Retry-After), one failing,
 * one whose names, keys and providers are hostile (markup, quotes, escape
 * sequences, invalid UTF-8) and one error. The caller frees it.
 */
rpt_run *rt_sample_run(void);
/* The hostile scenario name used in rt_sample_run (after JSON decoding). */
#define RT_HOSTILE_NAME "<script>alert(\"x\")</script> & 'q' \x1b[31mred"
#endif
