/*
 * scenario_info.c - the public face of a loaded scenario (sim_scenario_*),
 * and sim_scenario_inspect: what `fusebox list` shows of a scenario file,
 * loaded and validated but not served.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

static int dup_opt(const char *s, char **out) {
  *out = NULL;
  if (s == NULL) return 0;
  *out = strdup(s);
  return *out == NULL ? SIM_ENOMEM : 0;
}

/* Loads and validates a scenario file; see sim.h. */
int sim_scenario_load(const char *path, uint64_t seed, sim_scenario **out,
                      char err[SIM_ERRLEN]) {
  return sim__scenario_load(path, seed, out, err);
}

/* Loads and validates scenario text held in memory; see sim.h. */
int sim_scenario_load_text(const char *name, const char *text, size_t len, uint64_t seed,
                           sim_scenario **out, char err[SIM_ERRLEN]) {
  return sim__scenario_load_text(name, text, len, seed, out, err);
}

/* Releases a scenario; NULL is a no-op. */
void sim_scenario_free(sim_scenario *sc) { sim__scenario_free(sc); }

const char *sim_scenario_path(const sim_scenario *sc) { return sim__scenario_path(sc); }
/* The scenario's tags; see sim.h. */
int sim_scenario_ntags(const sim_scenario *sc) { return sim__scenario_ntags(sc); }
const char *sim_scenario_tag(const sim_scenario *sc, int i) { return sim__scenario_tag(sc, i); }
const char *sim_scenario_name(const sim_scenario *sc) { return sim__scenario_name(sc); }

const char *sim_scenario_client_json(const sim_scenario *sc) {
  return sim__scenario_client_json(sc);
}

const char *sim_scenario_expect_json(const sim_scenario *sc) {
  return sim__scenario_expect_json(sc);
}

int sim_scenario_nproviders(const sim_scenario *sc) { return sim__scenario_nproviders(sc); }

const char *sim_scenario_provider_name(const sim_scenario *sc, int i) {
  return sim__scenario_provider_name(sc, i);
}

/* "file:line: msg" for a message about a key of the scenario; see sim.h. */
void sim_scenario_error(const sim_scenario *sc, const char *msg, char err[SIM_ERRLEN]) {
  sim__scenario_error(sc, msg, err);
}

/*
 * Loads and validates the file, then copies its name, doc, tags, client and
 * expect tables into *info (zeroed first). Returns 0, or SIM_EIO / SIM_ELOAD
 * / SIM_ENOMEM with "file:line: message" in err. The caller releases *info
 * with sim_scenario_info_clear.
 */
int sim_scenario_inspect(const char *path, sim_scenario_info *info,
                         char err[SIM_ERRLEN]) {
  if (info == NULL || path == NULL) {
    if (err != NULL) strcpy(err, "bad argument");
    return SIM_EINVAL;
  }
  memset(info, 0, sizeof *info);
  sim_scenario *sc = NULL;
  int rc = sim__scenario_load(path, 0, &sc, err);
  if (rc != 0) return rc;

  int n = sim__scenario_ntags(sc);
  if ((rc = dup_opt(path, &info->path)) != 0 ||
      (rc = dup_opt(sim__scenario_name(sc), &info->name)) != 0 ||
      (rc = dup_opt(sim__scenario_doc(sc), &info->doc)) != 0 ||
      (rc = dup_opt(sim__scenario_client_json(sc), &info->client_json)) != 0 ||
      (rc = dup_opt(sim__scenario_expect_json(sc), &info->expect_json)) != 0)
    goto fail;
  if (n > 0) {
    info->tags = calloc((size_t)n, sizeof *info->tags);
    if (info->tags == NULL) {
      rc = SIM_ENOMEM;
      goto fail;
    }
    for (; info->ntags < n; info->ntags++) {
      rc = dup_opt(sim__scenario_tag(sc, info->ntags), &info->tags[info->ntags]);
      if (rc != 0) goto fail;
    }
  }
  sim__scenario_free(sc);
  return 0;

fail:
  snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
  sim__scenario_free(sc);
  sim_scenario_info_clear(info);
  return rc;
}

/* Releases what sim_scenario_inspect filled in and zeroes *info. */
void sim_scenario_info_clear(sim_scenario_info *info) {
  if (info == NULL) return;
  free(info->path);
  free(info->name);
  free(info->doc);
  for (int i = 0; i < info->ntags; i++) free(info->tags[i]);
  free(info->tags);
  free(info->client_json);
  free(info->expect_json);
  memset(info, 0, sizeof *info);
}
