/*
 * guard.h - the guarded client: a chat call to an OpenAI-compatible,
 * Anthropic, Gemini, Bedrock, Ollama or Cohere provider that classifies every failure, retries only what is
 * retryable (backoff with jitter, Retry-After as a floor), keeps one deadline
 * per call, falls back along a chain of providers, checks a token budget
 * before sending, trips a circuit breaker per provider and a retry budget per
 * client, protects side effects with one idempotency key and a ledger lookup,
 * and returns an attempt log for every call.
 *
 * Use:
 *   guard_global_init();                          once per process
 *   guard_config cfg; guard_config_init(&cfg);    defaults everywhere
 *   cfg.providers = chain; cfg.nproviders = n;    the fallback chain
 *   cfg.policy.deadline = 8;                      adjust the policy
 *   guard *g; guard_new(&cfg, &g, err);
 *   guard_result *r; guard_chat(g, &req, &r);     r->outcome, r->text, r->attempts
 *   guard_result_free(r); guard_free(g);
 *
 * One handle may serve many threads at once: the breakers, the retry budget
 * and the session token budget are shared by every call of the handle.
 *
 * Times in the API are seconds (double); times in results are milliseconds.
 */
#ifndef FUSEBOX_GUARD_H
#define FUSEBOX_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define GUARD_ERRLEN 256

/* Error codes returned by guard_ functions (0 is success). */
enum {
  GUARD_OK = 0,
  GUARD_ENOMEM = -1,  /* out of memory */
  GUARD_EINVAL = -2,  /* a bad argument or configuration */
  GUARD_ETOOBIG = -3, /* a bounded buffer would have grown past its maximum */
  GUARD_EINIT = -4    /* global initialisation (libcurl) failed */
};

/* A static description of an error code. */
const char *guard_strerror(int code);

/*
 * One-time process set-up (initialises libcurl). Call it before any thread
 * uses the default transport. Returns GUARD_OK or GUARD_EINIT.
 */
int guard_global_init(void);
/* Undoes guard_global_init (and frees the calling thread's kept libcurl
 * handles and connections); call once at exit when no handle is in use. */
void guard_global_cleanup(void);

/* ------------------------------------------------------------- policy */

/* The wire dialect of a provider. */
typedef enum {
  GUARD_OPENAI = 0,     /* chat completions: {base}/chat/completions */
  GUARD_ANTHROPIC = 1,  /* messages: {base}/messages */
  GUARD_RESPONSES = 2,  /* OpenAI Responses: {base}/responses */
  GUARD_GEMINI = 3,     /* Gemini: {base}/models/{model}:generateContent */
  GUARD_BEDROCK = 4,    /* Bedrock Converse: {base}/model/{model}/converse(-stream) */
  GUARD_OLLAMA = 5,     /* Ollama: {base}/api/chat, NDJSON streams */
  GUARD_COHERE = 6      /* Cohere v2: {base}/v2/chat */
} guard_dialect;

/* How the backoff is randomised (see guard_policy.jitter). */
typedef enum {
  GUARD_JITTER_NONE = 0,  /* exactly min(cap, base*2^(n-1)) */
  GUARD_JITTER_FULL,      /* uniform in [0, b) */
  GUARD_JITTER_EQUAL,     /* b/2 + uniform in [0, b/2) */
  GUARD_JITTER_PLUSMINUS, /* b * (1 + uniform in [-f, +f)), f = jitter_fraction */
  GUARD_JITTER_SUBTRACT   /* b * (1 - uniform in [0, f)): an SDK's "up to 25 % less" */
} guard_jitter;

/* What to do with a Retry-After that is negative, unparsable, infinite or
 * beyond retry_after_cap. */
typedef enum {
  GUARD_RA_IGNORE = 0, /* treat it as absent: wait the backoff */
  GUARD_RA_STOP        /* stop retrying this provider */
} guard_ra_bad;

/*
 * Behaviour flags. Each one switches off one protection; the guarded client
 * sets none. They exist so that badly behaved reference clients run through
 * the same loop and the same attempt log.
 */
