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

static int has_tag(const sim_scenario_info *info, char **tags) {
  for (int i = 0; tags[i]; i++)
    for (int k = 0; k < info->ntags; k++)
      if (strcmp(info->tags[k], tags[i]) == 0) return 1;
  return 0;
}

/* Keeps the files --tags and --skip-tags select; see cli.h. */
int cli_select_tags(const char *cmd, path_list *files, const char *tags, const char *skip_tags) {
  char wbuf[1024], sbuf[1024], *want[MAX_TAGS + 1], *skip[MAX_TAGS + 1];
  split_list(tags, wbuf, sizeof wbuf, want, MAX_TAGS + 1);
  split_list(skip_tags, sbuf, sizeof sbuf, skip, MAX_TAGS + 1);
  if (!want[0] && !skip[0]) return 0;
  size_t k = 0;
  int rc = 0;
  for (size_t i = 0; i < files->n; i++) {
    sim_scenario_info info = {0};
    char err[SIM_ERRLEN];
    int keep = 1;
    if (sim_scenario_inspect(files->v[i], &info, err) != SIM_OK) {
      fprintf(stderr, "fusebox %s: %s\n", cmd, err);
      rc = -1;
    } else {
      if (want[0] && !has_tag(&info, want)) keep = 0;
      if (skip[0] && has_tag(&info, skip)) keep = 0;
    }
    sim_scenario_info_clear(&info);
    if (keep) files->v[k++] = files->v[i];
    else free(files->v[i]);
  }
  files->n = k;
  return rc;
}
