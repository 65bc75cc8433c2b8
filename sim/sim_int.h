/*
 * sim_int.h - internals shared by the files of the sim/ module.
 *
 * The split: Lua decides, C acts. sim/lua_*.c (the only files that include
 * lua.h) load a scenario and turn what its provider returns into a sim_step;
 * the server files carry the step out on the wire, on timers.
 */
#ifndef FUSEBOX_SIM_INT_H
#define FUSEBOX_SIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

/* ---------------------------------------------------------------- steps */

typedef enum sim_step_kind {
  SIM_STEP_CHAT = 0, /* a well-formed completion */
  SIM_STEP_STREAM,   /* an SSE stream, possibly faulty */
  SIM_STEP_FAIL,     /* a provider-shaped error response */
  SIM_STEP_HANG,     /* never answer */
  SIM_STEP_DELAY,    /* wait `seconds`, then play `next` */
  SIM_STEP_DROP,     /* close the connection without a response */
  SIM_STEP_RESET,    /* TCP RST */
  SIM_STEP_TRUNCATE, /* play `next` with its body cut at `at` bytes */
  SIM_STEP_GARBAGE,  /* 200 whose body is not JSON */
  SIM_STEP_EFFECT    /* a side effect at the effect endpoint */
} sim_step_kind;

typedef struct sim_header {
  char *name;
  char *value;
} sim_header;

/*
 * One decision of the provider for one attempt. Every pointer is owned by
 * the step and released by sim__step_free(). Fields that do not apply to
 * the step's kind keep their defaults (see sim__step_new).
 */
typedef struct sim_step {
  sim_step_kind kind;

  /* chat, stream */
  char *content;      /* answer text; NULL = a default sentence */
  char *model;        /* NULL = echo the request's model */
  int usage_in;       /* prompt tokens billed; -1 = estimate from request */
  int usage_out;      /* completion tokens billed; -1 = estimate from text */

  /* stream */
  char **chunks;      /* text pieces, one per delta event; NULL = split content */
  int nchunks;
  double interval;    /* seconds between chunks (scaled by the time scale) */
  int drop_after;     /* close the connection after N chunks; -1 = never */
  int stall_after;    /* stop sending after N chunks; -1 = never */
  double stall;       /* how long a stall lasts in seconds; < 0 = forever */
  int error_after;    /* send an in-stream error event after N chunks; -1 = never */
  int no_end;         /* 1: finish cleanly but without the end marker */

  /* fail; status/code/type/message also describe a stream's error event */
  int status;         /* HTTP status; 0 = the kind's default */
  char *code;         /* provider error code, e.g. "rate_limit_exceeded" */
  char *type;         /* provider error type, e.g. "rate_limit_error" */
  char *message;
  int has_retry_after;       /* 1: send Retry-After */
  double retry_after;        /* delta-seconds (may be decimal) */
  char *retry_after_raw;     /* send this exact Retry-After text instead */
  int has_retry_after_ms;
  double retry_after_ms;     /* retry-after-ms header value */
  int has_retry_after_date;
  double retry_after_date;   /* Retry-After as an HTTP-date this many s ahead */

  sim_header *headers;       /* extra response headers, any step */
  int nheaders;

  /* delay */
  double seconds;            /* scaled by the time scale */

  /* delay, truncate, effect: the wrapped step (effect: how the response
     goes; NULL = a normal 200 answer) */
  struct sim_step *next;

  /* truncate */
  long at;                   /* bytes of the body actually sent */
  int early_close;           /* 1: Content-Length promises the full body */

  /* garbage */
  char *body;                /* NULL = a default HTML page */

  /* effect */
  int apply;                 /* 1: the effect is applied (committed) */
} sim_step;

/* A step of `kind` with every field at its default. Owned by the caller. */
sim_step *sim__step_new(sim_step_kind kind);
/* Releases a step and everything it owns; NULL is a no-op. */
void sim__step_free(sim_step *s);
/* The step kind's name as scenarios spell it ("chat", "fail", ...). */
const char *sim__step_kind_name(sim_step_kind kind);

/* ------------------------------------------------------------- requests */

typedef enum sim_dialect {
  SIM_DIALECT_OPENAI = 0, /* POST /v1/chat/completions */
  SIM_DIALECT_ANTHROPIC,  /* POST /v1/messages */
  SIM_DIALECT_EFFECT      /* POST /v1/effects/{name}, GET /v1/effects/{key} */
} sim_dialect;

const char *sim__dialect_name(sim_dialect d);

/*
 * What a provider function sees of one arrival (the `req` table). Borrowed
 * from the server for the duration of one decision.
 */
typedef struct sim_req {
  int attempt;               /* nth arrival of this logical request, from 1 */
  int n;                     /* arrival number in the session, from 1 */
  const char *method;
  const char *path;          /* path as sent, e.g. /backup/v1/messages */
  const char *provider;      /* provider name the path selected */
  sim_dialect dialect;
  const sim_header *headers; /* lower-case names; secrets already redacted */
  int nheaders;
  const char *body;          /* raw body bytes (not NUL-terminated) */
  size_t body_len;
  int stream;                /* 1: the body asked for "stream": true */
  double t;                  /* seconds since session start */
  const char *key;           /* logical request key */
} sim_req;

/* ------------------------------------------------------------ scenarios */

typedef struct sim_scenario sim_scenario;

/*
 * Loads and validates a scenario file in a fresh sandboxed Lua state.
 * `seed` seeds math.random. On error returns a negative code and writes
 * "file:line: message" into err. The caller owns *out.
 */
int sim__scenario_load(const char *path, uint64_t seed, sim_scenario **out,
                       char err[SIM_ERRLEN]);
/* Releases a scenario and its Lua state; NULL is a no-op. */
void sim__scenario_free(sim_scenario *sc);

/* Borrowed views of a loaded scenario; valid until sim__scenario_free. */
const char *sim__scenario_name(const sim_scenario *sc);
const char *sim__scenario_doc(const sim_scenario *sc);
const char *sim__scenario_path(const sim_scenario *sc);
int sim__scenario_ntags(const sim_scenario *sc);
const char *sim__scenario_tag(const sim_scenario *sc, int i);
/* Providers in declaration order; index 0 is also served at /v1. */
int sim__scenario_nproviders(const sim_scenario *sc);
const char *sim__scenario_provider_name(const sim_scenario *sc, int i);
/* 1 if the scenario declares `effects`. */
int sim__scenario_has_effects(const sim_scenario *sc);
/* 1 if the effect ledger honours Idempotency-Key (default), 0 if ignored. */
int sim__scenario_idempotency_honoured(const sim_scenario *sc);
/* 1 if the ledger answers lookups (default), 0 if it is "down" (503). */
int sim__scenario_ledger_up(const sim_scenario *sc);

/*
 * The `client`, `expect` and `ratelimit` tables as JSON text (NULL when
 * absent). Owned by the scenario.
 */
const char *sim__scenario_client_json(const sim_scenario *sc);
const char *sim__scenario_expect_json(const sim_scenario *sc);
const char *sim__scenario_ratelimit_json(const sim_scenario *sc);

/*
 * Asks provider `provider` (index into the providers, or -1 for the effects
 * table) what to do with one arrival. Thread-safe: the scenario serialises
 * calls into its Lua state. On success returns 0 and a step the caller owns;
 * on a scenario error (a Lua error, the instruction or memory limit, a bad
 * step) returns a negative code and "file:line: message" in err.
 */
int sim__scenario_decide(sim_scenario *sc, int provider, const sim_req *req,
                         sim_step **out, char err[SIM_ERRLEN]);

#endif
