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

/* profile{...}: checks the top-level keys and returns the table. */
static int l_profile(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "profile keys are names");
    const char *k = lua_tostring(L, -1);
    int known = 0;
    for (int i = 0; PROFILE_KEYS[i]; i++) known |= strcmp(k, PROFILE_KEYS[i]) == 0;
    if (!known) {
      const char *s = sim__lua_suggest(k, PROFILE_KEYS);
      return luaL_error(L, "unknown profile key '%s'%s%s%s", k, s ? " (did you mean '" : "",
                        s ? s : "", s ? "'?)" : "");
    }
  }
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

typedef struct chunk {
  const char *buf;
  size_t len;
  const char *name;
} chunk;

/* Compiles the file text (never binary) into a function. */
static int load_text(lua_State *L) {
  chunk *ck = lua_touserdata(L, 1);
  lua_pushcfunction(L, l_profile);
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
  chunk ck = {buf, len, name};
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
