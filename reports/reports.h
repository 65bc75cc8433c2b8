/*
 * reports.h - judging fusebox traces and writing reports.
 *
 * The reports module knows two things only: the trace format (docs/trace.md)
 * and a scenario's `expect` table (plus its `client` table, for the
 * deadline). It reads a trace, checks every expectation against it and gives
 * a verdict with one line of evidence for each; a run collects the judged
 * scenarios and writes them as a terminal table, JSON, JUnit XML or one
 * self-contained HTML page.
 *
 * Ownership, in one fixed sentence per function: "The caller owns X" means
 * the caller must release X with the matching _free; "valid until Y" means
 * the pointer belongs to Y. Nothing here prints, exits or keeps global state;
 * a rpt_run or rpt_trace must not be used from two threads at once, but
 * different objects may be used from different threads.
 */
#ifndef FUSEBOX_REPORTS_H
#define FUSEBOX_REPORTS_H

#include <stddef.h>
#include <stdio.h>

#define RPT_ERRLEN 256

/* Bounds on what is read: longer lines or more events are an error. */
#define RPT_MAX_LINE (1024 * 1024)
#define RPT_MAX_EVENTS 1000000

/* Error codes returned by rpt_ functions (0 is success). */
enum {
  RPT_OK = 0,
  RPT_ENOMEM = -1,  /* out of memory */
  RPT_EIO = -2,     /* a file could not be read or written */
  RPT_ETRACE = -3,  /* the input is not a fusebox trace, or is malformed */
  RPT_ETOOBIG = -4, /* a line, a trace or a run is over its bound */
  RPT_EEXPECT = -5, /* a bad expect or client table (unknown key, bad value) */
  RPT_EINVAL = -6   /* a bad argument */
};

/* A static description of an error code. */
const char *rpt_strerror(int code);

/* ----------------------------------------------------------------- traces */

typedef struct rpt_trace rpt_trace;

/*
 * Reads the JSON Lines trace at path. A cut last line (a killed run) or a
 * missing `done` event is not an error: the trace is marked incomplete (see
 * rpt_trace_complete) and judged on what it holds. A file that is not a
 * trace, a malformed line before the last one, or a line or event count over
 * the bounds gives RPT_ETRACE / RPT_ETOOBIG with "path:line: reason" in err.
 * The caller owns *out and releases it with rpt_trace_free.
 */
int rpt_trace_read_file(const char *path, rpt_trace **out,
                        char err[RPT_ERRLEN]);

/*
 * Same as rpt_trace_read_file, from len bytes of text; name is used in
 * messages. The caller owns *out and releases it with rpt_trace_free.
 */
int rpt_trace_read_mem(const char *text, size_t len, const char *name,
                       rpt_trace **out, char err[RPT_ERRLEN]);

/* Releases a trace. NULL is a no-op. */
void rpt_trace_free(rpt_trace *tr);

/*
 * Facts about a trace. Returned strings are valid until rpt_trace_free and
 * may be NULL when the session event did not carry them.
 */
const char *rpt_trace_scenario(const rpt_trace *tr);   /* session.scenario */
const char *rpt_trace_file(const rpt_trace *tr);       /* session.file */
const char *rpt_trace_expect_json(const rpt_trace *tr); /* session.expect */
const char *rpt_trace_client_json(const rpt_trace *tr); /* session.client */
double rpt_trace_time_scale(const rpt_trace *tr); /* session.time_scale, 1 if absent */
double rpt_trace_duration_ms(const rpt_trace *tr); /* t of the last event */
long rpt_trace_arrivals(const rpt_trace *tr);
/* One arrival of a trace, as `fusebox learn` reads a probe's. Times are
   the trace's (ms from the session's start); strings are valid until
   rpt_trace_free. */
typedef struct rpt_arrival_info {
  double t_arrive_ms, t_end_ms; /* t_end_ms < 0: the attempt never ended */
  int status;                   /* 0: no status line was sent */
  int attempt;                  /* nth arrival of its logical request */
  const char *key;              /* the request key ("idem:..." when it carried an Idempotency-Key) */
  const char *method;
  int stream;                   /* the request asked for a stream */
} rpt_arrival_info;
/* Arrival i (0 <= i < rpt_trace_arrivals) in arrival order; RPT_EINVAL out of range. */
int rpt_trace_arrival(const rpt_trace *tr, long i, rpt_arrival_info *out);
/* 1 when the trace ends with `done` and no line was cut, else 0. */
int rpt_trace_complete(const rpt_trace *tr);
/* Why the trace is incomplete ("" when complete); valid until rpt_trace_free. */
const char *rpt_trace_warning(const rpt_trace *tr);

