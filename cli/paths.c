/*
 * paths.c - finding scenario files, and parsing numeric options.
 */
#define _GNU_SOURCE /* nftw */
#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"

#define MAX_SCENARIOS 10000

static int push(path_list *l, const char *p) {
  if (l->n >= MAX_SCENARIOS) {
    fprintf(stderr, "fusebox: more than %d scenario files\n", MAX_SCENARIOS);
    return -1;
  }
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 64;
    char **nv = realloc(l->v, nc * sizeof *nv);
    if (nv == NULL) return -1;
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n] = strdup(p);
  if (l->v[l->n] == NULL) return -1;
  l->n++;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk(const char *dir, path_list *out, int depth) {
  if (depth > 16) return 0;
  DIR *d = opendir(dir);
  if (d == NULL) {
    fprintf(stderr, "fusebox: %s: %s\n", dir, strerror(errno));
    return -1;
  }
  path_list here = {0};
  struct dirent *e;
  int rc = 0;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    size_t dl = strlen(dir);
    const char *sep = dl > 0 && dir[dl - 1] == '/' ? "" : "/";
    if (snprintf(path, sizeof path, "%s%s%s", dir, sep, e->d_name) >= (int)sizeof path) continue;
    rc = push(&here, path);
  }
  closedir(d);
  qsort(here.v, here.n, sizeof *here.v, cmp_str);
  for (size_t i = 0; rc == 0 && i < here.n; i++) {
    struct stat st;
    if (stat(here.v[i], &st) != 0) continue;
    size_t len = strlen(here.v[i]);
    if (S_ISDIR(st.st_mode)) rc = walk(here.v[i], out, depth + 1);
    else if (len > 4 && strcmp(here.v[i] + len - 4, ".lua") == 0) rc = push(out, here.v[i]);
  }
  path_list_clear(&here);
  return rc;
}

/* Expands files and folders into scenario files; see cli.h. */
int cli_collect_scenarios(char **paths, int npaths, path_list *out) {
  const char *def = cli_scenario_dir();
  char *defv[1] = {(char *)def};
  if (npaths == 0) {
    if (def == NULL) {
      char where[4200];
      cli_library_describe(where, sizeof where);
      fprintf(stderr, "fusebox: no scenarios given and no standard library: %s\n", where);
      return -1;
    }
    paths = defv;
    npaths = 1;
  }
  for (int i = 0; i < npaths; i++) {
    char path[4096];
    struct stat st;
    if (cli_resolve_scenario(paths[i], path, sizeof path) != 0) return -1;
    if (stat(path, &st) != 0) {
      fprintf(stderr, "fusebox: %s: %s\n", path, strerror(errno));
      return -1;
    }
    int rc = S_ISDIR(st.st_mode) ? walk(path, out, 0) : push(out, path);
    if (rc != 0) return -1;
  }
  if (out->n == 0) {
    fprintf(stderr, "fusebox: no scenario files (*.lua) found\n");
    return -1;
  }
  return 0;
}

void path_list_clear(path_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* Parses a number in [lo, hi]; -1 with a message on stderr otherwise. */
int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out) {
  char *end = NULL;
  errno = 0;
  double v = s ? strtod(s, &end) : NAN;
  if (s == NULL || end == s || *end != '\0' || errno != 0 || !isfinite(v) || v < lo || v > hi) {
    fprintf(stderr, "fusebox: %s needs a number from %g to %g, got '%s'\n", opt, lo, hi,
            s ? s : "");
    return -1;
  }
  *out = v;
  return 0;
}

/* Parses a whole number in [lo, hi]; -1 with a message on stderr otherwise. */
int cli_parse_int(const char *opt, const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = s ? strtol(s, &end, 10) : 0;
  if (s == NULL || end == s || *end != '\0' || errno != 0 || v < lo || v > hi) {
    fprintf(stderr, "fusebox: %s needs a whole number from %ld to %ld, got '%s'\n", opt, lo,
            hi, s ? s : "");
    return -1;
  }
  *out = v;
  return 0;
}

/* 1 when an expect table (JSON, may be NULL) states nothing to judge. */
int cli_nothing_to_judge(const char *expect_json) {
  cJSON *e = expect_json ? cJSON_Parse(expect_json) : NULL;
  int empty = !cJSON_IsObject(e) || e->child == NULL;
  cJSON_Delete(e);
  return empty;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Removes dir and everything under it (a temp dir of our own). */
int cli_remove_tree(const char *dir) {
  return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdir -p; see cli.h. */
int cli_make_dirs(const char *dir) {
  char p[4096];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof p) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(p, dir, n + 1);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
    *s = '/';
  }
  if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
  struct stat st;
  if (stat(p, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

/* The parent folders of output files; see cli.h. */
int cli_make_parents(const char *cmd, const char *a, const char *b, const char *c,
                     const char *d) {
  const char *files[4] = {a, b, c, d};
  for (int i = 0; i < 4; i++) {
    if (files[i] == NULL) continue;
    const char *slash = strrchr(files[i], '/');
    if (slash == NULL || slash == files[i]) continue;
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - files[i]), files[i]);
    if (cli_make_dirs(dir) != 0) {
      fprintf(stderr, "fusebox %s: cannot create %s (for %s): %s\n", cmd, dir, files[i],
              strerror(errno));
      return -1;
    }
  }
  return 0;
}
