/*
 * reports_int.h - internals shared by the files of reports/.
 *
 * Nothing here is part of the public API; the fusebox program includes
 * reports/reports.h only.
 */
#ifndef FUSEBOX_REPORTS_INT_H
#define FUSEBOX_REPORTS_INT_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>

#include "reports/reports.h"

#define RPT__EVIDENCE_MAX 600       /* bytes of one evidence line */
#define RPT__MAX_VERDICTS 64        /* verdicts per scenario */
#define RPT__MAX_SCENARIOS 100000   /* scenarios per run */
#define RPT__ARENA_MAX (512u << 20) /* bytes one trace may hold in memory */
#define RPT__TEXT_CAP 4096          /* the server cuts end.text at this size */

#define RPT__STARTUP_SHOWN_MS 1000.0 /* a command's start-up from this long is shown in its row */
#define RPT__DEFAULT_TOL_MS 50.0
#define RPT__DEFAULT_SLACK_MS 20.0

/* ------------------------------------------------------------ arena */

/* A bump allocator: everything a trace holds is released in one go. */
typedef struct rpt__chunk rpt__chunk;
typedef struct rpt__arena {
  rpt__chunk *head;
  size_t total; /* bytes allocated so far, bounded by max */
  size_t max;
} rpt__arena;

/* Returns n zeroed bytes from the arena, or NULL when over its bound or out of memory. */
void *rpt__arena_alloc(rpt__arena *a, size_t n);
/* Copies s (NULL gives NULL) into the arena; NULL on failure with *oom set. */
char *rpt__arena_strdup(rpt__arena *a, const char *s, int *oom);
/* Releases every chunk; the arena can be reused afterwards. */
void rpt__arena_free(rpt__arena *a);

/* ----------------------------------------------------- bounded buffer */

/* A growable string with a maximum; over it the text is cut and toobig set. */
typedef struct rpt__buf {
  char *p;
  size_t len, cap, max;
  int toobig, oom;
} rpt__buf;

