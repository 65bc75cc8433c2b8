/*
 * explore.h - experiments that play many scenarios to find something:
 * `fusebox hunt` searches fault schedules for one that breaks a client and
 * shrinks it (docs/hunt.md).
 *
 * This module decides what to play and what the results mean; it plays
 * nothing itself. The caller hands it a function that plays one scenario
 * text against the client (and, for the reference check, against the
 * built-in guarded client) and says which verdicts failed. So the search is
 * pure and deterministic: every choice comes from the seed, the run's index
 * and the results already seen, never from arrival order or wall time.
 */
#ifndef FUSEBOX_EXPLORE_H
#define FUSEBOX_EXPLORE_H

#include <stddef.h>
#include <stdint.h>

#define XPL_MAX_STEPS 6      /* faulted attempts in one schedule */
#define XPL_ERRLEN 256
#define XPL_NAMELEN 48
#define XPL_EVIDENCE 240
#define XPL_MAX_VERDICTS 24
#define XPL_BATCH 8          /* schedules decided at once: fixed, so -j changes nothing */

/* What the client is asked to do (the scenario's client.call). */
typedef enum {
  XPL_CALL_CHAT = 0, XPL_CALL_STREAM, XPL_CALL_TOOLS, XPL_CALL_STREAM_TOOLS, XPL_CALL_EFFECT,
  XPL_NCALLS
} xpl_call;

/* A fault one attempt plays. a and b index the kind's value ladders. */
typedef enum {
  XPL_S_5XX = 0,       /* a: 503 500 502 504 */
  XPL_S_429,           /* a: Retry-After form (none, seconds, ms, date); b: value */
  XPL_S_QUOTA,         /* 429 insufficient_quota: permanent */
  XPL_S_529,           /* Anthropic's overloaded */
  XPL_S_4XX,           /* a: 400 401 403 404 */
  XPL_S_SHOULD_RETRY,  /* a: 0 = 500 with x-should-retry: false, 1 = 409 with true */
  XPL_S_DROP,
  XPL_S_RESET,
  XPL_S_HANG,
  XPL_S_DELAY,         /* b: seconds, then answered */
  XPL_S_TRUNCATE,      /* a: short-body, early-close; b: bytes */
  XPL_S_GARBAGE,
  XPL_S_STREAM_DROP,   /* b: chunks before the cut (streams only) */
  XPL_S_STREAM_STALL,
  XPL_S_STREAM_ERROR,
  XPL_S_STREAM_NO_END,
  XPL_S_TOOL_CUT,      /* a streamed tool call cut inside its arguments */
  XPL_S_TOOL_BAD_JSON, /* a tool call whose arguments are not JSON */
  XPL_S_TOOL_UNKNOWN,  /* a tool call to a tool not offered */
  XPL_S_EFFECT_DROP,   /* the effect commits, its answer is dropped (a: drop, reset, hang) */
  XPL_S_EFFECT_LOST,   /* the connection drops before the effect commits */
  XPL_NKINDS
} xpl_kind;

typedef struct xpl_step {
  uint8_t kind, a, b;
} xpl_step;

typedef struct xpl_schedule {
  uint8_t call;    /* xpl_call */
  uint8_t n;       /* faulted attempts, 1..XPL_MAX_STEPS; then the call is answered */
  xpl_step s[XPL_MAX_STEPS];
} xpl_schedule;

/* The space searched: which kinds and calls, how long a schedule. */
typedef struct xpl_space {
  uint32_t kinds;      /* bit per xpl_kind; 0 = all */
  uint8_t calls;       /* bit per xpl_call; 0 = chat and stream */
  int max_steps;       /* 1..XPL_MAX_STEPS; 0 = 3 */
  int no_date;         /* no HTTP-date Retry-After (under warp it is not exact) */
  int max_ra_index;    /* the largest Retry-After ladder index allowed; <0 = all */
} xpl_space;

