/* test_lua_examples.c - every scenario file in the repository loads, and
   each of its providers answers the first attempts. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_lua_util.h"

/* The source tree: $FUSEBOX_SRC (set by ctest), else from this file's path. */
static void source_dir(char *out, size_t cap) {
  const char *env = getenv("FUSEBOX_SRC");
  if (env != NULL && *env != '\0') {
    snprintf(out, cap, "%s", env);
    return;
  }
  snprintf(out, cap, "%s", __FILE__);
  char *p = strstr(out, "/tests/unit_sim/");
  if (p != NULL) *p = '\0';
}

typedef struct walk {
  int files;
  int failed;
} walk;

static void check_file(const char *path, walk *w) {
  w->files++;
  sim_scenario *sc = NULL;
  char err[SIM_ERRLEN];
  int rc = sim__scenario_load(path, 1, &sc, err);
  if (rc != 0) {
    fprintf(stderr, "\n  %s\n", err);
    w->failed++;
    return;
  }
  const char *doc = sim__scenario_doc(sc);
  if (doc == NULL || strlen(doc) < 20) {
    fprintf(stderr, "\n  %s: needs a doc a newcomer understands\n", path);
    w->failed++;
  }
  /* Ask every provider (and the effects) about the first attempts. */
  for (int p = -1; p < sim__scenario_nproviders(sc); p++) {
    if (p == -1 && !sim__scenario_has_effects(sc)) continue;
    for (int attempt = 1; attempt <= 4; attempt++) {
      sim_req r = tl_req(attempt);
      if (p == -1) {
        r.dialect = SIM_DIALECT_EFFECT;
        r.path = "/v1/effects/send_email";
      }
      sim_step *st = NULL;
      if (sim__scenario_decide(sc, p, &r, &st, err) != 0) {
        fprintf(stderr, "\n  %s (provider %d, attempt %d)\n", err, p, attempt);
        w->failed++;
      }
      sim__step_free(st);
    }
  }
  sim__scenario_free(sc);
}

static void walk_dir(const char *dir, walk *w, int depth) {
  DIR *d = opendir(dir);
  if (d == NULL || depth > 8) {
    if (d != NULL) closedir(d);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    size_t n = strlen(e->d_name);
    if (S_ISDIR(st.st_mode))
      walk_dir(path, w, depth + 1);
    else if (n > 4 && strcmp(e->d_name + n - 4, ".lua") == 0)
      check_file(path, w);
  }
  closedir(d);
}

static void test_all_scenarios_load(void) {
  char src[4096], dir[4200];
  source_dir(src, sizeof src);
  snprintf(dir, sizeof dir, "%s/scenarios", src);
  walk w = {0, 0};
  walk_dir(dir, &w, 0);
  CU_ASSERT_EQUAL(w.failed, 0);
  if (w.files < 21) fprintf(stderr, "\n  only %d scenario files under %s\n", w.files, dir);
  CU_ASSERT(w.files >= 21);
}

int suite_lua_examples(void) {
  CU_pSuite s = CU_add_suite("lua_examples", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "all_scenarios_load", test_all_scenarios_load))
    return CU_get_error();
  return 0;
}
