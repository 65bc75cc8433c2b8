/*
 * guard_int.h - what the files of guard/ share and nobody else sees.
 * Internal names are guard__name; callers of the library use guard.h only.
 */
#ifndef FUSEBOX_GUARD_INT_H
#define FUSEBOX_GUARD_INT_H

#include "guard/guard.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define GUARD__MAX_PROVIDERS 16
#define GUARD__MAX_ATTEMPTS 100
#define GUARD__MAX_LOG 2048           /* attempt-log lines per call */
#define GUARD__MAX_KEY 64             /* idempotency key length */
#define GUARD__MAX_SECRET 1024        /* API key length */
#define GUARD__MAX_HEADERS 64
#define GUARD__MAX_HEADER_BYTES (32u * 1024u)
#define GUARD__MAX_BODY_DEFAULT (4u * 1024u * 1024u)
#define GUARD__MAX_SSE_EVENT (1024u * 1024u)
#define GUARD__MAX_REQUEST (8u * 1024u * 1024u)

/* ------------------------------------------------------------ buf.c */

/* A growable byte buffer with a hard maximum; always NUL-terminated. */
typedef struct guard__buf {
  char *p;
  size_t len;
  size_t cap;
  size_t max; /* len never exceeds this */
} guard__buf;

/* Prepares an empty buffer that may hold up to max bytes. */
void guard__buf_init(guard__buf *b, size_t max);
/* Appends n bytes. Returns GUARD_OK, GUARD_ETOOBIG (nothing appended) or
 * GUARD_ENOMEM. */
int guard__buf_add(guard__buf *b, const void *data, size_t n);
/* Appends a NUL-terminated string, as guard__buf_add. */
int guard__buf_adds(guard__buf *b, const char *s);
/* Empties the buffer, keeping its memory. */
void guard__buf_reset(guard__buf *b);
/* Gives the contents away as a malloc'ed string ("" when empty; NULL when out
 * of memory) and leaves the buffer empty. The caller owns the string. */
char *guard__buf_take(guard__buf *b);
/* Releases the memory. */
void guard__buf_free(guard__buf *b);

/* Copies src into dst[n], truncating, always NUL-terminated. */
void guard__strlcpy(char *dst, const char *src, size_t n);
/* A malloc'ed copy of s (NULL stays NULL); sets *fail when out of memory. */
char *guard__strdup(const char *s, int *fail);
/* Case-insensitive ASCII comparison of two NUL-terminated strings; returns 1
 * when equal. */
int guard__streq_ci(const char *a, const char *b);

/* ------------------------------------------------------------ sse.c */

/* Called for each dispatched event; a nonzero return stops the feed. */
typedef int (*guard__sse_cb)(void *ud, const char *event, const char *data,
                             size_t data_len);

/* An incremental Server-Sent Events parser (WHATWG rules): accepts input
 * split anywhere, CR, LF or CRLF line ends, comments, multi-line data. */
typedef struct guard__sse {
  guard__buf line;  /* the line being read */
  guard__buf data;  /* data lines of the event being read */
  char event[64];   /* its event name; "" = "message" */
  int has_data;     /* a data field was seen */
  int after_cr;     /* the last byte was CR: a following LF is the same end */
  guard__sse_cb cb;
  void *ud;
} guard__sse;

/* Prepares a parser calling cb(ud, ...) for each event; max_event bounds one
 * event's data and one line. */
void guard__sse_init(guard__sse *s, size_t max_event, guard__sse_cb cb, void *ud);
/* Feeds n bytes. Returns 0, the callback's nonzero value, or GUARD_ETOOBIG /
 * GUARD_ENOMEM. */
int guard__sse_feed(guard__sse *s, const char *p, size_t n);
/* Ends the input: dispatches an event whose lines were all complete but whose
 * blank line never came. Returns as guard__sse_feed. */
int guard__sse_finish(guard__sse *s);
/* Releases the parser's memory. */
void guard__sse_free(guard__sse *s);

/* ------------------------------------------------------- ndjson.c */

/* Called for each non-blank line (without its line end); a nonzero return
 * stops the feed. */
typedef int (*guard__ndjson_cb)(void *ud, const char *line, size_t len);