/* ------------------------------------------------------------- fleets */
/*
 * Several servers of one fleet (serve --state, docs/fleet.md) each write a
 * trace whose session event names the fleet session. Judged one by one
 * they would each see part of the story, so they are merged into one
 * timeline first and judged as one provider.
 */
typedef struct rpt_group {
  char *name;       /* a fleet: its traces joined with " + "; else the path */
  const char *path; /* a lone trace (text NULL): read it from here; borrowed */
  char *text;       /* a fleet's merged trace, JSON Lines; NULL for a lone trace */
  size_t len;
  int ntraces;      /* traces merged into this one */
  char *invalid;    /* the fleet lost its shared state: why the run is
                       invalid (judge nothing); NULL when valid */
} rpt_group;

/*
 * Groups paths: traces of one fleet session become one merged trace, every
 * other trace stays on its own, in the order first seen. A path that cannot
 * be read stays on its own too (reading it reports the error). The caller
 * owns *out (n_out groups) and releases it with rpt_groups_free.
 */
int rpt_traces_group(const char *const *paths, int n, rpt_group **out, int *n_out,
                     char err[RPT_ERRLEN]);
/* Releases groups; NULL is a no-op. */
void rpt_groups_free(rpt_group *g, int n);

/* --------------------------------------------------------------- verdicts */

/*
 * A verdict holds (pass), is broken (fail), or does not apply (n/a): the
 * situation it judges never arose in this trace (no Retry-After was sent,
 * no stream, no effect call, no retry) or the trace cannot tell (no client
 * account). n/a is never counted as a pass; every writer shows it apart.
 */
typedef enum rpt_status {
  RPT_PASS = 0,
  RPT_FAIL = 1,
  RPT_NA = 2
} rpt_status;
#define RPT_SKIP RPT_NA /* the older name */

/* "pass", "fail" or "n/a". */
const char *rpt_status_word(rpt_status s);

/* One verdict: an expectation's name, its status and one line of evidence. */
typedef struct rpt_verdict {
  const char *name;
  rpt_status status;
  const char *evidence;
} rpt_verdict;

/*
 * Judging options. Tolerances: a lower bound on a gap (Retry-After, min_gap)
 * is relaxed, and an upper bound (deadline, max_gap) loosened, by
 * tol_ms * time_scale + slack_ms; the deadline also gets 5 % of itself.
 */
typedef struct rpt_opts {
  double time_scale; /* 0 = the trace's session.time_scale */
  double tol_ms;     /* scenario-time tolerance in ms, scaled; 0 = 50 */
  double slack_ms;   /* wall-clock slack in ms, not scaled; 0 = 20, <0 = none */
  int keep_arrivals; /* rpt_run_add reading trace_path: arrivals kept whole for the
                        timelines (the rest folded as they stream past, memory
                        bounded); 0 = 5,000. Tests set it low to judge folded. */
} rpt_opts;

typedef struct rpt_judgement rpt_judgement;

/*
 * Checks every expectation of expect_json (the scenario's `expect` table as
 * a JSON object) against the trace. client_json is the scenario's `client`
 * table as JSON (for `deadline`), or NULL. opts may be NULL for defaults.
 * An unknown expectation or a bad value gives RPT_EEXPECT with the reason in
 * err. Verdicts come in a fixed order (not the table's). The caller owns
 * *out and releases it with rpt_judgement_free.
 */
int rpt_judge(const rpt_trace *tr, const char *expect_json,
              const char *client_json, const rpt_opts *opts,
              rpt_judgement **out, char err[RPT_ERRLEN]);

/*
 * Reads the trace at path and judges it; a NULL expect_json or client_json
 * falls back to the trace's session.expect / session.client (no expect at
 * all is RPT_EEXPECT). The caller owns *out and releases it with
 * rpt_judgement_free.
 */
int rpt_judge_trace_file(const char *path, const char *expect_json,
                         const char *client_json, const rpt_opts *opts,
                         rpt_judgement **out, char err[RPT_ERRLEN]);

/*
 * Validates an expect table without a trace (for `fusebox check`): unknown
 * keys and bad values give RPT_EEXPECT, with a message that starts with the
 * dotted path of the offending key ("expect.backoff.min_gap: ..."), so the
 * caller can place it in the scenario file. client_json may be NULL (then a
 * `within_deadline = true` is not checked for a deadline).
 */
int rpt_expect_check(const char *expect_json, const char *client_json,
                     char err[RPT_ERRLEN]);

