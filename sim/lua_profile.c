/*
 * lua_profile.c - client profiles (files under profiles/): what a client promises
 * about its retries, loaded in the same sandbox as scenarios and handed on
 * as JSON for `fusebox exec --profile` to judge against.
 */
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/lua_int.h"

#define PROFILE_FILE_MAX (256 * 1024)

static const char *const PROFILE_KEYS[] = {
    "name", "version", "doc", "dialect", "example", "max_attempts", "backoff", "retries",
    "x_should_retry", "retry_after", "timeout", "timeout_covers", "deadline",
    "streams_retried", "idempotency_key", NULL};

static const char *const BACKOFF_KEYS[] = {"base", "factor", "cap", "jitter", "fraction",
                                           "schedule", NULL};
static const char *const RETRY_AFTER_KEYS[] = {"honoured", "forms", "cap", "over_cap", "invalid",
                                               "past", "negative", "decimal", "combine", NULL};
static const char *const RULE_KEYS[] = {"status", "except", "retry_after", NULL};

typedef struct chunk {
  const char *buf;
  size_t len;
  const char *name;
  const char *path;
} chunk;

/* The line of the first `key =` in the file text (1 when not found). */
static int key_line(const chunk *ck, const char *key) {
  size_t kl = strlen(key);
  int line = 1;
  for (size_t i = 0; i < ck->len; i++) {
    if (ck->buf[i] == '\n') {
      line++;
      continue;
    }
    if (i + kl > ck->len || memcmp(ck->buf + i, key, kl) != 0) continue;
    char before = i ? ck->buf[i - 1] : ' ';
    if (before == '_' || (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
        (before >= '0' && before <= '9'))
      continue;
    size_t j = i + kl;
    while (j < ck->len && (ck->buf[j] == ' ' || ck->buf[j] == '\t')) j++;
    if (j < ck->len && ck->buf[j] == '=' && (j + 1 >= ck->len || ck->buf[j + 1] != '=')) return line;
  }
  return 1;
}

/*
 * Checks the keys of the table at index idx against known; where is the
 * table's path ("" for the top). An unknown key is "file:line: unknown
 * profile key 'where.key'", the line being the key's own.
 */
static int check_keys(lua_State *L, int idx, const char *const *known, const char *where) {
  const chunk *ck = lua_touserdata(L, lua_upvalueindex(1));
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      return luaL_error(L, "%s: %s%skeys are names", ck->path, where, where[0] ? " " : "profile ");
    const char *k = lua_tostring(L, -1);
    int known_key = 0;
    for (int i = 0; known[i]; i++) known_key |= strcmp(k, known[i]) == 0;
    if (!known_key) {
      const char *s = sim__lua_suggest(k, known);
      lua_pushfstring(L, "%s:%d: unknown profile key '%s%s%s'%s%s%s", ck->path, key_line(ck, k),
                      where, where[0] ? "." : "", k, s ? " (did you mean '" : "", s ? s : "",
                      s ? "'?)" : "");
      return lua_error(L); /* the key's own line, not the profile{} call's */
    }
  }
  return 0;
}

/* profile{...}: checks every key, nested tables included, and returns the table. */
static int l_profile(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  check_keys(L, 1, PROFILE_KEYS, "");
  if (lua_getfield(L, 1, "backoff") == LUA_TTABLE) check_keys(L, lua_gettop(L), BACKOFF_KEYS, "backoff");
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "retry_after") == LUA_TTABLE)
    check_keys(L, lua_gettop(L), RETRY_AFTER_KEYS, "retry_after");
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "retries") == LUA_TTABLE) {
    int t = lua_gettop(L);
    lua_Integer n = luaL_len(L, t);
    for (lua_Integer i = 1; i <= n; i++) {
      if (lua_geti(L, t, i) == LUA_TTABLE) check_keys(L, lua_gettop(L), RULE_KEYS, "retries[]");
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  lua_getfield(L, 1, "max_attempts");
  if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1)
    return luaL_error(L, "profile.max_attempts must be a whole number >= 1");
  lua_pop(L, 1);
  lua_getfield(L, 1, "retries");
  if (!lua_istable(L, -1)) return luaL_error(L, "profile.retries must be a list");
  lua_pop(L, 1);
  lua_pushvalue(L, 1);
  return 1;
}

/* Compiles the file text (never binary) into a function. */
static int load_text(lua_State *L) {
  chunk *ck = lua_touserdata(L, 1);
  lua_pushlightuserdata(L, ck);
  lua_pushcclosure(L, l_profile, 1);
  lua_setglobal(L, "profile");
  if (luaL_loadbufferx(L, ck->buf, ck->len, ck->name, "t") != LUA_OK) return lua_error(L);
  return 1;
}

/* The returned table as JSON text. */
static int to_json(lua_State *L) {
  if (!lua_istable(L, 1)) return luaL_error(L, "the file must return profile { ... }");
  sim__lua_push_json_text(L, 1, "profile");
  return 1;
}

/*
 * Loads a client profile file in the sandbox. On success returns 0 and the
 * profile as JSON text in *json (the caller frees it); else a negative code
 * with "file:line: message" in err.
 */
int sim_profile_load(const char *path, char **json, char err[SIM_ERRLEN]) {
  *json = NULL;
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: %s", path, strerror(errno));
    return SIM_EIO;
  }
  char *buf = malloc(PROFILE_FILE_MAX + 1);
  size_t len = buf ? fread(buf, 1, PROFILE_FILE_MAX + 1, f) : 0;
  fclose(f);
  if (buf == NULL || len > PROFILE_FILE_MAX) {
    free(buf);
    snprintf(err, SIM_ERRLEN, "%s: %s", path, buf ? "file too large" : "out of memory");
    return buf ? SIM_ELOAD : SIM_ENOMEM;
  }
  char name[512];
  snprintf(name, sizeof name, "@%s", path);
  sim_lua_sandbox sb = {0};
  int rc = sim__lua_open(&sb, path, 1, err);
  if (rc != SIM_OK) {
    free(buf);
    return rc;
  }
  chunk ck = {buf, len, name, path};
  lua_State *L = sb.L;
  lua_pushcfunction(L, load_text);
  lua_pushlightuserdata(L, &ck);
  rc = sim__lua_call(&sb, 1, 1, SIM_ELOAD, err);
  if (rc == SIM_OK) rc = sim__lua_call(&sb, 0, 1, SIM_ELOAD, err); /* run the file */
  if (rc == SIM_OK) {
    lua_pushcfunction(L, to_json);
    lua_insert(L, -2);
    rc = sim__lua_call(&sb, 1, 1, SIM_ELOAD, err);
  }
  if (rc == SIM_OK) {
    *json = strdup(lua_tostring(L, -1));
    if (*json == NULL) rc = SIM_ENOMEM;
  }
  sim__lua_close(&sb);
  free(buf);
  return rc;
}