/* An incremental NDJSON line reader. */
typedef struct guard__ndjson {
  guard__buf line;   /* the line being read */
  long lines;        /* lines handed on */
  guard__ndjson_cb cb;
  void *ud;
} guard__ndjson;

/* Prepares a reader calling cb(ud, ...) per line; max_line bounds a line. */
void guard__ndjson_init(guard__ndjson *r, size_t max_line, guard__ndjson_cb cb, void *ud);
/* Feeds n bytes. Returns 0, the callback's nonzero value, GUARD_ETOOBIG or
 * GUARD_ENOMEM. */
int guard__ndjson_feed(guard__ndjson *r, const char *p, size_t n);
/* Ends the input: dispatches a last line that had no newline. */
int guard__ndjson_finish(guard__ndjson *r);
/* Releases the reader's memory. */
void guard__ndjson_free(guard__ndjson *r);

/* -------------------------------------------------- eventstream.c */

/* How an AWS event stream broke (sticky: nothing after it is read). */
typedef enum {
  GUARD__ES_FINE = 0,
  GUARD__ES_PRELUDE_CRC, /* the prelude's CRC32 does not match */
  GUARD__ES_MESSAGE_CRC, /* the message's CRC32 does not match */
  GUARD__ES_BAD_LENGTH,  /* a total length under 16, over the maximum, or
                            headers longer than the message */
  GUARD__ES_BAD_HEADER,  /* a header that runs past its block, or an unknown type */
  GUARD__ES_CUT          /* the input ended inside a message */
} guard__es_broken;

/* One decoded message; the strings are "" when the header is absent. The
   payload points into the decoder and lives until the callback returns. */
typedef struct guard__es_msg {
  char message_type[16];    /* "event", "exception" or "error" */
  char event_type[64];
  char exception_type[64];
  char error_code[64];
  const char *payload;
  size_t payload_len;
} guard__es_msg;

/* Called for each whole, checked message; a nonzero return stops the feed. */
typedef int (*guard__es_cb)(void *ud, const guard__es_msg *m);

/* An incremental event stream decoder. */
typedef struct guard__es {
  guard__buf pending;       /* the message being gathered; max bounds one */
  guard__es_broken broken;
  long messages;            /* messages handed on */
  guard__es_cb cb;
  void *ud;
} guard__es;

/* Prepares a decoder calling cb(ud, ...) per message; max_message bounds one. */
void guard__es_init(guard__es *e, size_t max_message, guard__es_cb cb, void *ud);
/* Feeds n bytes. Returns 0; 1 once the stream is broken (e->broken says
 * how); the callback's nonzero value; or GUARD_ENOMEM. */
int guard__es_feed(guard__es *e, const char *data, size_t n);
/* Ends the input: a message begun but not ended is GUARD__ES_CUT. Returns 0,
 * or 1 when the stream is broken. */
int guard__es_finish(guard__es *e);
/* "prelude_crc", "message_crc", ...; "" for GUARD__ES_FINE. Static. */
const char *guard__es_broken_name(guard__es_broken b);
/* Releases the decoder's memory. */
void guard__es_free(guard__es *e);

/* ----------------------------------------------------------- wire.c */

/* What a body (or a stream) turned out to be, for classification. */
typedef enum {
  GUARD__BODY_OK = 0,    /* a whole, well-formed answer */
  GUARD__BODY_NOT_JSON,  /* not JSON (or truncated JSON) */
  GUARD__BODY_MISSING,   /* JSON without the required fields */
  GUARD__BODY_TRUNCATED, /* JSON that starts but is cut short, or a body cut
                            below its length by the connection */
  GUARD__BODY_NO_END,    /* a stream that ended without its end marker */
  GUARD__BODY_BAD_CHUNK, /* a stream event that was not JSON or lacked fields */
  GUARD__BODY_TOO_LARGE, /* over the body limit */
  GUARD__BODY_REFUSAL,   /* the model refused (content filter) */
  GUARD__BODY_ERROR      /* an error object: in a 200 body or a stream event */
} guard__body;