enum {
  GUARD_RETRY_EVERYTHING = 1u << 0,   /* retry every failure, whatever its kind */
  GUARD_IGNORE_RETRY_AFTER = 1u << 1, /* never read Retry-After */
  GUARD_NEW_KEY_PER_ATTEMPT = 1u << 2,/* a fresh idempotency key on every attempt */
  GUARD_SPLICE_PARTIAL = 1u << 3,     /* prepend a broken stream's text to the retry's */
  GUARD_FIXED_WAIT = 1u << 4,         /* wait backoff_base every time (jitter still applies) */
  GUARD_BLIND_REEXECUTE = 1u << 5,    /* effects: re-send on an unknown result without asking the ledger */
  GUARD_STATUS_ONLY = 1u << 6,        /* retry by status alone, as a typical SDK: connection
                                         errors, timeouts, 408, 409, 429, 5xx whatever the
                                         body says; a bad 200 or a started stream is final */
  GUARD_NO_KEY = 1u << 7,             /* effects: send no Idempotency-Key at all */
  GUARD_TRUST_TOOLS = 1u << 8         /* tools: run every tool call as the model sent it,
                                         unchecked and not keyed by its call id (with
                                         SPLICE_PARTIAL: as soon as a stream showed it,
                                         even one that then failed) */
};

/*
 * The policy. Start from guard_policy_default() and change fields. A zero
 * means "none/unlimited" where noted. Per provider (guard_provider.policy),
 * only the per-attempt fields are read: attempts, backoff_*, jitter*,
 * retry_after_*, attempt_timeout_*, connect_timeout, stream_idle_timeout and
 * breaker_*. The call-level fields (deadline, max_total_wait, budget_*,
 * retry_budget_*, the texts and flags) always come from the client policy.
 */
typedef struct guard_policy {
  int attempts;                 /* per provider, first try included (1..100); default 3 */
  double backoff_base;          /* s; default 0.5 */
  double backoff_cap;           /* s; default 8 */
  guard_jitter jitter;          /* default GUARD_JITTER_FULL */
  double jitter_fraction;       /* for GUARD_JITTER_PLUSMINUS, 0..1; default 0.1 */
  double retry_after_cap;       /* s; a longer Retry-After is "bad"; 0 = no cap; default 60 */
  guard_ra_bad retry_after_bad; /* default GUARD_RA_IGNORE */
  double max_total_wait;        /* s of waiting per call; 0 = unlimited; default 30 */
  double deadline;              /* s per call; 0 = none; default 30 */
  double attempt_timeout_cap;   /* s; 0 = none; default 20 */
  double attempt_timeout_floor; /* s; default 1 */
  double connect_timeout;       /* s; 0 = none; default 5 */
  double stream_idle_timeout;   /* s without a byte ends a stream; 0 = none; default 15 */
  long budget_per_call;         /* tokens (estimate); 0 = unlimited; default 0 */
  long budget_per_session;      /* tokens for the handle's life; 0 = unlimited; default 0 */
  int breaker_threshold;        /* consecutive failures that open it; 0 = off; default 5 */
  double breaker_cooldown;      /* s open before one half-open probe; default 30 */
  double retry_budget_capacity; /* tokens in the shared bucket; 0 = off; default 20 */
  double retry_budget_cost;     /* tokens one retry takes; default 1 */
  double retry_budget_refill;   /* tokens one success returns; default 0.2 */
  const char *degraded_text;    /* NULL = a default that says it is degraded */
  const char *blocked_text;     /* NULL = a default that says the budget blocked it */
  unsigned flags;               /* GUARD_RETRY_EVERYTHING etc.; default 0 */
} guard_policy;

/* The guarded client's default policy (the values noted above). */
guard_policy guard_policy_default(void);

/*
 * The wait before retry n (after n failures, n < 1 read as 1) under p's
 * backoff before any jitter, in seconds: min(backoff_cap, backoff_base *
 * 2^(n-1)), or backoff_base with GUARD_FIXED_WAIT. Every jitter draws the
 * actual wait from this one (below it, or around it by jitter_fraction). For
 * planning how long a client will take; pure, p only read; 0 for NULL.
 */
double guard_backoff_nominal(const guard_policy *p, int n);

/* ---------------------------------------------------------- providers */

/*
 * One provider of the fallback chain. base_url is the API root including its
 * version path: requests go to {base_url}/chat/completions (OpenAI),
 * {base_url}/messages (Anthropic), {base_url}/responses (Responses) or
 * {base_url}/models/{model}:generateContent (Gemini; streams at
 * :streamGenerateContent?alt=sse). Bedrock, Ollama and Cohere put their
 * version in their own paths, so their base is the host (and a fusebox
 * provider prefix): {base_url}/model/{model}/converse (streams at
 * /converse-stream; the model id escaped, ':' as %3A), {base_url}/api/chat,
 * {base_url}/v2/chat. Bedrock's requests are not SigV4-signed (api_key, if
 * any, goes as a Bearer token). For Anthropic a base without a trailing
 * "/v1" gets one, so both "http://host:P" (ANTHROPIC_BASE_URL style) and
 * "http://host:P/v1" work. Against `fusebox serve`: "http://127.0.0.1:P/v1"
 * for the first provider, "http://127.0.0.1:P/backup/v1" for "backup".
 * Every string is copied by guard_new.
 */