/* Parses "429,5xx,drop,stream_drop" into space->kinds; -1 with err naming
   the unknown word (and the closest known one). */
int xpl_space_kinds(xpl_space *space, const char *list, char err[XPL_ERRLEN]);
/* Parses "chat,stream" (or "any") into space->calls; -1 with err. */
int xpl_space_calls(xpl_space *space, const char *list, char err[XPL_ERRLEN]);
/* The index of the largest Retry-After of the ladder (1, 5, 30, 120, 86400
   s) that is at most s; 0 when s is under the first. */
int xpl_ra_index(double s);
/* The kind's name as --steps takes it ("429"); NULL out of range. */
const char *xpl_kind_name(int kind);
/* The call's name as a scenario's client.call writes it ("stream_tools"). */
const char *xpl_call_name(int call);

/* A canonical one-line text of the schedule, its identity ("stream: 503,
   429 ra=5s, then ok"); n bytes, always terminated. */
void xpl_schedule_text(const xpl_schedule *s, char *out, size_t n);

/* The schedule as a code line ("chat 5xx.0.0 429.1.1"): what a finding's
   file carries on its "-- schedule:" line, for --from. n bytes. */
void xpl_schedule_code(const xpl_schedule *s, char *out, size_t n);
/* Reads a code line back; -1 with err when it is not one. */
int xpl_schedule_parse(const char *code, xpl_schedule *out, char err[XPL_ERRLEN]);

/* What the scenario text is made for. */
typedef struct xpl_lua_opts {
  const char *name;       /* the scenario's name */
  const char *doc;        /* its doc; NULL = one line made from the schedule */
  const char *dialect;    /* client.dialect, NULL = openai */
  int max_requests;       /* expect.max_requests; 0 = 10 */
  const char *point;      /* expect.point = { point } when not NULL */
} xpl_lua_opts;

/*
 * Writes the scenario that plays s (its faults on attempts 1..n of every
 * logical request, then the answer) with the best-practice expect table.
 * Returns a malloc'd NUL-terminated text (the caller frees it), or NULL when
 * out of memory.
 */
char *xpl_schedule_lua(const xpl_schedule *s, const xpl_lua_opts *o);

/* One verdict of a played scenario. */
typedef struct xpl_verdict {
  char name[XPL_NAMELEN];
  int status;                 /* 0 pass, 1 fail, 2 n/a (as rpt_status) */
  char evidence[XPL_EVIDENCE];
} xpl_verdict;

/* One request as the server saw it, in scenario seconds from the start. */
typedef struct xpl_arrival {
  double t_arrive, t_end;     /* t_end < 0: never ended */
  int status;                 /* 0: no status line */
  int idem;                   /* it carried an Idempotency-Key */
  int attempt;                /* nth arrival of its logical request (its key) */
  int stream;                 /* the request asked for a stream */
} xpl_arrival;

#define XPL_MAX_ARRIVALS 16

/* What one play of one scenario gave. */
typedef struct xpl_outcome {
  int error;                  /* the scenario could not be played: message in evidence of v[0] */
  int attempts;               /* requests that reached the server */
  int nv;
  xpl_verdict v[XPL_MAX_VERDICTS];
  int narr;                   /* the first XPL_MAX_ARRIVALS arrivals */
  xpl_arrival arr[XPL_MAX_ARRIVALS];
} xpl_outcome;

/*
 * Plays n scenario texts (lua[i], named by the schedule's index[i]) and
 * fills out[i]. reference = 1: against the built-in guarded client instead
 * of the client hunted. The caller may play them at once. Returns 0, or -1
 * when playing is impossible (the search stops with err).
 */
typedef int (*xpl_play_fn)(void *arg, int reference, int n, char *const *lua,
                           const long *index, xpl_outcome *out, char err[XPL_ERRLEN]);

/* Progress, for a line on stderr; may be NULL. */
typedef void (*xpl_progress_fn)(void *arg, long runs, int findings, const char *phase);

