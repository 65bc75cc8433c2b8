/*
 * select.c - which scenarios a command plays: --tags and --skip-tags, by the
 * tags each scenario declares (exec and matrix alike).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define MAX_TAGS 32 /* tags in one --tags or --skip-tags list */

/* Splits a copy of "a,b" into the NULL-terminated list out (pointers into
   buf); empty items are dropped. Returns how many. */
static int split_list(const char *s, char *buf, size_t cap, char **out, int max) {
  int n = 0;
  snprintf(buf, cap, "%s", s ? s : "");
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < max - 1;
       tok = strtok_r(NULL, ",", &save))
    out[n++] = tok;
  out[n] = NULL;
  return n;
}

static int has_tag(const sim_scenario *sc, char **tags) {
  for (int i = 0; tags[i]; i++)
    for (int k = 0; k < sim_scenario_ntags(sc); k++)
      if (strcmp(sim_scenario_tag(sc, k), tags[i]) == 0) return 1;
  return 0;
}

/* Keeps the files --tags and --skip-tags select; see cli.h. */
int cli_select_tags(const char *cmd, path_list *files, const char *tags, const char *skip_tags) {
  return cli_select_tags_kept(cmd, files, tags, skip_tags, 0, NULL);
}

/* As cli_select_tags, keeping each kept file's load; see cli.h. */
int cli_select_tags_kept(const char *cmd, path_list *files, const char *tags,
                         const char *skip_tags, uint64_t seed, sim_scenario ***kept) {
  char wbuf[1024], sbuf[1024], *want[MAX_TAGS + 1], *skip[MAX_TAGS + 1];
  if (kept) *kept = NULL;
  split_list(tags, wbuf, sizeof wbuf, want, MAX_TAGS + 1);
  split_list(skip_tags, sbuf, sizeof sbuf, skip, MAX_TAGS + 1);
  if (!want[0] && !skip[0]) return 0;
  sim_scenario **sv = kept ? calloc(files->n ? files->n : 1, sizeof *sv) : NULL;
  if (kept && sv == NULL) {
    fprintf(stderr, "fusebox %s: out of memory\n", cmd);
    return -1;
  }
  size_t k = 0;
  int rc = 0;
  for (size_t i = 0; i < files->n; i++) {
    sim_scenario *sc = NULL;
    char err[SIM_ERRLEN];
    int keep = 1;
    if (sim_scenario_load(files->v[i], seed, &sc, err) != SIM_OK) {
      fprintf(stderr, "fusebox %s: %s\n", cmd, err);
      rc = -1;
    } else {
      if (want[0] && !has_tag(sc, want)) keep = 0;
      if (skip[0] && has_tag(sc, skip)) keep = 0;
    }
    if (keep && sv) sv[k] = sc;
    else sim_scenario_free(sc);
    if (keep) files->v[k++] = files->v[i];
    else free(files->v[i]);
  }
  files->n = k;
  if (kept) *kept = sv;
  return rc;
}