/* What was read from a response: the answer or the error it carried. */
typedef struct guard__answer {
  guard_dialect dialect;
  guard__buf text;       /* answer text (bounded) */
  long tokens_in;        /* -1 = not reported */
  long tokens_out;       /* -1 = not reported */
  int done;              /* the stream's end marker was seen */
  int refusal;
  int error;             /* an error object or event was seen */
  char err_type[64];
  char err_code[64];
  char retry_delay[32];  /* Google RetryInfo retryDelay in seconds ("2"), or "" */
  int ntc;
  guard__body bad;       /* first problem found in a stream event, or OK */
  int oom;               /* reading it ran out of memory: not the provider's
                            fault, the call fails GUARD_ENOMEM */
  /* Last, and set only up to ntc (each entry zeroed when it is created):
     17 KB that an answer without tool calls never touches (issue 13). */
  int tc_slot[GUARD_MAX_TOOL_CALLS];        /* the stream's index of each call */
  guard_tool_call tc[GUARD_MAX_TOOL_CALLS]; /* tool calls, whole or streaming in */
} guard__answer;

/* cJSON_ParseWithLength that tells a text that is not JSON from cJSON running
 * out of memory: then it returns NULL and sets *oom (POSIX malloc sets errno
 * to ENOMEM; nothing else cJSON calls does). */
struct cJSON *guard__json_parse(const char *text, size_t len, int *oom);

/* Prepares an empty answer for a dialect. */
void guard__answer_init(guard__answer *a, guard_dialect d, size_t max_text);
/* Hands src's answer (its text buffer included) to dst, copying only the
   tool calls it holds; src must not be freed after. */
void guard__answer_move(guard__answer *dst, const guard__answer *src);
/* Releases an answer's memory. */
void guard__answer_free(guard__answer *a);

/* Builds the request body for a chat call. The caller owns *out (free()).
 * Returns GUARD_OK, GUARD_EINVAL or GUARD_ENOMEM. */
int guard__wire_body(guard_dialect d, const char *model,
                     const guard_chat_request *req, char **out, size_t *len);
/* Parses a complete non-stream 2xx body into *a; returns what it was. */
guard__body guard__wire_parse(const char *body, size_t len, guard__answer *a);
/* Reads the structured error (type, code) of an error body into *a; returns
 * 1 when one was found. */
int guard__wire_error(const char *body, size_t len, guard__answer *a);
/* Applies one SSE event of the answer's dialect to *a. Returns 0. */
int guard__wire_stream_event(guard__answer *a, const char *event,
                             const char *data, size_t len);
/* What a stream that ended (cleanly, as far as the transport knows) was. */
guard__body guard__wire_stream_end(const guard__answer *a);

/* Helpers the dialect files (wire_*.c) share with wire.c. */
struct cJSON;
/* A string member of o, or NULL. */
const char *guard__jstr(const struct cJSON *o, const char *name);
/* A number member of o from 0 to 1e15, or -1. */
long guard__jlong(const struct cJSON *o, const char *name);
/* Adds text to the answer; -1 when full (a->bad becomes TOO_LARGE) or out of
 * memory (a->oom). */
int guard__add_text(guard__answer *a, const char *s);
/* The tool call at a stream's index slot, created when absent and create is
 * set; NULL when full or absent. */
guard_tool_call *guard__tc_at(guard__answer *a, int slot, int create);
/* Names a tool call: id (else its name) and name, each when not NULL. */
void guard__tc_names(guard_tool_call *t, const char *id, const char *name);
/* Appends argument text, marking the call too_long when it fills. */
void guard__tc_append(guard_tool_call *t, const char *s);
/* Sets the arguments to a JSON value's text ("{}" when NULL). */
void guard__tc_value(guard_tool_call *t, const struct cJSON *v);
/* Keeps the first problem a stream showed. */
void guard__stream_bad(guard__answer *a, guard__body why);
/* The chat messages as [{role, content}], the system text first as a
 * "system" message; NULL when out of memory. The caller owns it. */
struct cJSON *guard__wire_messages(const guard_chat_request *req);
/* Adds OpenAI-style "tools" [{type:function, function:{name, parameters}}]
 * to root when req offers tools. Returns 0, or -1 when out of memory. */
int guard__wire_fn_tools(struct cJSON *root, const guard_chat_request *req);

