/*
 * record_int.h - the recorder's parts that need no sockets (record_note.c),
 * shared by record.c, its tests and fuzz/fuzz_record.c.
 */
#ifndef FUSEBOX_IMPORT_RECORD_INT_H
#define FUSEBOX_IMPORT_RECORD_INT_H

#include <stddef.h>

/* One exchange as the recorder saw it. */
typedef struct imp_rec_exchange {
  const char *method;
  const char *path;      /* the request's origin-form path, without its query */
  const char *query;     /* "?a=b&c" as forwarded, or NULL */
  const char *idem;      /* the Idempotency-Key sent, or NULL */
  const char *body;      /* the request body (for the logical key) */
  size_t body_len;
  double t_ms;           /* start, ms since the recorder started */
  double latency_ms;     /* until the response head; < 0 unknown */
  double duration_ms;    /* until the end */
  long status;           /* the upstream's status; meaningful when headers_done */
  int headers_done;      /* a response head was received */
  int stream;            /* the response is text/event-stream */
  char *const *hname;    /* response headers */
  char *const *hvalue;
  int nh;
  const char *kept;      /* the first bytes of the response body, or NULL */
  size_t received;       /* response body bytes received */
  const char *error;     /* "closed", "reset", "timeout", "truncated", or NULL */
} imp_rec_exchange;

/*
 * Checks a request target and builds the upstream URL: base (scheme, host,
 * port and path prefix, fixed at start, no trailing '/') + target + query.
 * Only origin-form targets are accepted: '/' followed by a path of visible
 * ASCII without '\\'. Returns SIM_OK with *url (the caller frees it), or
 * SIM_EINVAL for any other target (absolute-form, "*", "@host:port/...",
 * ".evil.example/..."), SIM_ENOMEM.
 */
int imp__record_target(const char *base, const char *target, const char *query, char **url);

/*
 * One JSON Lines attempt (docs/import.md) for an exchange, without the
 * newline: its logical key (sim_request_key), status, latency, response
 * headers, body and error, everything through the redaction rule (and
 * the account ids imp__scrub replaces in header values and the body). A status
 * outside 200-599 is kept as "upstream_status" and the attempt noted as a
 * closed connection, the nearest thing a scenario can replay. The caller
 * frees the result; NULL when out of memory.
 */
char *imp__record_note(const imp_rec_exchange *e);

#endif
