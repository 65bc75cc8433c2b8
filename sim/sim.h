/*
 * sim.h - the fake provider: scenario sessions served over HTTP.
 *
 * A session loads one scenario file, listens on one loopback port and
 * answers OpenAI chat completions, Anthropic messages and the effect
 * endpoints as the scenario says, writing every attempt to a trace.
 */
#ifndef FUSEBOX_SIM_H
#define FUSEBOX_SIM_H

#include <stdint.h>
#include <stdio.h>

#define SIM_ERRLEN 256

/* Error codes returned by sim_ functions (0 is success). */
enum {
  SIM_OK = 0,
  SIM_ENOMEM = -1,   /* out of memory */
  SIM_EIO = -2,      /* a file could not be read or written */
  SIM_ELOAD = -3,    /* a scenario did not load or validate */
  SIM_ELUA = -4,     /* a scenario failed while deciding a step */
  SIM_ELISTEN = -5,  /* the server could not bind or start */
  SIM_EINVAL = -6    /* a bad argument */
};

/* A static description of an error code. */
const char *sim_strerror(int code);

/* One-time process set-up (raises the open-file limit). Call before serving. */
int sim_global_init(void);

/* ------------------------------------------------------------ scenarios */

/* What `fusebox list` and `check` show of a scenario. */
typedef struct sim_scenario_info {
  char *path;
  char *name;
  char *doc;
  char **tags;
  int ntags;
  char *client_json; /* the `client` table as JSON, NULL if absent */
  char *expect_json; /* the `expect` table as JSON, NULL if absent */
} sim_scenario_info;

/*
 * Loads and validates a scenario file without serving it. On success fills
 * *info (which the caller releases with sim_scenario_info_clear); on failure
 * returns SIM_ELOAD or SIM_EIO with "file:line: message" in err.
 */
int sim_scenario_inspect(const char *path, sim_scenario_info *info,
                         char err[SIM_ERRLEN]);
/* Releases what sim_scenario_inspect filled in; safe on a zeroed struct. */
void sim_scenario_info_clear(sim_scenario_info *info);

/*
 * Loads a client profile (a Lua file returning profile { ... }: what a client
 * promises about attempts, backoff, retried statuses, Retry-After) in the
 * sandbox. Returns 0 with the profile as JSON text in *json, which the
 * caller frees; else a negative code with "file:line: message" in err.
 */
int sim_profile_load(const char *path, char **json, char err[SIM_ERRLEN]);

/* --------------------------------------------------------------- server */

typedef struct sim_server sim_server;

typedef struct sim_server_opts {
  const char *scenario_path; /* required */
  const char *bind;          /* NULL = 127.0.0.1 */
  int port;                  /* 0 = pick a free port */
  const char *trace_path;    /* NULL = no trace file */
  FILE *trace_stream;        /* or write the trace here (not closed) */
  double time_scale;         /* 0 = 1.0; 0.1 makes every delay 10x shorter */
  uint64_t seed;             /* math.random seed for the scenario */
  int max_connections;       /* 0 = 20000 */
} sim_server_opts;

/*
 * Loads the scenario, opens the trace and starts listening. The caller owns
 * *out and stops it with sim_server_free. On error returns a negative code
 * with the reason in err.
 */
int sim_server_start(const sim_server_opts *opts, sim_server **out,
                     char err[SIM_ERRLEN]);
/* The port the server listens on. */
int sim_server_port(const sim_server *srv);
/* Number of arrivals so far. */
long sim_server_arrivals(const sim_server *srv);
/* The scenario's providers, in declaration order (the first is also at /v1).
   The name is borrowed from the server. */
int sim_server_nproviders(const sim_server *srv);
const char *sim_server_provider_name(const sim_server *srv, int i);
/* Milliseconds since the session started (the trace's clock). */
double sim_server_elapsed_ms(const sim_server *srv);
/*
 * Writes one event of the caller's to the trace (e.g. a client's account of
 * a call): json must be one JSON object; its "t" is set to the trace clock.
 * Returns SIM_OK, or SIM_EINVAL when json is not an object.
 */
int sim_server_note(sim_server *srv, const char *json);
/*
 * Stops serving: ends hung and delayed connections, writes the last trace
 * lines, closes the trace and releases everything. NULL is a no-op.
 */
void sim_server_free(sim_server *srv);

/* --------------------------------------------------------------- import */
/* `fusebox import` and `fusebox record`: an incident log, a HAR file or a
   fusebox trace turned into a scenario that replays it (docs/import.md). */

#define SIM_IMPORT_MAX_INPUT ((size_t)64 << 20) /* bytes of one input */
#define SIM_IMPORT_MAX_LINE ((size_t)1 << 20)   /* bytes of one input line */
#define SIM_IMPORT_MAX_OUTPUT ((size_t)1 << 20) /* the scenario file limit */

typedef enum sim_import_format {
  SIM_IMPORT_AUTO = 0, /* detect from the content */
  SIM_IMPORT_JSONL,    /* JSON Lines, one attempt per line */
  SIM_IMPORT_HAR,      /* an HTTP Archive (browser or proxy export) */
  SIM_IMPORT_TRACE     /* a trace written by fusebox */
} sim_import_format;

typedef struct sim_import_opts {
  sim_import_format format; /* SIM_IMPORT_AUTO = detect */
  const char *source;       /* name in messages and the doc; NULL = the path */
  const char *name;         /* scenario name; NULL = "Imported from <source>" */
  const char *date;         /* date in the doc; NULL = today (UTC) */
  int raw_dates;            /* 1: keep every HTTP-date Retry-After as sent; 0: a date
                               up to a day ahead replays as that many seconds ahead */
  const char *map;          /* JSON Lines field names: "ours=theirs,..." (e.g.
                               "status=status_code,t=timestamp"); NULL = none */
  int request;              /* the recorded request a client's first logical request
                               replays (1-based, per provider); 0 = 1 */
} sim_import_opts;

typedef struct sim_import_stats {
  sim_import_format format; /* the format that was read */
  int attempts;             /* attempts replayed */
  int requests;             /* logical requests (all providers and effects) */
  int providers;            /* providers in the scenario */
  int skipped;              /* entries left out (other endpoints, lookups) */
  char unknown[256];        /* JSON Lines fields nobody reads, comma-separated ("" = none) */
  int drops_only;           /* 1: every attempt came out as a dropped connection */
  int expects;              /* verdicts written into the expect table */
} sim_import_stats;

/*
 * Turns the log at path into the text of a scenario file that replays it:
 * per provider and logical request, the recorded steps in order. On
 * success returns SIM_OK and *out_lua, which the caller owns and frees;
 * fills *stats when not NULL. On bad input returns SIM_EINVAL with
 * "file:line: message" in err; SIM_EIO when the file cannot be read;
 * SIM_ENOMEM. opts may be NULL.
 */
int sim_import_file(const char *path, const sim_import_opts *opts, char **out_lua,
                    sim_import_stats *stats, char err[SIM_ERRLEN]);
/* As sim_import_file, from len bytes of text in memory (opts->source
   names it in messages; NULL = "input"). */
int sim_import_buffer(const char *text, size_t len, const sim_import_opts *opts,
                      char **out_lua, sim_import_stats *stats, char err[SIM_ERRLEN]);
/* The format's name ("json-lines", "har", "trace"). Static. */
const char *sim_import_format_name(sim_import_format f);

#endif
