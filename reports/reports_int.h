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
  int no_finish;      /* end.finish false: no finish chunk either */
  int error_event;    /* end.error_event: a stream that carried an in-band error */
  int body_json;      /* end.body_json: a garbage body that is JSON (fields missing) */
  const char *state;  /* how it ended (attempt_state.c): end.state, or derived */
  int state_derived;  /* 1 when the trace had no end.state */
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

/* ------------------------------------------------------------- fold */

/*
 * A trace read for a report keeps its first RPT__KEEP_ARRIVALS arrivals
 * whole (the timelines, the evidence that names an attempt) and folds every
 * arrival, kept or not, into a bounded summary as it streams past
 * (trace_fold.c): per logical request while it is open, then into counts.
 * The verdicts that read only the summary (rpt__fold_judgeable) are judged
 * from it; any other need re-reads the trace whole (rpt_run_add).
 */
#define RPT__KEEP_ARRIVALS 5000 /* arrivals a report's trace keeps whole */
#define RPT__OPEN_MAX 4096       /* logical requests held open while folding */
#define RPT__GROUP_MAX 1024      /* attempts of one logical request held while folding */
#define RPT__HELD_MAX 65536      /* attempts of all open requests held (about 6 MB) */
#define RPT__NEED_WHOLE (-100)   /* rpt_judge: this folded trace must be read whole */

typedef struct rpt__fold rpt__fold; /* the open requests (trace_fold.c) */

/* The statuses and kinds after which no_retry_after forbids a retry. */
#define RPT__MAX_STOPS 32
typedef struct rpt__stop_set {
  int status[RPT__MAX_STOPS];
  int nstatus;
  int permanent, quota;
} rpt__stop_set;
/* Reads an expect.no_retry_after value into *s (zeroed first): 0, or
   RPT_EEXPECT when it is not one (verdict_attempts.c). */
int rpt__stop_set_read(const cJSON *val, rpt__stop_set *s);
/* 1 when attempt a ended so that no retry may follow it at its provider;
   sets *uncoded_429 for a 429 without a code where a kind was asked. */
int rpt__stops(const rpt__stop_set *s, const rpt__arrival *a, int *uncoded_429);

/* What the folded verdicts read: bounded whatever the trace's size. */
typedef struct rpt__sum {
  long narr, nposts, nlookups;  /* arrivals; not GET; GET (effect lookups) */
  long nserved, nserved_stream, nserved_effect;
  long nstreams;                /* asked for a stream or sent one (step "stream") */
  long asked;                   /* responses with retry_after_ms >= 0 */
  long nunserved;
  long first_unserved_id;       /* -1 none */
  char *first_unserved_method, *first_unserved_path;
  int first_unserved_status;
  long hist_n[RPT__GROUP_MAX + 1];   /* requests by attempts (GET not counted) */
  long hist_seq[RPT__GROUP_MAX + 1]; /* the first such request (order of first arrival) */
  char *hist_key[RPT__GROUP_MAX + 1];
  long ra_n;                    /* gaps after a response that asked for Retry-After */
  double ra_margin;             /* the worst: gap - retry_after x scale */
  long ra_seq;
  int ra_k, ra_attempt, ra_status;
  double ra_ms, ra_asked_ms;
  char *ra_key;
  int herd_on;                  /* herd folded for a window of herd_w ms */
  double herd_w, herd_at;       /* the window; where the peak starts */
  long herd_peak;
  int nra_on;                   /* no_retry_after folded for nra_stops */
  rpt__stop_set nra_stops;
  long nra_seen;                /* responses after which no retry may follow */
  int nra_uncoded;
  int nra_found;                /* a retry that followed one: the first, by first arrival */
  long nra_seq;
  int nra_attempt, nra_status;
  double nra_gap;
  char *nra_key, *nra_code, *nra_provider;
  int broken;                   /* the fold cannot stand for the trace: read it whole */
} rpt__sum;

/* A fold for a trace of this time scale judged by this expect table (JSON;
   NULL: none), which says what herd and no_retry_after fold; NULL when out
   of memory. */
rpt__fold *rpt__fold_new(double scale, const char *expect_json);
/* Folds an arrival / its end (fields as the reader parsed them). */
void rpt__fold_arrive(rpt__fold *f, const rpt__arrival *a);
/* rpt__fold_end returns 0, 1 for an id the fold does not hold open, 2 for a
   second end. */
int rpt__fold_end(rpt__fold *f, long id, const rpt__arrival *a);
/* 1 once the fold cannot stand for the trace (it is read whole then). */
int rpt__fold_broken(const rpt__fold *f);
/* 1 when the fold holds an open attempt with this id. */
int rpt__fold_has(const rpt__fold *f, long id);
/* 1 when an id may have been folded and closed already (never a false 0). */
int rpt__fold_seen_id(const rpt__fold *f, long id);
/* Folds every request still open and returns the summary (the caller owns
   it: rpt__sum_free); frees the fold. NULL when out of memory. */
