/*
 * import_int.h - internals shared by the files of `fusebox import`
 * (import/import*.c): the attempt model every input format is read into, the
 * bounded text buffer the scenario is written with, and the helpers the
 * readers share. No Lua here: the importer writes Lua text, it never runs it.
 *
 * The flow: a reader (import_jsonl.c, import_har.c, import_trace.c) turns
 * each attempt of its input into an imp_resp (what the provider did) and
 * hands it to imp__add (import_step.c), which renders it as one step of
 * Lua text at once (literals: import_lua.c); import.c then groups the steps by provider and logical request and
 * writes the scenario.
 */
#ifndef FUSEBOX_IMPORT_IMPORT_INT_H
#define FUSEBOX_IMPORT_IMPORT_INT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "import/import.h"

#define IMP_MAX_ATTEMPTS 50000      /* attempts in one input */
#define IMP_MAX_TEXT ((size_t)64 << 10) /* bytes of one text kept (answer, body) */
#define IMP_MAX_CHUNKS 4096         /* stream chunks kept per attempt */
#define IMP_MAX_HEADERS 64          /* response headers kept per attempt */
#define IMP_MAX_HEADER_VALUE 8192   /* bytes of one header value */
#define IMP_MAX_PROVIDERS 16        /* as many as a scenario may declare */
#define IMP_MIN_DELAY_MS 10.0       /* shorter latencies in a log are noise */
#define IMP_MAX_DATE_AHEAD 86400.0  /* s: a Retry-After date further ahead is kept as sent */

/* ------------------------------------------------------------ buffers */

/* A growable text buffer with a hard maximum. Over the maximum (or out of
   memory) it stops growing and remembers why; the caller checks once. */
typedef struct imp_buf {
  char *p;
  size_t len, cap, max;
  int over;   /* 1: more than max bytes were asked for */
  int nomem;  /* 1: an allocation failed */
} imp_buf;

