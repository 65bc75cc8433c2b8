/*
 * scenario_info.c - sim_scenario_inspect: what `fusebox list` and `check`
 * show of a scenario file, loaded and validated but not served.
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
  /* The rate limiter's table is validated where it is read. */
  sim_ratelimit *rl = NULL;
  char rerr[SIM_ERRLEN] = "";
  if (sim__ratelimit_new(sim__scenario_ratelimit_json(sc), 1, &rl, rerr) != SIM_OK) {
    snprintf(err, SIM_ERRLEN, "%.120s: %.120s", path, rerr);
    sim__scenario_free(sc);
    return SIM_ELOAD;
  }
  sim__ratelimit_free(rl);

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