typedef struct xpl_hunt_opts {
  xpl_space space;
  uint64_t seed;
  long budget;          /* runs in all (client and reference, shrinking included); 0 = 200 */
  int max_findings;     /* stop after this many; 0 = 1 */
  int reference;        /* 1: a finding must pass the guarded client (default); 0: --no-reference */
  int guided;           /* 1: prefer schedules that made the client do something new */
  xpl_lua_opts lua;     /* dialect and max_requests of every scenario */
  const char *verdicts; /* "answer,retry_after_honoured,...": the verdicts that break;
                           NULL = the best-practice ones and answer */
  int (*stop)(void *arg); /* 1 = stop now (--time); may be NULL */
  const xpl_schedule *from; /* --from: played first, and the search starts in its
                               neighbourhood; NULL = none */
} xpl_hunt_opts;

/* One shrunk finding. */
typedef struct xpl_finding {
  xpl_schedule found;    /* as first seen */
  xpl_schedule shrunk;   /* the smallest that still fails the same verdict */
  char verdict[XPL_NAMELEN];
  char evidence[XPL_EVIDENCE];
  long found_at;         /* runs played when it was first seen */
  long shrink_runs;      /* runs spent shrinking */
  int shrink_steps;      /* accepted shrink steps */
  int reference;         /* 1 the guard passed it, 0 not checked */
  int cut_short;         /* 1: the budget or --time ended the shrinking */
} xpl_finding;

typedef struct xpl_hunt_result {
  long runs;             /* runs played (the cache's hits are not runs) */
  long schedules;        /* distinct schedules tried in the search */
  int nfindings;
  xpl_finding *findings; /* nfindings, malloc'd: xpl_hunt_result_clear */
  int rejected;          /* schedules that failed the guard too: not findings */
  long client_runs;      /* runs of the client hunted (not the reference) */
  long silent;           /* of those, runs in which it sent no request at all */
  int stopped;           /* 1: the budget or --time ran out */
} xpl_hunt_result;

/* Searches, shrinks, checks. 0, or -1 with err (a play error, no memory). */
int xpl_hunt(const xpl_hunt_opts *o, xpl_play_fn play, void *play_arg,
             xpl_progress_fn progress, void *progress_arg, xpl_hunt_result *res,
             char err[XPL_ERRLEN]);
void xpl_hunt_result_clear(xpl_hunt_result *res);

/* ------------------------------------------------------------ learn */

#define XPL_MAX_RETRIES 24

typedef struct xpl_learn_opts {
  const char *dialect;  /* client.dialect of every probe, NULL = openai */
  int repeats;          /* plays of the backoff probe (jitter needs several); 0 = 5 */
  double max_wait;      /* the longest Retry-After probed (s); 0 = 61 */
  double confidence;    /* each yes/no fact played until a flaky one would have shown
                           with this chance (docs/learn.md); 0 = one play */
} xpl_learn_opts;

/* The facts whose evidence a learned profile states, one comment each. */
enum {
  XPL_EV_ATTEMPTS, XPL_EV_BACKOFF, XPL_EV_RETRIES, XPL_EV_TIMEOUT, XPL_EV_STREAMS,
  XPL_EV_RA_FORMS, XPL_EV_RA_CAP, XPL_EV_RA_BAD, XPL_EV_RA_COMBINE, XPL_EV_IDEM, XPL_EV_N
};
#define XPL_EV_LEN 480
#define XPL_MAX_PLAYS 10 /* --confidence 0.998 */

