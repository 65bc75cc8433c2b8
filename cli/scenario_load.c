/*
 * scenario_load.c - the one way the fusebox program loads a scenario: once,
 * with every table validated and every error placed at its line. check,
 * run, serve and exec all load through here, so they accept the same files.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/run.h"
#include "reports/reports.h"

/* Checks the tables sim does not read (client, expect) of a loaded
   scenario; frees it on failure. */
static int validate(sim_scenario *sc, sim_scenario **out, char err[SIM_ERRLEN]) {
  /* sim checked what it reads; the client and expect tables are read by the
     built-in client and by reports, which say which key is wrong. */
  _Static_assert(RUN_ERRLEN == RPT_ERRLEN, "one message buffer for both validators");
  char msg[RUN_ERRLEN];
  if (run_client_validate(sc, msg) != 0 ||
      rpt_expect_check(sim_scenario_expect_json(sc), sim_scenario_client_json(sc), msg) != RPT_OK) {
    sim_scenario_error(sc, msg, err);
    sim_scenario_free(sc);
    return SIM_ELOAD;
  }
  *out = sc;
  return SIM_OK;
}

/* Validates a scenario sim_scenario_load gave (taken); see cli.h. */
int cli_scenario_validate(sim_scenario *sc, sim_scenario **out, char err[SIM_ERRLEN]) {
  *out = NULL;
  return validate(sc, out, err);
}

/* Loads and validates the whole scenario; see cli.h. */
int cli_scenario_load(const char *path, uint64_t seed, sim_scenario **out,
                      char err[SIM_ERRLEN]) {
  *out = NULL;
  sim_scenario *sc = NULL;
  int rc = sim_scenario_load(path, seed, &sc, err);
  if (rc != SIM_OK) return rc;
  return validate(sc, out, err);
}

/* As cli_scenario_load, from text in memory; see cli.h. */
int cli_scenario_load_text(const char *name, const char *text, size_t len, uint64_t seed,
                           sim_scenario **out, char err[SIM_ERRLEN]) {
  *out = NULL;
  sim_scenario *sc = NULL;
  int rc = sim_scenario_load_text(name, text, len, seed, &sc, err);
  if (rc != SIM_OK) return rc;
  return validate(sc, out, err);
}