/*
 * Validates a client profile (a profiles/ file as JSON) the way the `profile`
 * verdict reads it: unknown keys and bad values give RPT_EEXPECT with the
 * reason ("profile: ...") in err.
 */
int rpt_profile_check(const char *profile_json, char err[RPT_ERRLEN]);

/*
 * What a verdict family (an expect key) is to a client judged only on what it
 * did on the wire, whatever it promises (`fusebox exec`). The one home of that
 * list: exec keeps BEST_PRACTICE and ALWAYS keys of a scenario's expect table
 * and drops POLICY ones unless an option puts them back (--profile,
 * --deadline); its --help prints rpt_expect_best_practice_list, and
 * tests/cli/best_practice_docs.sh fails when README.md or docs/exec.md list
 * other names.
 */
typedef enum {
  RPT_FAMILY_POLICY = 0,        /* the client's own policy (attempts, backoff, deadline,
                                   profile): judged only when asked for */
  RPT_FAMILY_BEST_PRACTICE = 1, /* holds for any client whatever it promises */
  RPT_FAMILY_ALWAYS = 2         /* no rule of practice, judged all the same: the outcome, the
                                   declared exercise, the scenario's point (said when unjudged) */
} rpt_family_kind;

/* The number of verdict families: the keys an expect table may have. */
int rpt_expect_nfamilies(void);
/* Family i's expect key (0 <= i < rpt_expect_nfamilies(), in report order),
   or NULL out of range. Static storage: never freed. */
const char *rpt_expect_family(int i);
/* Family i's kind; RPT_FAMILY_POLICY out of range. */
rpt_family_kind rpt_expect_best_practice(int i);
/* The kind of the family keyed key; RPT_FAMILY_POLICY for NULL or an
   unknown key. */
rpt_family_kind rpt_expect_kind_of(const char *key);
/*
 * Writes the keys of the RPT_FAMILY_BEST_PRACTICE families, in report order
 * with ", " between ("max_requests, no_retry_after, ..."), into out (n bytes,
 * always NUL-terminated when n > 0; out may be NULL with n 0). Returns the
 * length the whole list needs, as snprintf: a result >= n means it was cut.
 */
size_t rpt_expect_best_practice_list(char *out, size_t n);

/* Number of verdicts, and verdict i (valid until rpt_judgement_free). */
int rpt_judgement_count(const rpt_judgement *j);
const rpt_verdict *rpt_judgement_verdict(const rpt_judgement *j, int i);
/* Number of failed verdicts. */
int rpt_judgement_failed(const rpt_judgement *j);
/* The verdict named name, or NULL (valid until rpt_judgement_free). */
const rpt_verdict *rpt_judgement_find(const rpt_judgement *j, const char *name);
/* Releases a judgement. NULL is a no-op. */
void rpt_judgement_free(rpt_judgement *j);

/* -------------------------------------------------------------------- runs */

typedef struct rpt_run rpt_run;

/* What rpt_run_add judges: one scenario played once. */
typedef struct rpt_input {
  const char *name;        /* display name; NULL = the trace's session.scenario */
  const char *file;        /* scenario file; NULL = the trace's session.file */
  const char *client;      /* client label ("guard", "naive"...); NULL = none */
  const char *trace_path;  /* the trace to read, when trace is NULL */
  rpt_trace *trace;        /* or an already parsed trace: the run takes it,
                              even when rpt_run_add fails */
  const char *expect_json; /* NULL = the trace's session.expect */
  const char *client_json; /* NULL = the trace's session.client */
  double wall_ms;          /* measured duration; 0 = the trace's duration */
  const rpt_opts *opts;    /* NULL = defaults */
} rpt_input;

/* A new, empty run; NULL when out of memory. The caller owns it and releases it with rpt_run_free. */
rpt_run *rpt_run_new(void);
/* Releases a run with every trace and judgement in it. NULL is a no-op. */
void rpt_run_free(rpt_run *run);

/*
 * Reads (or takes) the trace, judges it and appends the scenario to the run.
 * Strings in *in are copied. On error nothing is appended (the caller may
 * record the failure with rpt_run_add_error) and err says why.
 */
int rpt_run_add(rpt_run *run, const rpt_input *in, char err[RPT_ERRLEN]);

/*
 * Appends a scenario that could not be played or judged (it did not load,
 * its trace is not a trace). It counts as one failure and shows message in
 * every report. Strings are copied.
 */
int rpt_run_add_error(rpt_run *run, const char *name, const char *file,
                      const char *message);

/*
 * Appends a scenario the client was not asked to play (e.g. `exec --without
 * stream` and a streaming scenario): no trace, one n/a verdict named verdict
 * with reason as its evidence; it counts neither as a pass nor as a failure.
 * Strings are copied.
 */