/* How a dialect's stream is framed. */
typedef enum {
  GUARD__FRAME_SSE = 0,  /* Server-Sent Events (sse.c) */
  GUARD__FRAME_NDJSON,   /* a JSON object a line (ndjson.c): Ollama */
  GUARD__FRAME_ES        /* AWS's binary event stream (eventstream.c): Bedrock */
} guard__framing;

/* The framing of a dialect's streams. */
guard__framing guard__wire_framing(guard_dialect d);

/* --------------------------------------------------- wire_bedrock.c */

/* Bedrock Converse's request body (the model rides in the path); NULL when
 * out of memory. The caller owns it. */
struct cJSON *guard__bedrock_body(const guard_chat_request *req, int max_tokens);
/* Reads a whole Converse answer {output:{message:{content}}, stopReason,
 * usage}. */
guard__body guard__bedrock_parse(const struct cJSON *root, guard__answer *a);
/* Applies one event stream message of ConverseStream to *a. Returns 0. */
int guard__bedrock_message(guard__answer *a, const guard__es_msg *m);
/* Keeps the error name of an x-amzn-errortype header ("ThrottlingException",
 * any ":..." suffix dropped) as the answer's error type. */
void guard__bedrock_error_type(guard__answer *a, const char *header);
/* Bedrock's model id escaped for a path segment (':' is %3A, as the AWS
 * SDK sends it) into out[n]; returns 0, or -1 when it does not fit. */
int guard__bedrock_model_path(const char *model, char *out, size_t n);

/* ---------------------------------------------------- wire_ollama.c */

/* Ollama /api/chat's request body, "stream" always said (Ollama streams
 * unless told not to); NULL when out of memory. The caller owns it. */
struct cJSON *guard__ollama_body(const char *model, const guard_chat_request *req,
                                 int max_tokens);
/* Reads a whole /api/chat answer {message, done, counts}. */
guard__body guard__ollama_parse(const struct cJSON *root, guard__answer *a);
/* Applies one NDJSON line of an /api/chat stream to *a. Returns 0. */
int guard__ollama_line(guard__answer *a, const char *line, size_t len);

/* ---------------------------------------------------- wire_cohere.c */

/* Cohere v2 /v2/chat's request body; NULL when out of memory. The caller
 * owns it. */
struct cJSON *guard__cohere_body(const char *model, const guard_chat_request *req,
                                 int max_tokens);
/* Reads a whole v2 answer {message, finish_reason, usage}. */
guard__body guard__cohere_parse(const struct cJSON *root, guard__answer *a);
/* Applies one typed SSE event (message-start ... message-end) to *a. */
void guard__cohere_event(guard__answer *a, const char *event, const struct cJSON *root);

/* ------------------------------------------------------- response.c */

struct guard_http_response {
  int status;
  int nheaders;
  char *hname[GUARD__MAX_HEADERS]; /* lower-cased */
  char *hvalue[GUARD__MAX_HEADERS];
  size_t hbytes;
  guard__buf body;          /* raw body, unless it is consumed as SSE */
  int want_stream;          /* the request asked for a stream */
  int sse;                  /* -1 undecided, 0 raw body, 1 fed to the stream
                               parser of `framing` (SSE, NDJSON or AWS) */
  guard__framing framing;   /* the answer's dialect's (SSE without an answer) */
  guard__sse parser;
  guard__ndjson nd;
  guard__es es;
  size_t stream_bytes;      /* bytes fed to the parser */
  guard__answer *answer;    /* stream events go here (may be NULL) */
  int overflow;             /* a limit refused bytes */
  int oom;                  /* keeping a header or body byte ran out of
                               memory: the attempt fails GUARD_ENOMEM */
  char detail[128];
};

/* Prepares a response for one attempt; answer receives stream events when
 * want_stream is set. */
void guard__resp_init(guard_http_response *r, size_t max_body, int want_stream,
                      guard__answer *answer);
/* Releases a response's memory. */
void guard__resp_free(guard_http_response *r);
/* Ends a stream that the transport finished: dispatches what the parser
 * still holds; an AWS message begun and not ended marks the answer
 * truncated. */
void guard__resp_stream_finish(guard_http_response *r);
/* The value of a response header (name in lower case), or NULL. */
const char *guard__resp_get(const guard_http_response *r, const char *lname);

