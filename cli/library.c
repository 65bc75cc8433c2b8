/*
 * library.c - where the standard library (scenarios/, profiles/,
 * integrations/) is, found at run time with nothing compiled in, and how a
 * scenario name given on the command line becomes a file or folder in it.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

#define LIB_PATH 4096
#define MAX_CANDIDATES 4000

static cli_library lib;
static int lib_done;

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Takes home as the library when home/scenarios is a folder: 1, else 0. */
static int take(const char *home, const char *how) {
  char s[LIB_PATH];
  if (snprintf(s, sizeof s, "%s/scenarios", home) >= (int)sizeof s || !is_dir(s)) return 0;
  char real[PATH_MAX];
  if (realpath(home, real) == NULL) return 0;
  if (snprintf(lib.scenarios, sizeof lib.scenarios, "%s/scenarios", real) >=
      (int)sizeof lib.scenarios) {
    lib.scenarios[0] = '\0';
    return 0;
  }
  snprintf(lib.home, sizeof lib.home, "%s", real);
  snprintf(lib.how, sizeof lib.how, "%s", how);
  return 1;
}

/* The folder of the running binary (from /proc/self/exe), or "" when the
   kernel does not say. */
static void exe_dir(char out[LIB_PATH]) {
  out[0] = '\0';
  char exe[LIB_PATH];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL) return;
  *slash = '\0';
  snprintf(out, LIB_PATH, "%s", exe[0] ? exe : "/");
}

/* The source tree a build tree's marker names (BINDIR/fusebox-home, one
   line written by CMake), or 0 when there is no marker. */
static int build_marker(const char *bindir, char out[LIB_PATH]) {
  char m[LIB_PATH];
  if (snprintf(m, sizeof m, "%s/fusebox-home", bindir) >= (int)sizeof m) return 0;
  FILE *f = fopen(m, "r");
  if (f == NULL) return 0;
  int got = fgets(out, LIB_PATH, f) != NULL;
  fclose(f);
  if (!got) return 0;
  out[strcspn(out, "\r\n")] = '\0';
  return out[0] != '\0';
}

/* Finds the library once; see cli.h. */
const cli_library *cli_library_find(void) {
  if (lib_done) return &lib;
  lib_done = 1;
  char bindir[LIB_PATH], p[LIB_PATH + 32];
  exe_dir(bindir);
  int found = 0;
  if (bindir[0]) {
    snprintf(p, sizeof p, "%s/../share/fusebox", bindir);
    found = take(p, "next to the binary");
  }
  const char *home = getenv("FUSEBOX_HOME");
  if (!found && home && home[0]) found = take(home, "from $FUSEBOX_HOME");
  char src[LIB_PATH];
  if (!found && bindir[0] && build_marker(bindir, src)) found = take(src, "the build tree's source");
  if (!found) found = take(".", "./scenarios in the working folder");
  const char *env = getenv("FUSEBOX_SCENARIOS");
  if (env && env[0]) {
    snprintf(lib.scenarios, sizeof lib.scenarios, "%s", env);
    snprintf(lib.how, sizeof lib.how, "%s", "from $FUSEBOX_SCENARIOS");
  }
  return &lib;
}

/* The standard scenario folder, or NULL when none was found: "scenarios"
   when it is the working folder's own (so that reports run in a checkout
   name "scenarios/x/y.lua", as they always have), else absolute. */
const char *cli_scenario_dir(void) {
  static char shown[sizeof lib.scenarios];
  const cli_library *l = cli_library_find();
  if (l->scenarios[0] == '\0') return NULL;
  if (shown[0] == '\0') {
    char here[PATH_MAX];
    int same = realpath("scenarios", here) != NULL && strcmp(here, l->scenarios) == 0;
    strcpy(shown, same ? "scenarios" : l->scenarios); /* both fit: same size */
  }
  return shown;
}

/* Writes "library: DIR (HOW)" (or that none was found) into out. */
void cli_library_describe(char *out, size_t n) {
  const cli_library *l = cli_library_find();
  if (l->scenarios[0] == '\0')
    snprintf(out, n, "library: none found (looked next to the binary in ../share/fusebox, "
                     "in $FUSEBOX_HOME, in the build tree and in ./scenarios)");
  else if (strcmp(l->how, "from $FUSEBOX_SCENARIOS") == 0 || l->home[0] == '\0')
    snprintf(out, n, "library: %s (%s)", l->scenarios, l->how);
  else
    snprintf(out, n, "library: %s (%s)", l->home, l->how);
}

static int is_lua(const char *p) {
  size_t n = strlen(p);
  return n > 4 && strcmp(p + n - 4, ".lua") == 0;
}

/* Tries base/name and base/name.lua; 1 with the path in out when one is a
   folder or a .lua file. */