int rpt_run_add_skipped(rpt_run *run, const char *name, const char *file, const char *client,
                        const char *verdict, const char *reason);

/*
 * Appends an extra verdict to the last scenario added (e.g. `exec`'s
 * "command exited 0"). RPT_EINVAL when the run is empty. Strings are copied.
 */
int rpt_run_add_verdict(rpt_run *run, const char *name, rpt_status status,
                        const char *evidence);

/* Totals over a run. */
typedef struct rpt_summary {
  int scenarios;         /* scenarios added, errors included */
  int passed;            /* scenarios exercised, with a verdict applied, none failed */
  int failed;            /* scenarios with a failed verdict */
  int not_applicable;    /* scenarios with nothing failed and no evidence either */
  int errors;            /* scenarios added with rpt_run_add_error */
  int verdicts;          /* verdicts judged */
  int verdicts_failed;
  int verdicts_skipped;
  int incomplete;        /* scenarios whose trace was cut short */
  double time_ms;        /* sum of scenario durations */
} rpt_summary;

void rpt_run_summary(const rpt_run *run, rpt_summary *out);
/*
 * The sentence every report opens with when no request of the run reached
 * the scenario (all went to paths no provider serves, or none was sent),
 * written into buf; NULL when requests did reach it.
 */
const char *rpt_run_headline(const rpt_run *run, char *buf, size_t n);

/* Failed verdicts plus error scenarios: 0 means the run passed. */
int rpt_run_failed(const rpt_run *run);

/*
 * The number of scenarios whose trace holds `error` events: the scenario
 * itself broke while serving (a provider function's runtime error), so the
 * run says nothing about the client. *first (when first is not NULL) is set
 * to the first such error's "file:line: message", owned by the run, or NULL.
 */
int rpt_run_scenario_errors(const rpt_run *run, const char **first);

/* One scenario of a run, as every writer shows it. */
typedef struct rpt_result {
  const char *name, *file, *client; /* valid until rpt_run_free; file, client may be NULL */
  const char *status;  /* "pass", "fail", "n/a" or "error" */
  const char *error;   /* why it could not be played or judged, or NULL */
  int attempts;        /* requests that reached the server (effect lookups excluded) */
  int exit_code;       /* an external command's exit status; -1 = none */
  int killed;          /* the command was killed by --timeout */
  int verdicts;        /* verdicts judged, n/a ones included */
  int failed;          /* failed verdicts */
  int not_applicable;  /* n/a verdicts */
  double time_ms;
} rpt_result;

/* Number of scenarios in a run. */
int rpt_run_count(const rpt_run *run);
/* Scenario i of a run; RPT_EINVAL when i is out of range. */
int rpt_run_result(const rpt_run *run, int i, rpt_result *out);
/* Verdict k of scenario i, or NULL (valid until rpt_run_free). */
const rpt_verdict *rpt_run_verdict(const rpt_run *run, int i, int k);

/* --------------------------------------------------------------- shards */

/*
 * One shard of a suite split across machines (`fusebox run --shard K/N`):
 * its report says which part of which suite it holds, so the reports of
 * all N shards can be joined into the report of the whole suite.
 */
typedef struct rpt_shard {
  int k, n;       /* the K-th of N shards, 1-based */
  int total;      /* scenarios in the whole suite */
  char set[17];   /* the suite's scenario set, 16 hex digits */
} rpt_shard;

/*
 * Marks run as shard s of a suite: index[i] is the position of the run's
 * i-th scenario in the whole suite (n entries, one per scenario added so
 * far). The JSON report carries both. RPT_EINVAL on bad arguments.
 */
int rpt_run_set_shard(rpt_run *run, const rpt_shard *s, const int *index, int n);

/*
 * The secret rule, as a function: a copy of the len bytes at text with
 * every credential in it replaced (the caller frees it), or NULL when out
 * of memory. reports/ holds no rule of its own: the program passes sim's
 * (sim_redact_text), as it redacted the traces the reports came from.
 */
typedef char *(*rpt_redact_fn)(const char *text, size_t len);

/*
 * Makes rpt_run_merge_json pass every string value it reads from a report
 * through fn before anything is judged or written: a report made on
 * another machine (or by hand) may carry a key in its evidence, which would
 * otherwise reach the merged JSON, JUnit, HTML and terminal. NULL (the
 * default) reads them as they are.
 */
void rpt_run_set_redact(rpt_run *run, rpt_redact_fn fn);