rpt__sum *rpt__fold_finish(rpt__fold *f);
void rpt__fold_free(rpt__fold *f);
void rpt__sum_free(rpt__sum *s);
/* 1 when tr's arrivals were not all kept (verdicts read tr->sum), or the
   fold broke (then only a whole read can judge it). */
int rpt__trace_folded(const rpt_trace *tr);
/* Arrivals of the whole trace, kept or folded. */
long rpt__trace_narr(const rpt_trace *tr);
/* Logical requests with an attempt that is not a lookup (GET), kept or folded. */
int rpt__trace_requests(const rpt_trace *tr);
/* Attempts that are not lookups (GET), kept or folded. */
long rpt__trace_posts(const rpt_trace *tr);
/* Reads path keeping at most keep arrivals whole (0 = all); see above.
   expect_json: the table it will be judged by (NULL: the trace's own). */
int rpt__trace_read_keep(const char *path, int keep, const char *expect_json, rpt_trace **out,
                         char err[RPT_ERRLEN]);
/* Calls fn on every attempt of a folded trace, in arrival order, reading
   its file again (bounded: the attempts awaiting their end). 0, or the
   first non-zero fn return, or an error code. */
int rpt__trace_each_attempt(const rpt_trace *tr, int (*fn)(void *ctx, const rpt__arrival *a),
                            void *ctx);

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
  int keep;                 /* arrivals kept whole at most; 0 = all */
  rpt__fold *fold;          /* while reading with keep */
  rpt__sum *sum;            /* after: the folded summary, NULL when keep = 0 */
  int fold_broke;           /* the reader found what the fold cannot stand for */
  const char *fold_expect;  /* the table the fold is for (not owned; NULL: expect_json) */
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

/* ---------------------------------------------------- attempt state */

/* The state of an arrival without an `end` event (reports' own word). */
#define RPT__STATE_OPEN "open"
/*
 * The state of an attempt from the fields of an `end` without `state`
 * (how, status, error_event, end_marker, finish, step, stalled). Returns a
 * static word.
 */
const char *rpt__state_derive(const rpt__arrival *a);
/* 1 when state is `complete`: a 2xx answer its API calls finished. */
int rpt__state_complete(const char *state);
/* A few words for a list of attempts ("503", "drop", "error event"). Returns out. */
const char *rpt__state_label(const rpt__arrival *a, char *out, size_t n);
/* What was wrong with an attempt, as a relative clause ("whose stream ended
   in an error event"). Returns out. */
const char *rpt__state_clause(const rpt__arrival *a, char *out, size_t n);

/* ---------------------------------------------------- served answer */

typedef enum rpt__answer_kind {
  RPT__ANS_EMPTY,      /* the text is empty once white space is trimmed */
  RPT__ANS_SERVED,     /* the text of one complete attempt: `first` */
  RPT__ANS_UNFINISHED, /* the text of an attempt that did not complete: `first` */
  RPT__ANS_SPLICE,     /* attempt `first`'s text followed by attempt `second`'s
                          (-1: by text no attempt sent) */
  RPT__ANS_NONE        /* the text of no attempt: not an answer fusebox served */
} rpt__answer_kind;

typedef struct rpt__answer {
  rpt__answer_kind kind;
  int first, second; /* indexes into tr->arr, -1 when none */
  int in_json;       /* matched a string inside a JSON document the client printed */
} rpt__answer;

/*
 * Decides whether text (what a client accepted as its answer) is an answer
 * fusebox served: the text of ONE attempt whose state is complete, white
 * space around it aside (a prefix match when the server cut the attempt's
 * text at its 4 KiB cap). A client that printed a response body as it came
 * (one JSON document) is judged on the strings inside it. Fills *out;
 * returns out->kind. The one rule both `answer` and `no_stream_splice` use.
 */
rpt__answer_kind rpt__served_answer(const rpt_trace *tr, const char *text, rpt__answer *out);
/*
 * What a call's text was, for evidence, from a match: "printed the text of
 * attempt 1, whose stream ended in an error event: \"Partial\"" (an external
 * command; a built-in call "call 0 kept ..."), a splice, or text no attempt
 * sent. Empty for an empty text. Returns out.
 */
const char *rpt__answer_describe(const rpt_trace *tr, const rpt__client_ev *ce,
                                 const rpt__answer *m, char *out, size_t n);
/* 1 when some attempt of the trace carried answer text (end.text not empty). */
int rpt__any_answer_text(const rpt_trace *tr);
/* "Hello w..." for evidence: at most 24 bytes, not cut inside UTF-8. Returns out. */
const char *rpt__snippet(const char *s, char *out, size_t n);

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
/* Adds `answer`, judged in every judgement (verdict_answer.c). */
int rpt__answer_verdict(rpt__ctx *c, const cJSON *expect);
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
  rpt_redact_fn redact; /* the secret rule merged reports are read through; NULL: none */
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