void rpt__buf_init(rpt__buf *b, size_t max);
/* Appends n bytes; returns 0, or -1 when cut or out of memory. */
int rpt__buf_add(rpt__buf *b, const char *s, size_t n);
/* Appends formatted text; returns 0, or -1 when cut or out of memory. */
int rpt__buf_addf(rpt__buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The text so far ("" when empty); valid until the next append or free. */
const char *rpt__buf_str(const rpt__buf *b);
/* Reads the whole file at path, at most max bytes, into *out (NUL-terminated,
   the caller frees it; *len excludes the NUL). Returns RPT_OK, or RPT_EIO,
   RPT_ETOOBIG or RPT_ENOMEM with "path: why" in err. */
int rpt__read_file(const char *path, size_t max, char **out, size_t *len,
                   char err[RPT_ERRLEN]);
void rpt__buf_free(rpt__buf *b);

/* ---------------------------------------------------------- escaping */

/*
 * Writes s as XML/HTML text or attribute content: & < > " ' escaped, invalid
 * UTF-8 and characters XML forbids replaced by U+FFFD, and (attr = 1) tabs
 * and newlines as character references. NULL writes nothing.
 */
void rpt__put_xml(FILE *f, const char *s, int attr);
/*
 * Copies s with invalid UTF-8 bytes replaced by U+FFFD. The caller owns the
 * copy and frees it; NULL when out of memory.
 */
char *rpt__utf8_dup(const char *s);
/*
 * Writes s for a terminal: control characters (ESC included) become '?',
 * and at most max_cols code points are written (max_cols < 0 = all), the
 * last one replaced by an ellipsis when cut. Returns the columns written.
 */
int rpt__put_term(FILE *f, const char *s, int max_cols);
/*
 * Copies a logical-request key for evidence: keys longer than 24 bytes are
 * shortened to their first 20 and an ellipsis. Returns out.
 */
const char *rpt__short_key(const char *key, char *out, size_t outlen);
/* Formats milliseconds for people ("812 ms", "2.4 s"). Returns out. */
const char *rpt__fmt_ms(double ms, char *out, size_t outlen);

/* ------------------------------------------------------------ trace */

/* One attempt: an `arrive` joined with its `end`. */
typedef struct rpt__arrival {
  long id;
  int line;                 /* line of the arrive event */
  double t_arrive, t_end;
  int has_end;
  const char *key, *provider, *method, *path, *dialect, *model;
  int attempt, stream;
  long body_bytes;
  const char *step, *how, *code, *text; /* from `end`; NULL when absent */
  int status;               /* 0 = no status line sent */
  int chunks, stalled;
  int no_end_marker;  /* a stream that ended cleanly but without its end marker */
  const char *should_retry; /* the x-should-retry header sent, or NULL */
  const char *ra_header;    /* the retry-after header sent, or NULL */
  const char *ra_ms_header; /* the retry-after-ms header sent, or NULL */
  double retry_after_ms;    /* < 0 when the response did not ask */
  double delay_ms;
  long tokens_in, tokens_out;
  const char *tool_calls_json; /* end.tool_calls as JSON text, or NULL */
  int group;                /* index in rpt_trace.groups */
  int unserved;             /* a path no provider serves (provider and dialect null) */
} rpt__arrival;

/* A logical request: arrivals sharing a key, ordered by attempt. */
typedef struct rpt__group {
  const char *key;
  int *idx; /* indexes into rpt_trace.arr */
  int n;
  int n_post; /* arrivals that are not GET (effect lookups) */
} rpt__group;

typedef struct rpt__effect {
  double t;
  long id;
  const char *name, *key, *action, *fingerprint;
  int count, found;
} rpt__effect;

typedef struct rpt__client_ev {
  double t;
  int call;
  const char *client, *outcome, *text, *reason;
  const char *stopped;   /* why the guarded client gave up; NULL if not said */
  double total_ms;   /* < 0 when absent */
  long tokens;
  int has_tokens;
  int nattempts;
  int external;      /* an external command's account (`fusebox exec`) */
  int exit_code;     /* its exit status; -1 when absent */
  int timed_out;     /* killed by --timeout */
  const char *error_line; /* the command's error line, or NULL */
  double started_t;  /* trace ms when the external command was started, < 0 absent */
} rpt__client_ev;

typedef struct rpt__error_ev {
  double t;
  long id;
  const char *message;
} rpt__error_ev;

struct rpt_trace {
  rpt__arena arena;
  const char *path, *scenario, *file, *start, *expect_json, *client_json;
  double time_scale;
  int version;
  int has_done, cut_line;   /* cut_line: line number of a cut last line */
  double t_last;
  long nevents;
  rpt__arrival *arr;
  int narr, carr;
  long *id_map;             /* open addressing: id -> index + 1 */
  int id_cap;
  rpt__group *groups;
  int ngroups;
  rpt__effect *eff;
  int neff, ceff;
  rpt__client_ev *cli;
  int ncli, ccli;
  rpt__error_ev *errs;
  int nerr, cerr;
  char warning[RPT_ERRLEN];
};

/* The arrival with this id, or NULL. */
rpt__arrival *rpt__trace_find(const rpt_trace *tr, long id);
/*
 * How an attempt ended, as a colour class for people: "ok", "transient",
 * "permanent", "shape", "lost" (dropped, reset, early close, abort, hung),
 * "error" (scenario error) or "open" (no end event).
 */
const char *rpt__arrival_class(const rpt__arrival *a);
/* 1 when the attempt's response was a permanent failure (see expect.c). */
int rpt__arrival_permanent(const rpt__arrival *a);

/* -------------------------------------------------------- judgement */

struct rpt_judgement {
  rpt_verdict v[RPT__MAX_VERDICTS];
  int n;
  rpt__arena arena;
  int oom;
};

/* What a verdict function sees. tr is NULL when only validating values. */
typedef struct rpt__ctx {
  const rpt_trace *tr;
  double scale;       /* time scale: scenario seconds x scale = trace ms / 1000 */
  double tol;         /* ms: tol_ms x scale + slack_ms */
  double slack;       /* ms, unscaled */
  const cJSON *client;/* the client table, or NULL */
  const cJSON *expect;/* the whole expect table (for `point`), or NULL */
  rpt_judgement *j;
  char *err;          /* RPT_ERRLEN bytes */
} rpt__ctx;

/* A verdict family: validates val, then (when c->tr) adds its verdict. */
typedef int (*rpt__verdict_fn)(rpt__ctx *c, const char *name, const cJSON *val);

/* Adds a verdict with formatted evidence to c->j. Returns 0 or RPT_ENOMEM/RPT_ETOOBIG. */
int rpt__verdict_add(rpt__ctx *c, const char *name, rpt_status st,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Adds a verdict to a judgement directly (copies strings). */
int rpt__judgement_add(rpt_judgement *j, const char *name, rpt_status st,
                       const char *evidence);
/* Sets c->err to "expect.NAME: msg" and returns RPT_EEXPECT. */
int rpt__bad_value(rpt__ctx *c, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Value helpers: 1 when val is `true`, 0 when `false`, else an error. */
int rpt__want_bool(rpt__ctx *c, const char *name, const cJSON *val, int *out);
/* Checks that every key of obj is in the NULL-terminated list allowed. */
int rpt__check_keys(rpt__ctx *c, const char *name, const cJSON *obj,
                    const char *const *allowed);
/* Reads obj.key as a number >= 0 into *out (absent: *present = 0). */
int rpt__get_nonneg(rpt__ctx *c, const char *name, const cJSON *obj,
                    const char *key, double *out, int *present);

/* The verdict families (verdict_*.c). */
int rpt__v_attempts(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_max_requests(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_no_retry_after(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_herd(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_retry_after(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_backoff(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_within_deadline(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_outcome(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_side_effects(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_no_stream_splice(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_cost(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_profile(rpt__ctx *c, const char *name, const cJSON *val);
int rpt__v_exercised(rpt__ctx *c, const char *name, const cJSON *val);
/* Adds the verdicts every judgement carries: `served` and `exercised`. */
int rpt__scenario_verdicts(rpt__ctx *c, const cJSON *expect);
/* 1 for verdicts that say whether a scenario ran, not how well it went. */
int rpt__verdict_is_meta(const char *name);
int rpt__v_tool_integrity(rpt__ctx *c, const char *name, const cJSON *val);
/* expect.point (judgement.c): validated; adds an n/a `point` verdict when
   none of the point verdicts passed. Runs after every other family. */
int rpt__v_point(rpt__ctx *c, const char *name, const cJSON *val);
/* The scenario status word of a judgement (judgement.c): "fail", "pass" or
   "n/a"; see docs/verdicts.md "When a scenario passes". */
const char *rpt__judgement_status(const rpt_judgement *j);
/*
 * An external command's start-up (verdict_timing.c): for ce, an account
 * with started_t, *startup_ms = the first request's arrival minus the
 * command's start (-1 when no request arrived) and *counted_ms = its time
 * from that arrival to its exit (what a deadline is judged on; -1 when no
 * request arrived). Returns 1, or 0 when ce has no start time.
 */
int rpt__client_startup(const rpt_trace *tr, const rpt__client_ev *ce, double *startup_ms,
                        double *counted_ms);
/* Writes "started its first request after 8.9 s" (or "sent no request in
   2.0 s") into out for an account with a start time, else "" (verdict_timing.c).
   Returns out. */
const char *rpt__startup_note(const rpt_trace *tr, const rpt__client_ev *ce, char *out,
                              size_t n);

/* ------------------------------------------------------------- run */

typedef struct rpt__entry {
  char *name, *file, *client, *trace_path, *error; /* error: not judged */
  rpt_trace *trace;
  rpt_judgement *j;
  double wall_ms;
  double deadline_ms; /* scaled deadline from the client table, < 0 none */
  double scale;
  int index;          /* place in the whole suite of a shard, < 0 none */
} rpt__entry;

struct rpt_run {
  rpt__entry *e;
  int n, cap;
  int sharded;        /* shard holds which part of a suite the run is */
  rpt_shard shard;
};

/* A new zeroed entry at the end of the run (run.c), or NULL when full or
   out of memory; the caller fills it and then counts it (run->n++). */
rpt__entry *rpt__run_push(rpt_run *run);
/* Releases what an entry holds and zeroes it (run.c). */
void rpt__entry_clear(rpt__entry *e);

/* Writes one JUnit <testsuite> for a run (junit.c); name NULL = "fusebox". */
void rpt__junit_suite(FILE *f, const rpt_run *run, const char *name);
/* Scenario status word: "pass", "fail", "n/a" or "error". */
const char *rpt__entry_status(const rpt__entry *e);
/* Verdicts passed and judged (skipped ones excluded) of an entry. */
void rpt__entry_counts(const rpt__entry *e, int *passed, int *judged);
/* An external command's exit status, or -1; *killed when --timeout killed it. */
int rpt__entry_exit(const rpt__entry *e, int *killed);
/* Attempts that reached the server (effect lookups excluded). */
int rpt__entry_attempts(const rpt__entry *e);
/* The duration shown for an entry, in ms. */
double rpt__entry_time(const rpt__entry *e);
/*
 * cJSON_ParseWithLength that tells a text that is not JSON from cJSON running
 * out of memory: then it returns NULL and sets *oom (POSIX malloc sets errno
 * to ENOMEM; nothing else cJSON calls does).
 */
cJSON *rpt__json_parse(const char *text, size_t len, int *oom);
/*
 * Opens path for writing ("-" = stdout, not to be closed). Returns the
 * stream or NULL with err set.
 */
FILE *rpt__open_out(const char *path, char err[RPT_ERRLEN]);
/* Closes what rpt__open_out opened; returns 0 or RPT_EIO with err set. */
int rpt__close_out(FILE *f, const char *path, char err[RPT_ERRLEN]);

#endif