/*
 * Joins JSON reports (as rpt_run_write_json writes them; n files) into run,
 * each scenario with the verdicts, evidence, attempts, effects and calls
 * its report recorded (not judged again), in the order of the whole suite
 * for shards, else in the order given. Refused, with the reason in err and
 * nothing usable in run: a file that cannot be read, text that is not JSON
 * ("file:line: ..."), JSON that is not a fusebox report, a scenario twice
 * (the same file, or the same place of a suite), shards of different
 * suites, shards and unsharded reports mixed, the same shard twice, a
 * missing shard, or a status that does not follow from its verdicts.
 * Returns RPT_OK, RPT_EIO, RPT_ETRACE (bad or mismatched input),
 * RPT_ETOOBIG or RPT_ENOMEM.
 */
int rpt_run_merge_json(rpt_run *run, const char *const *paths, int n, char err[RPT_ERRLEN]);

/* ----------------------------------------------------------------- matrix */

/*
 * Several clients over one suite (`fusebox matrix`): one run per client,
 * rows matched by scenario file. The matrix owns the runs added to it.
 */
typedef struct rpt_matrix rpt_matrix;

/* A new, empty matrix; NULL when out of memory. Release with rpt_matrix_free. */
rpt_matrix *rpt_matrix_new(void);
/* Releases a matrix and every run in it. NULL is a no-op. */
void rpt_matrix_free(rpt_matrix *m);
/*
 * Adds one client's run under the name client; command is its shell
 * command, or NULL for a built-in client. The matrix takes run, also when
 * this fails (RPT_ENOMEM, RPT_ETOOBIG over 64 clients, RPT_EINVAL).
 */
int rpt_matrix_add(rpt_matrix *m, const char *client, const char *command, rpt_run *run);
/* Failed verdicts plus error scenarios over every client: 0 = all passed. */
int rpt_matrix_failed(const rpt_matrix *m);
/*
 * Writers: a clients x scenarios table whose cells show the status (PASS,
 * FAIL, N/A, ERROR), the attempts, the exit status of an external command
 * and the failed verdicts. Terminal (color as for rpt_run_write_term), one
 * JSON document, one self-contained HTML page, or JUnit XML with one
 * testsuite per client. Each returns 0, or an error code with err set.
 */
int rpt_matrix_write_term(const rpt_matrix *m, FILE *f, int color);
int rpt_matrix_write_json(const rpt_matrix *m, const char *path, char err[RPT_ERRLEN]);
int rpt_matrix_write_html(const rpt_matrix *m, const char *path, char err[RPT_ERRLEN]);
int rpt_matrix_write_junit(const rpt_matrix *m, const char *path, char err[RPT_ERRLEN]);

/* ----------------------------------------------------------------- writers */

/*
 * Writes the terminal table: one line per scenario (name, verdicts passed /
 * judged, attempts, time), the evidence of each failed verdict under its
 * scenario, then a totals line. color = 1 adds ANSI colours (the caller
 * decides, e.g. isatty). Control characters from the trace are neutralised.
 * Returns RPT_EIO when the stream reports an error.
 */
int rpt_run_write_term(const rpt_run *run, FILE *f, int color);

/*
 * Redraws the live progress line "N/M scenarios, P passed, F failed" with a
 * carriage return and an erase-to-end-of-line. Does nothing when tty is 0.
 */
void rpt_progress(FILE *f, int done, int total, int passed, int failed,
                  int tty);
/* Erases the progress line (before the table is written). */
void rpt_progress_clear(FILE *f, int tty);

/*
 * Write the run to path ("-" = standard output) as one JSON document, JUnit
 * XML (one testsuite, one testcase per scenario, one failure per failed
 * verdict) or one self-contained HTML page (inline CSS and SVG timelines, no
 * script, no external request). Each returns 0, or RPT_EIO with err set.
 */
int rpt_run_write_json(const rpt_run *run, const char *path,
                       char err[RPT_ERRLEN]);
/* The JSON document rpt_run_write_json writes (no final newline), for the
   caller to free with free(); NULL with err set when out of memory. */
char *rpt_run_json_text(const rpt_run *run, char err[RPT_ERRLEN]);
int rpt_run_write_junit(const rpt_run *run, const char *path,
                        char err[RPT_ERRLEN]);
int rpt_run_write_html(const rpt_run *run, const char *path,
                       char err[RPT_ERRLEN]);
/* GitHub-flavoured Markdown (a job summary, a PR comment): a headline, one
   table row per scenario, the evidence of each that did not pass. */
int rpt_run_write_markdown(const rpt_run *run, const char *path, char err[RPT_ERRLEN]);

#endif