/* ------------------------------------------------------- classify.c */

/* Everything classification may look at: never the message text. */
typedef struct guard__facts {
  guard_tx tx;
  int status;
  guard__body body;         /* for 2xx responses */
  int streaming;            /* the body was an SSE stream */
  const char *err_type;     /* structured error type, NULL if none */
  const char *err_code;     /* structured error code, NULL if none */
  const char *should_retry; /* x-should-retry header, NULL if absent */
} guard__facts;

/* Gives the facts exactly one kind, and a short summary (the error code or
 * type, a transport error name, or "http_NNN") in summary[n]. */
/* The random time added on top of an honoured Retry-After: up to this
 * fraction of it, and at most this many ms (times the time scale). */
#define GUARD__RA_SPREAD 0.1
#define GUARD__RA_SPREAD_MAX_MS 1000.0

guard_kind guard__classify(const guard__facts *f, char *summary, size_t n);
/* The kind a typical SDK would give (GUARD_STATUS_ONLY), from the table's. */
guard_kind guard__classify_by_status(const guard__facts *f, guard_kind table);
/* The kind a structured error type or code names by itself (as in a stream
 * error event), GUARD_KIND_UNKNOWN when not recognised. */
guard_kind guard__classify_type(const char *type_or_code);
/* A short name for a transport outcome ("connect_failed", ...). */
const char *guard__tx_name(guard_tx tx);

/* --------------------------------------------------------- policy.c */

/* The internal policy: the public one in milliseconds, time-scaled. */
typedef struct guard__pol {
  int attempts;
  double base_ms;
  double cap_ms;
  guard_jitter jitter;
  double jitter_fraction;
  double ra_cap_s;          /* compared with the unscaled header value */
  guard_ra_bad ra_bad;
  double max_wait_ms;       /* 0 = unlimited */
  double deadline_ms;       /* 0 = none */
  double to_cap_ms;         /* 0 = none */
  double to_floor_ms;
  double connect_ms;
  double idle_ms;
  int breaker_threshold;
  double breaker_cooldown_ms;
  unsigned flags;
} guard__pol;

/* Converts a public policy to the internal one, every duration times scale. */
void guard__pol_from(guard__pol *p, const guard_policy *pub, double scale);
/* Checks a public policy; returns GUARD_OK or GUARD_EINVAL with why[n]. */
int guard__policy_check(const guard_policy *p, char *why, size_t n);

/* -------------------------------------------------------- backoff.c */

/* The wait before retry number n (n >= 1 failures so far), in ms, given a
 * uniform u in [0, 1). */
double guard__backoff_ms(const guard__pol *p, int n, double u);

/* ---------------------------------------------------- retry_after.c */

typedef enum {
  GUARD__RA_NONE = 0, /* no header */
  GUARD__RA_OK,       /* a usable value in ms */
  GUARD__RA_BAD       /* present but negative, unparsable, infinite or over the cap */
} guard__ra_state;

/* A Retry-After reading. */
typedef struct guard__ra {
  guard__ra_state state;
  double ms;          /* the value asked for (unscaled), when OK */
  char why[32];       /* when BAD: "negative", "unparsable", "infinite", "over_cap" */
} guard__ra;

/* Reads retry-after-ms, then Retry-After (delta-seconds, integer or decimal,
 * then HTTP-date against wall_now_s) into *out; cap_s bounds a valid value. */
void guard__retry_after(const char *ra_ms, const char *ra, double wall_now_s,
                        double cap_s, guard__ra *out);
/* Parses an HTTP-date (IMF-fixdate, RFC 850 or asctime) into Unix seconds.
 * Returns 0, or -1 when it is not one. */
int guard__http_date(const char *s, double *unix_s);

/* ------------------------------------------------------- deadline.c */

/* One call's deadline on the monotonic clock. */
typedef struct guard__deadline {
  double start_ms;
  double at_ms;       /* meaningless when none */
  int none;
} guard__deadline;

/* Starts a deadline at now; deadline_ms 0 means none. */
void guard__deadline_start(guard__deadline *d, double now, double deadline_ms);
/* 1 when the deadline has passed. */
int guard__deadline_passed(const guard__deadline *d, double now);
/* 1 when waiting wait_ms from now would reach or cross the deadline. */
int guard__deadline_crossed_by(const guard__deadline *d, double now,
                               double wait_ms);