void imp__buf_init(imp_buf *b, size_t max);
void imp__buf_free(imp_buf *b);
/* Takes the text (NUL-terminated) out of b; the caller owns it. */
char *imp__buf_take(imp_buf *b);
void imp__buf_put(imp_buf *b, const char *s, size_t n);
void imp__buf_puts(imp_buf *b, const char *s);
void imp__buf_printf(imp_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s as a Lua string literal ("..." with every byte that is not
   printable ASCII or valid UTF-8 escaped), so any input loads as text. */
void imp__lua_string(imp_buf *b, const char *s, size_t n);
/* Appends s for a Lua line comment: control bytes and invalid UTF-8
   become '?', and at most max bytes are kept. */
void imp__lua_comment(imp_buf *b, const char *s, size_t max);
/* Appends a number of seconds or milliseconds as a short Lua literal
   (at most 3 decimals, no trailing zeros). */
void imp__lua_number(imp_buf *b, double v);

/* ------------------------------------------------------------ attempts */

/* How an attempt ended when no complete answer came back. */
typedef enum imp_outcome {
  IMP_ANSWER = 0, /* a status line was sent (possibly cut, see imp_resp) */
  IMP_HANG,       /* never answered: the client gave up (timeout) */
  IMP_DROP,       /* closed without a response */
  IMP_RESET       /* TCP reset */
} imp_outcome;

/* One tool call an answer carried: its id, name and argument text (as
   streamed, joined), each NULL when the answer did not say it. */
typedef struct imp_tool {
  int key;    /* the stream's index for it (-1: none, a whole call) */
  char *id, *name, *args;
} imp_tool;

#define IMP_MAX_TOOLS 64     /* tool calls kept per answer (as a step allows) */
#define IMP_FINISH_LENGTH 1  /* finish reason: the output limit (incomplete) */
#define IMP_FINISH_FILTER 2  /* finish reason: the content filter */

/* How a stream that started ended early. */
typedef enum imp_cut {
  IMP_CUT_NONE = 0,
  IMP_CUT_DROP,  /* closed after the chunks (drop_after) */
  IMP_CUT_STALL  /* stopped sending after the chunks (stall_after) */
} imp_cut;

/*
 * What the provider did with one attempt, as read from the input. Every
 * pointer is owned by the struct (imp__resp_clear releases them).
 */
typedef struct imp_resp {
  imp_outcome outcome;
  int status;            /* HTTP status of an answer (200..599) */
  double delay_ms;       /* time before the answer (0: none) */
  char **hname, **hvalue; /* response headers, lower-case names, unfiltered */
  int nh, caph;
  int has_ra_date;       /* Retry-After is an HTTP-date ra_date_s ahead */
  double ra_date_s;
  char *code, *type, *message; /* a provider error's fields */
  char *content;         /* answer text of a 2xx */
  int stream;            /* 1: answered as an SSE stream */
  char **chunks;         /* stream text pieces */
  int nchunks, capchunks;
  double interval_s;     /* seconds between stream chunks */
  imp_cut cut;
  int stream_error;      /* 1: an error event after the chunks (code, type, message) */
  int no_end;            /* 1: the stream ended before its finish chunk */
  int no_terminator;     /* 1: it sent the finish chunk but no end marker */
  int truncated;         /* 1: the body was cut at `at` bytes */
  long at;
  int early_close;       /* 1: cut below its Content-Length */
  char *garbage;         /* a 2xx body that is not JSON */
  int is_garbage;        /* 1: garbage{} even when the body is unknown */
  int usage_in, usage_out; /* tokens billed, -1 unknown */
  imp_tool *tools;       /* the tool calls the answer carried, in order */
  int ntools, captools;
  int finish;            /* 0, IMP_FINISH_LENGTH or IMP_FINISH_FILTER */
  char *model;           /* the model the answer named, or NULL */
  const char *api;       /* the API (imp__api_of_path), static; NULL unknown */
  int frames;            /* stream frames sent before a cut or error, when the
                            input counted them (a trace); -1: from the chunks */
  int effect;            /* 1: at the effect endpoint */
  int effect_apply;      /* 1: the effect was executed */
} imp_resp;

void imp__resp_init(imp_resp *r);
void imp__resp_clear(imp_resp *r);
/* Adds a response header (name lower-cased; a repeated name is joined
   with ", "). Returns SIM_OK or SIM_ENOMEM. */
int imp__resp_header(imp_resp *r, const char *name, const char *value);
/* The value of header name (lower-case), or NULL. Borrowed. */
const char *imp__resp_get_header(const imp_resp *r, const char *name);
/* A tool call's parts as an answer showed them: with key >= 0 the call of
   that stream index (created on first sight), with -1 a new call; id and
   name are set when given and not yet known, args appended (any may be
   NULL). At most IMP_MAX_TOOLS calls, IMP_MAX_TEXT bytes of arguments.
   Returns SIM_OK or SIM_ENOMEM. */
int imp__resp_tool(imp_resp *r, int key, const char *id, const char *name, const char *args);
/* The stream frames a replay of r sends: its text chunks, then each tool
   call's arguments in 8-byte pieces (a Gemini call: one frame), as the
   server streams and the trace counts them; r->frames when the input
   counted them. */
int imp__resp_frames(const imp_resp *r);
/* Appends a stream chunk (copied, bounded by IMP_MAX_CHUNKS). */
int imp__resp_chunk(imp_resp *r, const char *s, size_t n);
/*
 * Reads what a response body says: a provider error (code, type, message),
 * a completion (its text), an SSE stream (its text chunks; `sse` 1 forces
 * it, else it is recognised by its frames), or, for a 2xx that is not
 * JSON, garbage. `parsed` may give the body already parsed (JSON Lines
 * logs often hold it as an object); then body may be NULL.
 */
int imp__resp_body(imp_resp *r, const char *body, size_t len, const cJSON *parsed,
                   int sse);
/* A provider error object in j: {"error": {...}} (OpenAI, Google),
   {"type": "error", "error": {...}} (Anthropic) or the Responses stream's
   {"type": "error", "code":, "message":}. Returns 1 when j is one (its
   code, type and message copied into r; *rc SIM_OK or SIM_ENOMEM), else 0. */
int imp__resp_error_json(imp_resp *r, const cJSON *j, int *rc);
/* The API a request path names: "openai-chat", "openai-responses",
   "anthropic", "gemini", "openai-completions", "embeddings", "effect", or
   NULL. Static. */
const char *imp__api_of_path(const char *path);
/* When Retry-After is an HTTP-date and ref_epoch_ms (the time the response
   was sent, > 0) or a Date header is known, sets has_ra_date/ra_date_s:
   replayed relative to the time of the replay. A date in the past or more
   than IMP_MAX_DATE_AHEAD ahead is left alone (kept as sent). */
void imp__resp_ra_date(imp_resp *r, double ref_epoch_ms);

/* One attempt of the input, its step already written as Lua text. */
typedef struct imp_attempt {
  double t_ms;       /* arrival time (any origin); valid when has_t */
  int has_t;
  long order;        /* position in the input, breaks ties */
  int line;          /* input line, for comments */
  char *key;         /* logical request; NULL: the one request of the log */
  char *provider;    /* provider name; NULL: "primary" */
  int root;          /* 1: arrived at /v1/... (the first provider) */
  int effect;        /* 1: at the effect endpoint */
  char *step;        /* the step, as Lua text */
  char *note;        /* what the comment beside the step says */
  /* What the expect table needs, set by imp__add from the response: */
  int status;        /* HTTP status, 0 when no response */
  int dropped;       /* 1: closed without a response */
  int quota;         /* 1: a 429 that says the quota is used up */
  int has_ra;        /* 1: the answer asked for a wait (Retry-After) */
  int tools;         /* 1: the answer carried a tool call */
} imp_attempt;

/* The attempts read from one input. */
typedef struct imp_log {
  const char *source;          /* shown in messages and in the doc */
  imp_format format;
  imp_attempt *v;
  size_t n, cap;
  int skipped;                 /* entries left out (not LLM endpoints, lookups) */
  int idem_ignored;            /* 1: the ledger ignored Idempotency-Key */
  int ledger_down;             /* 1: ledger lookups failed with 503 */
  double time_scale;           /* a trace's time scale (0: none) */
  int raw_dates;               /* 1: every Retry-After date is kept as sent */
  int compact;                 /* 1: no comment per attempt (to fit the size limit) */
  int too_big;                 /* 1: the scenario came out over the size limit */
  const char *map;             /* --map: "ours=theirs,..." for JSON Lines; NULL = none */
  char unknown[256];           /* JSON Lines fields nobody reads, comma-separated */
  char *call_ids;              /* distinct tool calls answered, "\nname\tid\n..." (owned) */
  size_t call_ids_len;
  int ncalls;                  /* how many (each a run the client may make: an arrival) */
  char *err;                   /* SIM_ERRLEN bytes */
} imp_log;

/* Writes "source:line: message" (line 0: "source: message") into lg->err
   and returns SIM_EINVAL. */
int imp__fail(imp_log *lg, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * Renders r as a step and appends an attempt with the meta data of a (its
 * key, provider and note are copied). Returns SIM_OK, SIM_ENOMEM, or
 * SIM_EINVAL (too many attempts) with the message in lg->err.
 */
int imp__add(imp_log *lg, const imp_attempt *a, const imp_resp *r);

/* ------------------------------------------------------------ reading */

/* Iterates over the lines of text: returns 1 with the next line in s
   and n (without its line end; its number is it->line), 0 at the end. */
typedef struct imp_lines {
  const char *text;
  size_t len, off;
  int line;
} imp_lines;
int imp__next_line(imp_lines *it, const char **s, size_t *n);

/* Parses an ISO-8601 date-time ("2024-05-01T12:00:00.250Z", an offset
   or none = UTC) into milliseconds since the epoch. Returns 0 or -1. */
int imp__parse_iso8601(const char *s, double *epoch_ms);
/* 1 if s is a plain decimal number ("2", "1.5") that the server writes
   back byte for byte when given as a number. */
int imp__plain_number(const char *s);
/* A copy of the first n bytes of s, at most IMP_MAX_TEXT, NUL-terminated;
   the caller frees it. NULL when out of memory. */
char *imp__dup_n(const char *s, size_t n);
/* Sets *dst (freeing the old value) to a copy of a string or number item
   (numbers as integers); any other item leaves it. Returns SIM_OK or
   SIM_ENOMEM. */
int imp__take_str(char **dst, const cJSON *it);
/* 1 if a response header must never be written into a scenario (a
   credential, or one the fake server sets itself). */
int imp__header_dropped(const char *name);
/* Replaces API keys and bearer tokens inside free text; returns a new
   string (owned by the caller) or NULL when out of memory. */
char *imp__scrub(const char *s, size_t n);

int imp__read_jsonl(imp_log *lg, const char *text, size_t len);
int imp__read_har(imp_log *lg, const char *text, size_t len);
int imp__read_trace(imp_log *lg, const char *text, size_t len);

#endif