/* A client's policy as learned: the facts of a profile (profiles/README.md). */
typedef struct xpl_policy {
  int max_attempts;
  double base, factor, fraction;      /* backoff; base 0 when never retried */
  double cap;                         /* the backoff's cap (s), 0 when none was seen */
  double min_gap;                     /* the shortest backoff gap seen (s) */
  double overhead;                    /* the client's own time per retry, when a
                                         Retry-After waited out showed it (s) */
  double own_backoff;                 /* the same, read from the backoff's growth */
  char jitter[12];                    /* none, subtract, full */
  char retries[XPL_MAX_RETRIES][24];  /* "408", ">=500", "connection", ... */
  int nretries;
  int retries_429, quota_except;      /* 429 retried; but not an insufficient_quota one */
  int ra_required;                    /* a 429 is retried only with a Retry-After */
  int should_retry;                   /* x-should-retry obeyed (either way) */
  int ra_honoured;
  char forms[4][16];                  /* retry-after-ms, seconds, decimal, date */
  int nforms;
  double ra_cap;                      /* 0 = none (up to ra_cap_probed) */
  double ra_cap_probed;
  char over_cap[12], invalid[12], past[12]; /* backoff, stop, immediate */
  char negative[12];                  /* a number of seconds <= 0: the same words */
  char decimal[12];                   /* a decimal not read as one: the same or truncate;
                                         "" when read (or seconds are not) */
  char combine[8];                    /* a Retry-After shorter than the backoff's wait:
                                         "replace" waited, "max" the backoff; "" not asked */
  char idem[12];                      /* false, per_call, per_attempt */
  int timeout_seen;                   /* the client ended an attempt by its own timeout */
  char covers[8];                     /* what it bounds: headers, idle, whole; "" unknown */
  double timeout_len;                 /* its own attempt timeout (s), 0 none up to --max-wait */
  int streams_probed;                 /* the client streamed when asked: the next two hold */
  int streams_retried;                /* 1: a stream cut after content is retried; 2: only
                                         one cut before any text (a tool call) */
  int tool_cut;                       /* a stream cut in a tool call, no text yet: 1 retried,
                                         0 not, -1 not probed (no stream with tools) */
  long runs;                          /* probes played */
  int plays;                          /* plays of each yes/no probe (--confidence) */
  double confidence;                  /* the chance a flaky fact would have shown */
  int nflaky;                         /* yes/no facts the plays did not agree on */
  char evidence[XPL_EV_N][XPL_EV_LEN]; /* what the wire showed, per fact ("" none) */
} xpl_policy;

/* Plays the probes (through play, reference 0) and infers the policy. */
int xpl_learn(const xpl_learn_opts *o, xpl_play_fn play, void *arg, xpl_policy *p,
              char err[XPL_ERRLEN]);
/* The policy as a profile file (profiles/NAME.lua): name, version, doc as
   given. A malloc'd text, NULL when out of memory. */
char *xpl_policy_lua(const xpl_policy *p, const char *name, const char *version, const char *doc,
                     const char *dialect);
/* The policy card: one table of the facts, then their evidence; Markdown
   or a standalone HTML page. Malloc'd, NULL when out of memory. */
char *xpl_policy_markdown(const xpl_policy *p, const char *name, const char *how);
char *xpl_policy_html(const xpl_policy *p, const char *name, const char *how);

/* ----------------------------------------------- parts, for the tests */

/* The schedule the search draws as its index-th random one. */
void xpl_gen_random(const xpl_space *sp, uint64_t seed, long index, xpl_schedule *out);
/* A neighbour of parent (one step changed, added or removed), index-th. */
void xpl_gen_mutate(const xpl_space *sp, uint64_t seed, long index, const xpl_schedule *parent,
                    xpl_schedule *out);
/* 1 when the step may be played in the call (a stream fault needs a stream). */
int xpl_step_fits(int call, int kind);
/*
 * The shrink candidates of s, simplest first: a step removed, a step made
 * weaker (a reset becomes a 503, a date Retry-After seconds), a number made
 * smaller. Writes at most cap into out; returns how many.
 */
int xpl_shrink_candidates(const xpl_schedule *s, const xpl_space *sp, xpl_schedule *out, int cap);
/* A size for "smaller": steps first, then kinds' and numbers' ranks. */
long xpl_schedule_weight(const xpl_schedule *s);

#endif