typedef struct guard_provider {
  const char *name;            /* shown in the attempt log, e.g. "primary" */
  const char *base_url;
  guard_dialect dialect;
  const char *api_key;         /* NULL = send none */
  const char *model;
  const guard_policy *policy;  /* per-attempt overrides; NULL = the client's */
} guard_provider;

/* ---------------------------------------------------------- transport */

/* One HTTP attempt, as the guard asks the transport to perform it. */
typedef struct guard_http_request {
  const char *method;          /* "POST" or "GET" */
  const char *url;
  const char *const *headers;  /* "Name: value" strings */
  int nheaders;
  const char *body;            /* NULL for GET */
  size_t body_len;
  double timeout_ms;           /* the whole attempt; 0 = none */
  double connect_timeout_ms;   /* 0 = none */
  double idle_timeout_ms;      /* no byte for this long ends it; 0 = none */
} guard_http_request;

/* How an attempt ended at the transport level. */
typedef enum {
  GUARD_TX_OK = 0,  /* a complete response (any status) */
  GUARD_TX_CONNECT, /* no connection: the request was certainly not sent */
  GUARD_TX_CLOSED,  /* closed or reset before a status line */
  GUARD_TX_TIMEOUT, /* the attempt timeout fired */
  GUARD_TX_IDLE,    /* the idle timeout fired */
  GUARD_TX_CUT,     /* closed after the status line, before the body ended */
  GUARD_TX_TOOBIG,  /* guard_resp_body refused more bytes */
  GUARD_TX_OTHER    /* anything else (bad URL, TLS, ...) */
} guard_tx;

/* The response being received; the guard owns it, the transport fills it. */
typedef struct guard_http_response guard_http_response;

/* Sets the status (a later call, e.g. after 100 Continue, forgets the
 * headers so far). Returns GUARD_OK. */
int guard_resp_status(guard_http_response *r, int status);
/* Adds one response header (name matched case-insensitively). Returns
 * GUARD_OK, or GUARD_ETOOBIG past 64 headers / 32 KiB (the header is dropped). */
int guard_resp_header(guard_http_response *r, const char *name, size_t name_len,
                      const char *value, size_t value_len);
/* Delivers body bytes as they arrive. Returns GUARD_OK, or GUARD_ETOOBIG when
 * the body passed its maximum: the transport must then stop and return
 * GUARD_TX_TOOBIG. */
int guard_resp_body(guard_http_response *r, const void *data, size_t len);
/* Keeps a short transport error description for the attempt log. */
void guard_resp_detail(guard_http_response *r, const char *detail);

/* Performs one attempt; returns how it ended. Must be thread-safe. */
typedef guard_tx (*guard_transport_fn)(void *ud, const guard_http_request *req,
                                       guard_http_response *resp);

/*
 * The default transport: libcurl, its own retries off, no signals, no
 * redirects, no proxy for loopback, the idle timeout enforced between
 * received bytes. Each thread keeps its libcurl handles and a finished
 * response's connection (HTTP keep-alive) for its next attempts and calls,
 * as real SDKs do; they are freed when the thread ends (the calling
 * thread's by guard_global_cleanup). ud is unused.
 */
guard_tx guard_transport_curl(void *ud, const guard_http_request *req,
                              guard_http_response *resp);

/*
 * The environment: every source of time, randomness and I/O. A NULL member
 * means the real one: CLOCK_MONOTONIC, nanosleep, a PRNG seeded from
 * guard_config.seed, the system wall clock, libcurl. All must be thread-safe
 * when a handle is shared by threads. Tests inject a fake clock whose sleep
 * advances it, a fixed random source and a scripted transport.
 */
typedef struct guard_env {
  double (*now_ms)(void *ud);            /* monotonic milliseconds */
  void (*sleep_ms)(void *ud, double ms);
  uint64_t (*rand64)(void *ud);          /* uniform 64-bit values */
  double (*wall_s)(void *ud);            /* Unix time, s (HTTP-date Retry-After) */
  void *ud;                              /* passed to the four above */
  guard_transport_fn transport;
  void *transport_ud;
} guard_env;

/* --------------------------------------------------------------- client */