/* The attempt timeout: min(cap, max(floor, left / attempts_left)), never past
 * the deadline; 0 (none) when there is neither a deadline nor a cap. */
double guard__attempt_timeout(const guard__deadline *d, double now,
                              const guard__pol *p, int attempts_left);

/* -------------------------------------------------------- breaker.c */

typedef enum {
  GUARD__BRK_CLOSED = 0,
  GUARD__BRK_OPEN,
  GUARD__BRK_HALF_OPEN
} guard__brk_state;

/* A circuit breaker for one provider. Not locked: callers hold the handle's
 * mutex. */
typedef struct guard__breaker {
  guard__brk_state state;
  int failures;        /* consecutive */
  double open_until;   /* ms, while open */
  int probing;         /* half-open: the one probe is out */
} guard__breaker;

/* May an attempt go now? Returns 1 and sets *probe when it is the half-open
 * probe; returns 0 with why ("breaker_open", "breaker_probing") when not. */
int guard__breaker_allow(guard__breaker *b, const guard__pol *p, double now,
                         int *probe, const char **why);
/* 1 when the breaker would refuse an attempt now (no state change). */
int guard__breaker_refuses(const guard__breaker *b, const guard__pol *p,
                           double now);
/* Records an attempt's end: ok (the provider answered) or failed. */
void guard__breaker_record(guard__breaker *b, const guard__pol *p, double now,
                           int ok, int probe);
/* Gives back a probe that was claimed but never sent. */
void guard__breaker_release(guard__breaker *b, int probe);

/* --------------------------------------------------- retry_budget.c */

/* The token bucket shared by all calls of a handle. Not locked. */
typedef struct guard__rbudget {
  double tokens;
  double capacity;  /* 0 = off */
  double cost;
  double refill;
} guard__rbudget;

/* Prepares a full bucket. */
void guard__rbudget_init(guard__rbudget *b, double capacity, double cost,
                         double refill);
/* Takes the cost of one retry; returns 1 when allowed, 0 when empty. */
int guard__rbudget_take(guard__rbudget *b);
/* Returns tokens for one success. */
void guard__rbudget_success(guard__rbudget *b);

/* --------------------------------------------------------- budget.c */

/* The session token budget. Not locked. */
typedef struct guard__budget {
  long used;       /* charged so far */
  long reserved;   /* estimates of calls in flight */
} guard__budget;

/* The token estimate of a request: ceil(chars / 4) of its texts plus its
 * max_tokens. */
long guard__estimate(const guard_chat_request *req);
/* Tokens in chars characters of text (about four a token, rounded up). */
long guard__tokens_of(size_t chars);
/* Checks est against both limits (0 = none) and reserves it. Returns 0, or 1
 * when blocked with the reason in why[n]. */
int guard__budget_reserve(guard__budget *b, long per_call, long per_session,
                          long est, char *why, size_t n);
/* Ends a call: drops its reservation and charges what it produced. */
void guard__budget_settle(guard__budget *b, long est, long charged);

/* -------------------------------------------------------- guard.c */

/* A provider as the handle keeps it. */
typedef struct guard__prov {
  char *name;
  char *base;
  char *url;           /* the chat endpoint */
  char *url_stream;    /* where streams go when not url (Gemini, Bedrock); else NULL */
  char *key;
  char *model;
  guard_dialect dialect;
  guard__pol pol;
  guard__breaker brk;
} guard__prov;

struct guard {
  guard__prov prov[GUARD__MAX_PROVIDERS];
  int nprov;
  guard_policy pubpol;     /* the client policy as given (texts dropped) */
  guard__pol pol;          /* the client policy, internal form */
  long budget_per_call;
  long budget_per_session;
  char *degraded_text;
  char *blocked_text;
  double scale;
  guard_env env;
  char *effects_url;
  char *user_agent;
  size_t max_body;
  pthread_mutex_t mu;      /* guards everything below */
  uint64_t prng;
  guard__rbudget rbudget;
  guard__budget budget;
};