static int try_under(const char *base, const char *name, char *out, size_t n) {
  char p[LIB_PATH];
  struct stat st;
  if (snprintf(p, sizeof p, "%s/%s", base, name) < (int)sizeof p && stat(p, &st) == 0 &&
      (S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && is_lua(p)))) {
    snprintf(out, n, "%s", p);
    return 1;
  }
  if (!is_lua(name) && snprintf(p, sizeof p, "%s/%s.lua", base, name) < (int)sizeof p &&
      stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
    snprintf(out, n, "%s", p);
    return 1;
  }
  return 0;
}

/* Levenshtein distance of a and b (each clipped to 127 characters). */
static int distance(const char *a, const char *b) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la > 127) la = 127;
  if (lb > 127) lb = 127;
  int row[128];
  for (int j = 0; j <= lb; j++) row[j] = j;
  for (int i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = i;
    for (int j = 1; j <= lb; j++) {
      int up = row[j];
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int v = diag + cost;
      if (row[j] + 1 < v) v = row[j] + 1;
      if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
      row[j] = v;
      diag = up;
    }
  }
  return row[lb];
}

typedef struct guess {
  char best[LIB_PATH];
  int score;
  int seen;
} guess;

/* Scores one library name (a folder "ratelimit" or a file
   "ratelimit/retry_after_seconds", no .lua) against what was asked. */
static void consider(guess *g, const char *asked, const char *name) {
  if (g->seen++ > MAX_CANDIDATES) return;
  int d = distance(asked, name);
  const char *slash = strrchr(name, '/');
  /* The file's own name given without its folder is a near miss too. */
  if (slash && strcmp(asked, slash + 1) == 0) d = 1;
  if (d < g->score) {
    g->score = d;
    snprintf(g->best, sizeof g->best, "%s", name);
  }
}

static void scan(guess *g, const char *root, const char *rel, const char *asked, int depth) {
  if (depth > 8) return;
  char dir[LIB_PATH];
  if (snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel) >= (int)sizeof dir) return;
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char sub[LIB_PATH], full[LIB_PATH * 2];
    if (snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >= (int)sizeof sub)
      continue;
    if (snprintf(full, sizeof full, "%s/%s", root, sub) >= (int)sizeof full) continue;
    struct stat st;
    if (stat(full, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      consider(g, asked, sub);
      scan(g, root, sub, asked, depth + 1);
    } else if (is_lua(sub)) {
      sub[strlen(sub) - 4] = '\0';
      consider(g, asked, sub);
    }
  }
  closedir(d);
}

/* Resolves one command-line scenario argument; see cli.h. */
int cli_resolve_scenario(const char *arg, char *out, size_t n) {
  struct stat st;
  if (stat(arg, &st) == 0) {
    snprintf(out, n, "%s", arg);
    return 0;
  }
  const cli_library *l = cli_library_find();
  int plain = arg[0] != '\0' && arg[0] != '/' && strstr(arg, "..") == NULL;
  if (plain && l->scenarios[0] && try_under(cli_scenario_dir(), arg, out, n)) return 0;
  /* "scenarios/x.lua" or "profiles/y.lua": a path below the library's home. */
  if (plain && l->home[0] && try_under(l->home, arg, out, n)) return 0;
  const char *where = l->scenarios[0] == '\0'                ? "none found"
                      : strcmp(l->how, "from $FUSEBOX_SCENARIOS") == 0 ? l->scenarios
                                                                      : l->home;
  fprintf(stderr, "fusebox: no scenario or file named %s (library: %s)\n", arg, where);
  if (plain && l->scenarios[0]) {
    char asked[LIB_PATH];
    snprintf(asked, sizeof asked, "%s", arg);
    if (is_lua(asked)) asked[strlen(asked) - 4] = '\0';
    guess g = {.score = 1 << 30};
    scan(&g, l->scenarios, "", asked, 0);
    int len = (int)strlen(asked);
    int limit = len < 6 ? 1 : len < 12 ? 2 : 3;
    if (g.best[0] && g.score <= limit) fprintf(stderr, "fusebox: did you mean %s?\n", g.best);
  }
  if (l->scenarios[0])
    fprintf(stderr, "fusebox: 'fusebox list' shows the library's scenarios\n");
  return -1;
}

/* The library name of path ("ratelimit/retry_after_seconds") into buf, or
   NULL when path is not a .lua file under the library's scenario folder. */
const char *cli_library_name(const char *path, char *buf, size_t n) {
  const char *dir = cli_scenario_dir();
  if (dir == NULL || !is_lua(path)) return NULL;
  size_t dl = strlen(dir);
  if (strncmp(path, dir, dl) != 0 || path[dl] != '/') {
    dir = cli_library_find()->scenarios;
    dl = strlen(dir);
    if (strncmp(path, dir, dl) != 0 || path[dl] != '/') return NULL;
  }
  const char *rel = path + dl + 1;
  size_t rl = strlen(rel) - 4;
  if (rl == 0 || rl >= n) return NULL;
  memcpy(buf, rel, rl);
  buf[rl] = '\0';
  return buf;
}
