/*
 * import.h - the importer and the recorder (import/): `fusebox import`
 * turns an incident log, a HAR file or a fusebox trace into a scenario that
 * replays it, and `fusebox record` is a recording proxy whose log the
 * importer reads (docs/import.md). Uses sim only through sim/sim.h: its
 * return codes (SIM_OK, SIM_EINVAL, ...; sim_strerror) and SIM_ERRLEN, and
 * its shared rules (the request key, provider names, HTTP dates, the
 * redaction rule, the monotonic clock, the TCP reset).
 */
#ifndef FUSEBOX_IMPORT_IMPORT_H
#define FUSEBOX_IMPORT_IMPORT_H

#include <stddef.h>

#include "sim/sim.h"

/* --------------------------------------------------------------- import */
/* `fusebox import`: an incident log, a HAR file or a fusebox trace turned
   into a scenario that replays it (docs/import.md). */

#define IMP_MAX_INPUT ((size_t)64 << 20) /* bytes of one input */
#define IMP_MAX_LINE ((size_t)1 << 20)   /* bytes of one input line */
#define IMP_MAX_OUTPUT ((size_t)1 << 20) /* the scenario file limit */

typedef enum imp_format {
  IMP_AUTO = 0, /* detect from the content */
  IMP_JSONL,    /* JSON Lines, one attempt per line */
  IMP_HAR,      /* an HTTP Archive (browser or proxy export) */
  IMP_TRACE     /* a trace written by fusebox */
} imp_format;

typedef struct imp_opts {
  imp_format format;        /* IMP_AUTO = detect */
  const char *source;       /* name in messages and the doc; NULL = the path */
  const char *name;         /* scenario name; NULL = "Imported from <source>" */
  const char *date;         /* date in the doc; NULL = today (UTC) */
  int raw_dates;            /* 1: keep every HTTP-date Retry-After as sent; 0: a date
                               up to a day ahead replays as that many seconds ahead */
  const char *map;          /* JSON Lines field names: "ours=theirs,..." (e.g.
                               "status=status_code,t=timestamp"); NULL = none */
  int request;              /* the recorded request a client's first logical request
                               replays (1-based, per provider); 0 = 1 */
} imp_opts;

typedef struct imp_stats {
  imp_format format;        /* the format that was read */
  int attempts;             /* attempts replayed */
  int requests;             /* logical requests (all providers and effects) */
  int providers;            /* providers in the scenario */
  int skipped;              /* entries left out (other endpoints, lookups) */
  char unknown[256];        /* JSON Lines fields nobody reads, comma-separated ("" = none) */
  int drops_only;           /* 1: every attempt came out as a dropped connection */
  int expects;              /* verdicts written into the expect table */
} imp_stats;

/*
 * Turns the log at path into the text of a scenario file that replays it:
 * per provider and logical request, the recorded steps in order. On
 * success returns SIM_OK and *out_lua, which the caller owns and frees;
 * fills *stats when not NULL. On bad input returns SIM_EINVAL with
 * "file:line: message" in err; SIM_EIO when the file cannot be read;
 * SIM_ENOMEM. opts may be NULL.
 */
int imp_file(const char *path, const imp_opts *opts, char **out_lua, imp_stats *stats,
             char err[SIM_ERRLEN]);
/* As imp_file, from len bytes of text in memory (opts->source names it in
   messages; NULL = "input"). */
int imp_buffer(const char *text, size_t len, const imp_opts *opts, char **out_lua,
               imp_stats *stats, char err[SIM_ERRLEN]);
/* The format's name ("json-lines", "har", "trace"). Static. */
const char *imp_format_name(imp_format f);

/* --------------------------------------------------------------- record */
/* `fusebox record`: a recording proxy in front of a real provider
   (import/record.c). Each request with an origin-form target ('/' + path) is
   forwarded to the upstream fixed at start, its answer passed back as it
   arrives, and the exchange noted (redacted) for the importer. */

#define IMP_RECORD_MAX_CONNECTIONS 64 /* default connections at once */
#define IMP_RECORD_IDLE_TIMEOUT 30    /* default seconds a client may idle */

typedef struct imp_recorder imp_recorder;

typedef struct imp_record_opts {
  const char *upstream; /* http:// or https:// URL, no query (required) */
  const char *bind;     /* NULL = 127.0.0.1 */
  int port;             /* 0 = pick a free port */
  int max_connections;  /* 0 = IMP_RECORD_MAX_CONNECTIONS; more are refused */
  int idle_timeout_s;   /* 0 = IMP_RECORD_IDLE_TIMEOUT; an idle client is closed */
} imp_record_opts;

/*
 * Checks the upstream URL and starts listening. The caller owns *out and
 * releases it with imp_record_free. Returns SIM_EINVAL for a bad upstream
 * or bind address, SIM_ELISTEN when the port cannot be bound, SIM_ENOMEM;
 * the reason is in err.
 */
int imp_record_start(const imp_record_opts *opts, imp_recorder **out, char err[SIM_ERRLEN]);
/* The port the recorder listens on. */
int imp_record_port(const imp_recorder *rec);
/* The upstream as it is used (scheme://host[:port][/prefix]). Borrowed. */
const char *imp_record_upstream(const imp_recorder *rec);
/*
 * Stops accepting and ends the exchanges in flight, noting each as what
 * the client saw so far. Safe to call twice. After it, the log and the
 * counters below are final.
 */
void imp_record_stop(imp_recorder *rec);
/* The JSON Lines log of the exchanges (docs/import.md), credentials
   redacted; *len gets its length. Borrowed; call after imp_record_stop. */
const char *imp_record_log(const imp_recorder *rec, size_t *len);
/* Exchanges noted; requests that could not reach the upstream (answered
   502, not noted); requests refused with 400 (not origin-form, never
   forwarded); 1 if the log reached IMP_MAX_INPUT. */
long imp_record_exchanges(const imp_recorder *rec);
long imp_record_unreachable(const imp_recorder *rec);
long imp_record_refused(const imp_recorder *rec);
int imp_record_full(const imp_recorder *rec);
/*
 * The scenario that replays the log (imp_buffer over it, with
 * "recorded exchanges" naming it in messages). Same returns as
 * imp_buffer; the caller owns *out_lua.
 */
int imp_record_scenario(const imp_recorder *rec, const imp_opts *opts, char **out_lua,
                        imp_stats *stats, char err[SIM_ERRLEN]);
/* Stops (if needed) and releases everything. NULL is a no-op. */
void imp_record_free(imp_recorder *rec);

#endif