/* The monotonic clock, ms. */
double guard__now(guard *g);
/* Sleeps (or makes the fake clock advance). */
void guard__sleep(guard *g, double ms);
/* A uniform double in [0, 1). */
double guard__rand01(guard *g);
/* 64 random bits. */
uint64_t guard__rand64(guard *g);
/* The wall clock, Unix seconds. */
double guard__wall(guard *g);
/* Frees the calling thread's kept libcurl handles and connections. */
void guard__transport_curl_release(void);
/* Runs one HTTP attempt through the environment's transport. */
guard_tx guard__transport(guard *g, const guard_http_request *req,
                          guard_http_response *resp);

/* ---------------------------------------------------- attempt_log.c */

/* A call's growing result. */
typedef struct guard__call {
  guard *g;
  guard_result *r;
  double t0;             /* call start, monotonic ms */
  guard__deadline dl;
  double waited_ms;      /* total waiting so far */
  const char *stop;      /* why the last retry loop gave up (static text);
                            NULL while it has not */
  int cap_log;
} guard__call;

/* Allocates an empty result (text "" ) for a call starting now. Returns
 * GUARD_OK or GUARD_ENOMEM. */
int guard__call_begin(guard__call *c, guard *g);
/* Appends a zeroed attempt-log line for provider and attempt n, started now;
 * returns it, or NULL when out of memory or past GUARD__MAX_LOG. */
guard_attempt *guard__log_add(guard__call *c, const char *provider, int n);
/* Sets the result's text (a copy). Returns GUARD_OK or GUARD_ENOMEM. */
int guard__result_text(guard_result *r, const char *text);
/* Sets the result's reason (printf-style, bounded). Returns GUARD_OK or
 * GUARD_ENOMEM. */
int guard__result_reason(guard_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Writes "provider #n: kind status error" for an attempt into out[n]. */
void guard__attempt_summary(const guard_attempt *a, char *out, size_t n);

/* --------------------------------------------------------- wait.c */

/* Appends a note ("; "-separated) to an attempt's detail. */
void guard__note(guard_attempt *a, const char *what);
/*
 * Plans the wait after failure n of a provider whose per-attempt policy is
 * pol, given the response's Retry-After reading: the backoff, raised to a
 * valid Retry-After (unless ignored). Returns 1 with *wait_ms and *why set,
 * or 0 when retrying must stop now (bad Retry-After under GUARD_RA_STOP, the
 * maximum total wait, or a wait that would cross the deadline), with the
 * reason noted on a.
 */
int guard__plan_wait(guard__call *c, const guard__pol *pol, int n,
                     const guard__ra *ra, guard_attempt *a, double *wait_ms,
                     guard_wait_why *why);
/* Waits as planned and records it on the attempt and the call. */
void guard__do_wait(guard__call *c, guard_attempt *a, double wait_ms,
                    guard_wait_why why);

/* ------------------------------------------------------ attempt.c */

/* What one HTTP attempt is to send. */
typedef struct guard__req {
  const char *method;
  const char *url;
  const char *const *headers;
  int nheaders;
  const char *body;
  size_t body_len;
  double timeout_ms;
  double connect_ms;
  double idle_ms;
  int stream;             /* expect SSE */
} guard__req;

/* Sends one attempt into *resp (prepared by the caller), counts it in
 * c->r->requests and sets a->elapsed_ms, a->timeout_ms, a->status and
 * a->request_id. Returns how the transport ended. */
guard_tx guard__send(guard__call *c, const guard__req *s,
                     guard_http_response *resp, guard_attempt *a);

#define GUARD__MAX_REQ_HEADERS 10

/* The header lines of one request, "Name: value", owned here. */
typedef struct guard__hdrs {
  char *line[GUARD__MAX_REQ_HEADERS];
  int n;
} guard__hdrs;

/* Adds a header line. Returns GUARD_OK, GUARD_ETOOBIG when full, or
 * GUARD_ENOMEM. */
int guard__hdrs_add(guard__hdrs *h, const char *name, const char *value);
/* Releases the header lines. */
void guard__hdrs_free(guard__hdrs *h);

/* Fills an idempotency key "fx-" + 32 hex digits from the random source. */
void guard__new_key(guard *g, char *out, size_t n);

#endif