/* Everything guard_new needs. Strings and arrays are copied. */
typedef struct guard_config {
  const guard_provider *providers; /* the fallback chain, in order (1..16) */
  int nproviders;
  guard_policy policy;             /* the client policy */
  guard_env env;
  double time_scale;               /* every wait and timeout times this (and
                                      Retry-After); 0 = 1 */
  uint64_t seed;                   /* for the default random source */
  const char *effects_url;         /* effect endpoint root ({url}/effects/...);
                                      NULL = the first provider's base_url */
  size_t max_response_bytes;       /* body limit per attempt; 0 = 4 MiB */
  const char *user_agent;          /* NULL = "fusebox-guard/1" */
} guard_config;

/* Fills *cfg with zeros and the default policy. */
void guard_config_init(guard_config *cfg);

typedef struct guard guard;

/*
 * Creates a client handle from *cfg. The caller owns *out and releases it
 * with guard_free. On error returns GUARD_EINVAL or GUARD_ENOMEM with the
 * reason in err (which may be NULL).
 */
int guard_new(const guard_config *cfg, guard **out, char err[GUARD_ERRLEN]);
/* Releases a handle; no call may be running on it. NULL is a no-op. */
void guard_free(guard *g);

/* -------------------------------------------------------------- results */

/* The kind of one attempt. */
typedef enum {
  GUARD_KIND_OK = 0,
  GUARD_KIND_TRANSIENT, /* retried */
  GUARD_KIND_PERMANENT, /* never retried; the chain moves on */
  GUARD_KIND_SHAPE,     /* a 200 that is not a whole answer; retried */
  GUARD_KIND_DEADLINE,  /* cut by the call's deadline */
  GUARD_KIND_UNKNOWN,   /* not recognised: never retried (fail closed) */
  GUARD_KIND_SKIPPED    /* not sent: breaker open or retry budget empty */
} guard_kind;

/* How a call ended. */
typedef enum {
  GUARD_OUTCOME_OK = 0,
  GUARD_OUTCOME_DEGRADED, /* every provider failed: the degraded text */
  GUARD_OUTCOME_BLOCKED,  /* over the token budget: nothing was sent */
  GUARD_OUTCOME_PENDING,  /* an effect whose result nobody can tell */
  GUARD_OUTCOME_ERROR     /* an effect that failed for good */
} guard_outcome;

/* Why the guard waited after an attempt. */
typedef enum {
  GUARD_WAIT_NONE = 0,
  GUARD_WAIT_BACKOFF,
  GUARD_WAIT_RETRY_AFTER
} guard_wait_why;

/* "ok", "transient", ... as in the trace format; "?" when out of range. */
const char *guard_kind_name(guard_kind k);
/* "ok", "degraded", "blocked", "pending", "error"; "?" when out of range. */
const char *guard_outcome_name(guard_outcome o);
/* "none", "backoff", "retry_after"; "?" when out of range. */
const char *guard_wait_why_name(guard_wait_why w);

/* One line of the attempt log. */
typedef struct guard_attempt {
  int n;                   /* attempt number on this provider, from 1 */
  char provider[32];       /* provider name; "ledger" for an effect lookup */
  double start_ms;         /* since the call started */
  double elapsed_ms;
  guard_kind kind;
  int status;              /* HTTP status; 0 when none */
  char error[64];          /* error code/type, transport error or skip reason; "" if ok */
  char detail[128];        /* more words on it, for people */
  char request_id[64];     /* x-request-id / request-id, when sent */
  double timeout_ms;       /* the attempt timeout it was given; 0 = none */
  double wait_ms;          /* waited after this attempt */
  guard_wait_why wait_why;
  double retry_after_ms;   /* a valid Retry-After it sent, in ms times time_scale;
                              -1 when none */
  char *partial;           /* text a failed stream delivered; NULL if none */
} guard_attempt;

#define GUARD_MAX_TOOL_CALLS 8
#define GUARD_MAX_TOOL_ARGS 2048

/* A tool call an answer carried. */
typedef struct guard_tool_call {
  char id[64];             /* the call id ("call_1"); the tool's name when none */
  char name[64];
  char arguments[GUARD_MAX_TOOL_ARGS]; /* argument JSON text as received */
  int too_long;            /* arguments over GUARD_MAX_TOOL_ARGS (cut here) */
  int partial;             /* seen in an attempt that failed (never whole) */
} guard_tool_call;

