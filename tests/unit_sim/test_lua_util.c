/* test_lua_util.c - helpers for the Lua engine tests (no suite here). */
#include "test_lua_util.h"

#include <stdlib.h>
#include <unistd.h>

char *tl_write(const char *text) {
  if (text == NULL) return NULL;
  char tmpl[] = "/tmp/fusebox_lua_XXXXXX.lua";
  int fd = mkstemps(tmpl, 4);
  if (fd < 0) return NULL;
  size_t len = strlen(text), off = 0;
  while (off < len) {
    ssize_t n = write(fd, text + off, len - off);
    if (n <= 0) {
      close(fd);
      unlink(tmpl);
      return NULL;
    }
    off += (size_t)n;
  }
  close(fd);
  return strdup(tmpl);
}

void tl_remove(char *path) {
  if (path == NULL) return;
  unlink(path);
  free(path);
}

int tl_load(const char *text, sim_scenario **sc, char **path,
            char err[SIM_ERRLEN]) {
  *sc = NULL;
  *path = tl_write(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(*path);
  return sim__scenario_load(*path, 1, sc, err);
}

char *tl_provider_text(const char *provider) {
  const char *fmt = "return scenario {\n  name = \"t\",\n  provider = %s,\n}\n";
  if (provider == NULL) return NULL;
  size_t n = strlen(fmt) + strlen(provider) + 1;
  char *s = malloc(n);
  if (s != NULL) snprintf(s, n, fmt, provider);
  return s;
}

int tl_err_is(const char *err, const char *path, int line, const char *msg) {
  char want[SIM_ERRLEN * 2];
  if (err == NULL || path == NULL || msg == NULL) {
    fprintf(stderr, "\n  tl_err_is: %s is NULL\n", err == NULL ? "the error" : "path or msg");
    return 0;
  }
  if (line > 0)
    snprintf(want, sizeof want, "%s:%d: %s", path, line, msg);
  else
    snprintf(want, sizeof want, "%s: %s", path, msg);
  size_t wl = strlen(want);
  int ok;
  if (wl > 0 && want[wl - 1] == '*')
    ok = strncmp(err, want, wl - 1) == 0;
  else
    ok = strcmp(err, want) == 0;
  if (!ok) fprintf(stderr, "\n  got  \"%s\"\n  want \"%s\"\n", err, want);
  return ok;
}

int tl_load_fails(const char *text, int line, const char *msg) {
  sim_scenario *sc = NULL;
  char *path = NULL;
  char err[SIM_ERRLEN];
  int rc = tl_load(text, &sc, &path, err);
  int ok = rc != 0 && sc == NULL;
  if (!ok) fprintf(stderr, "\n  loaded, but expected: %s\n", msg);
  if (ok) ok = tl_err_is(err, path, line, msg);
  sim__scenario_free(sc);
  tl_remove(path);
  return ok;
}

sim_req tl_req(int attempt) {
  static const char body[] =
      "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\","
      "\"content\":\"hi\"}]}";
  sim_req r;
  memset(&r, 0, sizeof r);
  r.attempt = attempt;
  r.n = attempt;
  r.method = "POST";
  r.path = "/v1/chat/completions";
  r.provider = "primary";
  r.dialect = SIM_DIALECT_OPENAI;
  r.body = body;
  r.body_len = sizeof body - 1;
  r.key = "hash:0123456789abcdef";
  return r;
}

sim_step *tl_decide_once(const char *text, int provider, int attempt,
                         char err[SIM_ERRLEN]) {
  sim_scenario *sc = NULL;
  char *path = NULL;
  sim_step *st = NULL;
  int rc = tl_load(text, &sc, &path, err);
  if (rc == 0) {
    sim_req r = tl_req(attempt);
    rc = sim__scenario_decide(sc, provider, &r, &st, err);
  }
  if (rc != 0) fprintf(stderr, "\n  %s\n", err);
  sim__scenario_free(sc);
  tl_remove(path);
  return st;
}