/* The result of one call. */
typedef struct guard_result {
  guard_outcome outcome;
  char *text;              /* the answer, degraded or blocked text, or the
                              effect's result JSON; never NULL */
  char *reason;            /* why it is not ok; NULL when ok */
  char *provider;          /* who answered; NULL when nobody did */
  double total_ms;
  long tokens;             /* charged: tokens_in + tokens_out of the answer */
  long tokens_in;
  long tokens_out;
  long estimate;           /* the budget estimate checked before sending */
  int requests;            /* HTTP requests sent (lookups included) */
  char key[80];            /* the (last) idempotency key; "" if none */
  char stop[48];           /* why the call gave up ("max total wait",
                              "deadline", "breaker open", "retry budget empty",
                              "attempts used up", "not retryable", "bad
                              retry-after", "wait would cross the deadline",
                              "token budget"); "" when it did not give up */
  int nattempts;
  guard_attempt *attempts;
  int ntool_calls;         /* tool calls of the answer (and, for a client that
                              trusts partial streams, of failed attempts) */
  guard_tool_call tool_calls[GUARD_MAX_TOOL_CALLS]; /* set up to ntool_calls;
                              the entries past it are unset (kept last) */
} guard_result;

/* Releases a result. NULL is a no-op. */
void guard_result_free(guard_result *r);

/*
 * Renders a result as the `client` trace event of docs/trace.md, one line of
 * compact JSON without a newline; client names the client ("guard"), call
 * numbers the call, t_ms is the event time. The caller owns the returned
 * string and frees it with free(); NULL when out of memory.
 */
char *guard_result_json(const guard_result *r, const char *client, int call,
                        double t_ms);

/* ---------------------------------------------------------------- calls */

/* One chat message. */
typedef struct guard_message {
  const char *role;    /* "user" or "assistant" */
  const char *content;
} guard_message;

/* A chat request, sent in each provider's dialect. */
typedef struct guard_chat_request {
  const char *system;              /* NULL = none */
  const guard_message *messages;
  int nmessages;                   /* >= 1 */
  int max_tokens;                  /* 0 = 1024 */
  int stream;                      /* consume the answer as SSE */
  const char *idempotency_key;     /* NULL = none; else sent on every attempt */
  const char *const *tools;        /* names of the functions offered; NULL = none */
  int ntools;
} guard_chat_request;

/*
 * Makes one guarded chat call. Returns GUARD_OK with a result in *out (owned
 * by the caller, released with guard_result_free) whatever the outcome: ok,
 * degraded or blocked; a negative code only for a bad argument or when out of
 * memory.
 *
 * The order: the token estimate against the budgets (over: "blocked", no
 * request); then for each provider in turn, before every attempt the
 * deadline and the breaker (open: a "skipped" line, next provider), the
 * attempt timeout min(cap, max(floor, left / attempts left on this
 * provider)) never past the deadline; after a transient or shape failure,
 * the wait (backoff, raised to a valid Retry-After), which stops retrying
 * this provider when it would pass max_total_wait or the deadline, or when
 * the retry budget is empty (a "skipped" line); a permanent or unknown
 * failure moves to the next provider at once, a "deadline" ends the call.
 * When no provider answered: the degraded text, with the last real error as
 * the reason.
 */
int guard_chat(guard *g, const guard_chat_request *req, guard_result **out);

/*
 * Performs one side effect: POST {effects_url}/effects/{name} with
 * payload_json as the body and one Idempotency-Key for every attempt (key, or
 * a generated one when NULL). When an attempt's result is unknown (timeout,
 * connection lost after sending, unreadable 200), asks the ledger
 * (GET {effects_url}/effects/{key}) before sending again: applied -> ok with
 * the stored result; not applied -> retry with the same key; no answer ->
 * outcome pending. Returns as guard_chat; outcome ok, pending or error.
 */
int guard_effect(guard *g, const char *name, const char *payload_json,
                 const char *key, guard_result **out);

/*
 * Runs the tool calls of an answered turn: each through guard_effect at the
 * effect endpoint named after the tool, with the call id as its
 * Idempotency-Key, so a call carried again by a retried turn is not run
 * twice. A call is refused (not run) when it came from a failed attempt,
 * names a tool req did not offer, or its arguments are not one whole JSON
 * object; GUARD_TRUST_TOOLS runs them all. *ran and *refused count the
 * calls; why (whylen bytes, may be NULL) says why the first refusal was.
 * Returns GUARD_OK, or a negative code when out of memory.
 */
int guard_run_tools(guard *g, const guard_chat_request *req, const guard_result *turn,
                    int *ran, int *refused, char *why, size_t whylen);

#endif
