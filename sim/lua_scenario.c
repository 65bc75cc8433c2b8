/*
 * lua_scenario.c - scenario{...}, loading a scenario file, and asking its
 * providers what to do with an arrival (the sim__scenario_* functions).
 *
 * A scenario file runs once, at load, in its own sandbox (lua_sandbox.c).
 * scenario{} checks the table when the file calls it, so mistakes point at
 * the scenario's line; the load then copies what C needs (names, docs, the
 * client/expect/ratelimit tables as JSON) and keeps each provider's step
 * list or function in the registry for sim__scenario_decide.
 *
 * math.random is seeded with the load's seed before the file runs; a
 * scenario's own `seed` reseeds it once the file has run, so its provider
 * functions draw the same numbers whatever seed the caller passed.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "sim/lua_int.h"

#define MAX_PROVIDERS 16
#define MAX_TAGS 64

/* One provider (or the effects table): a step list or a function. */
typedef struct sim_lua_provider {
  char *name;
  int ref;   /* registry reference to the list or the function */
  int is_fn; /* 1: a function(req); 0: a list of steps */
} sim_lua_provider;

struct sim_scenario {
  sim_lua_sandbox sb;
  pthread_mutex_t mu; /* serialises every use of sb.L after the load */
  char *path;
  char *name;
  char *doc;
  char **tags;
  int ntags;
  sim_lua_provider *providers;
  int nproviders;
  sim_lua_provider effects;
  int has_effects;
  int idempotency_honoured;
  int ledger_up;
  char *client_json;
  char *expect_json;
  char *ratelimit_json;
  sim_srcmap *map;   /* where the file's keys are written, for messages */
  int root_line;     /* line of the scenario{} call the file returned */
  int served;        /* 1 once a server session has claimed it */
  char *src;         /* the text loaded (preamble blanked), kept for clones */
  size_t src_len;
  uint64_t seed;     /* the seed it was loaded with */
};

/* --------------------------------------------------------- scenario{} */

static const char *const scenario_keys[] = {
  "name",   "doc",     "tags",      "provider", "providers", "effects",
  "idempotency", "ledger", "ratelimit", "client", "expect",   "seed",
  NULL};

/* Raises for a key scenario{} does not know, with a suggestion. */
static void check_scenario_keys(lua_State *L) {
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      sim__lua_error_at(L, "", "scenario takes named keys only, got a %s key",
                        luaL_typename(L, -1));
    const char *k = lua_tostring(L, -1);
    int ok = 0;
    for (int i = 0; scenario_keys[i] != NULL && !ok; i++)
      ok = strcmp(k, scenario_keys[i]) == 0;
    if (!ok) {
      const char *s = sim__lua_suggest(k, scenario_keys);
      if (s != NULL)
        sim__lua_error_at(L, k, "unknown scenario key '%s' (did you mean '%s'?)",
                          k, s);
      sim__lua_error_at(L, k, "unknown scenario key '%s'", k);
    }
  }
}

/* Copies the string at key into the field table at d; raises on a wrong
   type, or when it is required and absent or empty. */
static void sc_string(lua_State *L, const char *key, int d, int required) {
  int t = lua_getfield(L, 1, key);
  if (t == LUA_TNIL) {
    if (required)
      sim__lua_error_at(L, key, "scenario: '%s' is required (a string)", key);
  } else if (t != LUA_TSTRING) {
    sim__lua_error_at(L, key, "scenario: '%s' must be a string, got %s", key,
                      luaL_typename(L, -1));
  } else if (required && lua_rawlen(L, -1) == 0) {
    sim__lua_error_at(L, key, "scenario: '%s' must not be empty", key);
  }
  lua_setfield(L, d, key);
}

/* Copies a choice among `options` (the first is the default). */
static void sc_choice(lua_State *L, const char *key, int d,
                      const char *const *options) {
  int t = lua_getfield(L, 1, key);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushstring(L, options[0]);
  } else {
    const char *v = t == LUA_TSTRING ? lua_tostring(L, -1) : "";
    int ok = 0;
    for (int i = 0; options[i] != NULL && !ok; i++)
      ok = strcmp(v, options[i]) == 0;
    if (!ok)
      sim__lua_error_at(L, key, "scenario: '%s' must be \"%s\" or \"%s\"", key,
                        options[0], options[1]);
  }
  lua_setfield(L, d, key);
}

/* Checks that the table at idx (at `path` in the scenario) is a list (keys
   1..n) and returns n. */
static lua_Integer list_len(lua_State *L, int idx, const char *what,
                            const char *path) {
  idx = lua_absindex(L, idx);
  lua_Integer count = 0, max = 0;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1)
      sim__lua_error_at(L, path, "%s must be a list", what);
    if (lua_tointeger(L, -1) > max) max = lua_tointeger(L, -1);
    count++;
  }
  if (count != max)
    sim__lua_error_at(L, path, "%s must be a list without holes", what);
  return count;
}

/*
 * Checks what a provider (or effects) is made of and stores it in the table
 * at `out` as fn= (a function) or steps= (a list of steps). `items` is the
 * index of a list of steps, or of one function / step; `what` names it in
 * messages and `path` is where it is in the scenario ("providers[2]").
 */
static void sc_provider(lua_State *L, int items, int out, const char *what,
                        const char *path, int is_effects) {
  char at[96];
  items = lua_absindex(L, items);
  out = lua_absindex(L, out);
  if (lua_type(L, items) == LUA_TFUNCTION) {
    lua_pushvalue(L, items);
    lua_setfield(L, out, "fn");
    return;
  }
  lua_newtable(L); /* the steps */
  if (sim__lua_is_step(L, items)) {
    if (!is_effects && sim__lua_step_has_effect(L, items))
      sim__lua_error_at(L, path, "%s: effect{} steps belong in 'effects'", what);
    lua_pushvalue(L, items);
    lua_rawseti(L, -2, 1);
  } else if (lua_type(L, items) == LUA_TTABLE) {
    lua_Integer n = list_len(L, items, what, path);
    if (n == 0)
      sim__lua_error_at(L, path, "%s is empty: give at least one step, e.g. chat{}",
                        what);
    if (n == 1 && lua_rawgeti(L, items, 1) == LUA_TFUNCTION) {
      lua_setfield(L, out, "fn");
      lua_pop(L, 1);
      return;
    }
    lua_settop(L, lua_gettop(L) - (n == 1 ? 1 : 0));
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, items, i);
      snprintf(at, sizeof at, "%s[%lld]", path, (long long)i);
      if (!sim__lua_is_step(L, -1))
        sim__lua_error_at(L, at, "%s[%I] must be a step such as chat{...}, got %s",
                          what, i, lua_type(L, -1) == LUA_TFUNCTION
                                       ? "a function (a function must be alone)"
                                       : luaL_typename(L, -1));
      if (!is_effects && sim__lua_step_has_effect(L, -1))
        sim__lua_error_at(L, at, "%s[%I]: effect{} steps belong in 'effects'",
                          what, i);
      lua_rawseti(L, -2, i);
    }
  } else {
    sim__lua_error_at(L, path, "%s must be a list of steps or a function, got %s",
                      what, luaL_typename(L, items));
  }
  lua_setfield(L, out, "steps");
}

/* providers = { {name = "primary", <steps or function>}, ... } */
static void sc_providers(lua_State *L, int d) {
  static const char *const entry_keys[] = {"name", "fn", NULL};
  int have_one = lua_getfield(L, 1, "provider") != LUA_TNIL;
  int have_many = lua_getfield(L, 1, "providers") != LUA_TNIL;
  lua_newtable(L); /* the providers list */
  int list = lua_gettop(L);
  if (have_one && have_many)
    sim__lua_error_at(L, "providers",
                      "scenario: give 'provider' or 'providers', not both");
  if (have_one) {
    lua_newtable(L);
    lua_pushliteral(L, "primary");
    lua_setfield(L, -2, "name");
    sc_provider(L, list - 2, -1, "provider", "provider", 0);
    lua_rawseti(L, list, 1);
  } else if (have_many) {
    int src = list - 1;
    if (lua_type(L, src) != LUA_TTABLE)
      sim__lua_error_at(L, "providers", "scenario: 'providers' must be a list of "
                                        "{name = ..., <steps or function>}");
    lua_Integer n = list_len(L, src, "providers", "providers");
    if (n == 0) sim__lua_error_at(L, "providers", "scenario: 'providers' is empty");
    if (n > MAX_PROVIDERS)
      sim__lua_error_at(L, "providers", "scenario: more than %d providers",
                        MAX_PROVIDERS);
    for (lua_Integer i = 1; i <= n; i++) {
      char what[64], at[64], key_at[128];
      snprintf(at, sizeof at, "providers[%lld]", (long long)i);
      lua_rawgeti(L, src, i);
      int e = lua_gettop(L);
      if (lua_type(L, e) != LUA_TTABLE || sim__lua_is_step(L, e))
        sim__lua_error_at(L, at, "providers[%I] must be {name = ..., <steps or "
                                 "function>}", i);
      lua_pushnil(L);
      while (lua_next(L, e) != 0) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) {
          const char *k = lua_tostring(L, -1);
          snprintf(key_at, sizeof key_at, "%s.%.60s", at, k);
          if (strcmp(k, entry_keys[0]) != 0 && strcmp(k, entry_keys[1]) != 0)
            sim__lua_error_at(L, key_at, "providers[%I]: unknown key '%s' (a "
                              "provider has name, its steps, or fn)", i, k);
        } else if (!lua_isinteger(L, -1)) {
          sim__lua_error_at(L, at, "providers[%I]: unexpected %s key", i,
                            luaL_typename(L, -1));
        }
      }
      size_t len = 0;
      snprintf(key_at, sizeof key_at, "%s.name", at);
      if (lua_getfield(L, e, "name") != LUA_TSTRING)
        sim__lua_error_at(L, key_at, "providers[%I]: 'name' is required (a string)",
                          i);
      const char *name = lua_tolstring(L, -1, &len);
      if (!sim__provider_name_ok(name, len))
        sim__lua_error_at(L, key_at, "providers[%I]: name '%s' must be 1 to %d of "
                          "a-z 0-9 _ - (and not \"v1\")", i, name,
                          SIM_PROVIDER_NAME_MAX);
      for (lua_Integer j = 1; j < i; j++) {
        lua_rawgeti(L, list, j);
        lua_getfield(L, -1, "name");
        if (strcmp(lua_tostring(L, -1), name) == 0)
          sim__lua_error_at(L, key_at, "providers: the name '%s' is used twice",
                            name);
        lua_pop(L, 2);
      }
      snprintf(what, sizeof what, "providers[%d] (%s)", (int)i, name);
      lua_newtable(L);
      int out = lua_gettop(L);
      lua_pushvalue(L, -2);
      lua_setfield(L, out, "name");
      int has_fn = lua_getfield(L, e, "fn") != LUA_TNIL;
      int has_items = lua_rawlen(L, e) > 0;
      snprintf(key_at, sizeof key_at, "%s.fn", at);
      if (has_fn && has_items)
        sim__lua_error_at(L, key_at, "%s: give steps or fn, not both", what);
      if (has_fn) {
        if (lua_type(L, -1) != LUA_TFUNCTION)
          sim__lua_error_at(L, key_at, "%s: fn must be a function", what);
        sc_provider(L, -1, out, what, at, 0);
      } else {
        /* The positional items, without the name. */
        lua_newtable(L);
        for (lua_Integer j = 1; j <= (lua_Integer)lua_rawlen(L, e); j++) {
          lua_rawgeti(L, e, j);
          lua_rawseti(L, -2, j);
        }
        if (lua_rawlen(L, -1) == 0)
          sim__lua_error_at(L, at, "%s has no steps: add steps such as chat{} or "
                                   "fn", what);
        sc_provider(L, -1, out, what, at, 0);
      }
      lua_settop(L, out);
      lua_rawseti(L, list, i);
      lua_settop(L, list);
    }
  }
  lua_setfield(L, d, "providers");
  lua_pop(L, 2);
}

/* The rate limiter reads its table itself: build one from the JSON text on
   top of the stack and drop it, raising at the key its message names. */
static void check_ratelimit(lua_State *L) {
  char err[SIM_ERRLEN] = "", path[64];
  sim_ratelimit *rl = NULL;
  int rc = sim__ratelimit_new(lua_tostring(L, -1), 1, NULL, &rl, err);
  sim__ratelimit_free(rl);
  if (rc == SIM_ENOMEM) luaL_error(L, "out of memory");
  if (rc != SIM_OK) {
    if (!sim__msg_path(err, path, sizeof path)) snprintf(path, sizeof path, "ratelimit");
    sim__lua_error_at(L, path, "%s", err);
  }
}

/* scenario{...}: checks the table and returns a scenario object. */
static int l_scenario(lua_State *L) {
  static const char *const idem[] = {"honoured", "ignored", "honored", NULL};
  static const char *const ledger[] = {"up", "down", NULL};
  if (lua_type(L, 1) != LUA_TTABLE || sim__lua_is_step(L, 1))
    sim__lua_error_at(L, NULL, "scenario: expected a table, as in scenario{...}");
  lua_settop(L, 1);
  check_scenario_keys(L);
  lua_newtable(L);
  int d = 2;

  sc_string(L, "name", d, 1);
  sc_string(L, "doc", d, 0);

  if (lua_getfield(L, 1, "tags") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TTABLE)
      sim__lua_error_at(L, "tags", "scenario: 'tags' must be a list of strings");
    lua_Integer n = list_len(L, -1, "scenario: 'tags'", "tags");
    if (n > MAX_TAGS)
      sim__lua_error_at(L, "tags", "scenario: more than %d tags", MAX_TAGS);
    lua_createtable(L, (int)n, 0);
    for (lua_Integer i = 1; i <= n; i++) {
      char at[32];
      snprintf(at, sizeof at, "tags[%lld]", (long long)i);
      if (lua_rawgeti(L, -2, i) != LUA_TSTRING)
        sim__lua_error_at(L, at, "scenario: tags[%I] must be a string", i);
      lua_rawseti(L, -2, i);
    }
    lua_setfield(L, d, "tags");
  }
  lua_pop(L, 1);

  sc_providers(L, d);

  if (lua_getfield(L, 1, "effects") != LUA_TNIL) {
    lua_newtable(L);
    sc_provider(L, -2, -1, "effects", "effects", 1);
    lua_setfield(L, d, "effects");
  }
  lua_pop(L, 1);

  lua_getfield(L, d, "providers");
  int nprov = (int)lua_rawlen(L, -1);
  lua_getfield(L, d, "effects");
  if (nprov == 0 && lua_isnil(L, -1))
    sim__lua_error_at(L, NULL, "scenario: give 'provider', 'providers' or "
                               "'effects'");
  lua_pop(L, 2);

  sc_choice(L, "idempotency", d, idem);
  sc_choice(L, "ledger", d, ledger);

  static const char *const json_keys[] = {"client", "expect", "ratelimit",
                                          NULL};
  for (int i = 0; json_keys[i] != NULL; i++) {
    if (lua_getfield(L, 1, json_keys[i]) != LUA_TNIL) {
      char field[32];
      sim__lua_push_json_text(L, -1, json_keys[i]);
      if (strcmp(json_keys[i], "ratelimit") == 0) check_ratelimit(L);
      snprintf(field, sizeof field, "%s_json", json_keys[i]);
      lua_setfield(L, d, field);
    }
    lua_pop(L, 1);
  }

  if (lua_getfield(L, 1, "seed") != LUA_TNIL) {
    if (!lua_isinteger(L, -1))
      sim__lua_error_at(L, "seed", "scenario: 'seed' must be an integer");
    lua_setfield(L, d, "seed");
  } else {
    lua_pop(L, 1);
  }

  lua_pushinteger(L, sim__lua_call_line(L)); /* where messages start */
  lua_setfield(L, d, "line");

  lua_newuserdatauv(L, 1, 1);
  lua_pushvalue(L, d);
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, SIM_LUA_SCENARIO_MT);
  return 1;
}

static int scenario_tostring(lua_State *L) {
  lua_getiuservalue(L, 1, 1);
  lua_getfield(L, -1, "name");
  lua_pushfstring(L, "scenario{name = \"%s\"}", lua_tostring(L, -1));
  return 1;
}

/* Defines the step constructors and scenario{} in a fresh sandbox
   (protected; the sandbox itself knows nothing of scenarios). */
static int open_engine(lua_State *L) {
  sim__lua_open_steps(L);
  sim__lua_open_scenario(L);
  return 0;
}

/* Defines scenario{} and the scenario metatable. */
void sim__lua_open_scenario(lua_State *L) {
  luaL_newmetatable(L, SIM_LUA_SCENARIO_MT);
  lua_pushcfunction(L, scenario_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushliteral(L, "scenario");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_scenario);
  lua_setglobal(L, "scenario");
}

/* -------------------------------------------------------------- loading */

static void oom(lua_State *L) { luaL_error(L, "out of memory"); }

static char *dup_field(lua_State *L, int d, const char *key) {
  char *v = NULL;
  if (lua_getfield(L, d, key) == LUA_TSTRING) {
    v = strdup(lua_tostring(L, -1));
    if (v == NULL) oom(L);
  }
  lua_pop(L, 1);
  return v;
}

/* Trims white space at both ends of s in place. */
static void trim(char *s) {
  if (s == NULL) return;
  size_t b = 0, e = strlen(s);
  while (b < e && isspace((unsigned char)s[b])) b++;
  while (e > b && isspace((unsigned char)s[e - 1])) e--;
  memmove(s, s + b, e - b);
  s[e - b] = '\0';
}

/* Keeps the provider described by the table at idx (fn= or steps=). */
static void keep_provider(lua_State *L, int idx, sim_lua_provider *p) {
  idx = lua_absindex(L, idx);
  if (lua_getfield(L, idx, "fn") == LUA_TFUNCTION) {
    p->is_fn = 1;
  } else {
    lua_pop(L, 1);
    lua_getfield(L, idx, "steps");
  }
  p->ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* What the load passes to its protected steps. */
typedef struct load_ctx {
  sim_scenario *sc;
  const char *buf;
  size_t len;
} load_ctx;

/* Compiles the file text (protected): returns the chunk. */
static int load_chunk(lua_State *L) {
  load_ctx *ctx = lua_touserdata(L, 1);
  sim_lua_sandbox *sb = &ctx->sc->sb;
  const char *chunkname = lua_pushfstring(L, "@%s", ctx->sc->path);
  /* Learn how Lua abbreviates the path before any message uses it. */
  if (luaL_loadbufferx(L, "", 0, chunkname, "t") != LUA_OK) lua_error(L);
  lua_Debug ar;
  lua_getinfo(L, ">S", &ar);
  snprintf(sb->short_src, sizeof sb->short_src, "%s", ar.short_src);
  if (luaL_loadbufferx(L, ctx->buf, ctx->len, chunkname, "t") != LUA_OK)
    lua_error(L);
  return 1;
}

/* Copies the returned scenario into C (protected): arguments are the
   value the file returned and the load context. */
static int load_extract(lua_State *L) {
  load_ctx *ctx = lua_touserdata(L, 2);
  sim_scenario *sc = ctx->sc;
  if (!luaL_testudata(L, 1, SIM_LUA_SCENARIO_MT)) {
    const char *got = sim__lua_is_step(L, 1) ? "a step"
                      : lua_isnone(L, 1)     ? "nothing"
                                             : luaL_typename(L, 1);
    luaL_error(L, "the file must return scenario{...}, got %s", got);
  }
  lua_getiuservalue(L, 1, 1);
  int d = lua_gettop(L);
  sc->name = dup_field(L, d, "name");
  sc->doc = dup_field(L, d, "doc");
  trim(sc->doc);
  if (lua_getfield(L, d, "tags") == LUA_TTABLE) {
    int n = (int)lua_rawlen(L, -1);
    sc->tags = calloc(n > 0 ? (size_t)n : 1, sizeof *sc->tags);
    if (sc->tags == NULL) oom(L);
    for (int i = 1; i <= n; i++) {
      lua_rawgeti(L, -1, i);
      sc->tags[sc->ntags] = strdup(lua_tostring(L, -1));
      if (sc->tags[sc->ntags] == NULL) oom(L);
      sc->ntags++;
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);

  lua_getfield(L, d, "providers");
  int n = (int)lua_rawlen(L, -1);
  sc->providers = calloc(n > 0 ? (size_t)n : 1, sizeof *sc->providers);
  if (sc->providers == NULL) oom(L);
  for (int i = 1; i <= n; i++) {
    sim_lua_provider *p = &sc->providers[sc->nproviders];
    lua_rawgeti(L, -1, i);
    p->ref = LUA_NOREF;
    p->name = dup_field(L, lua_gettop(L), "name");
    sc->nproviders++;
    keep_provider(L, -1, p);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);

  if (lua_getfield(L, d, "effects") == LUA_TTABLE) {
    sc->effects.name = strdup("effects");
    if (sc->effects.name == NULL) oom(L);
    keep_provider(L, -1, &sc->effects);
    sc->has_effects = 1;
  }
  lua_pop(L, 1);

  lua_getfield(L, d, "idempotency");
  sc->idempotency_honoured = strcmp(lua_tostring(L, -1), "ignored") != 0;
  lua_getfield(L, d, "ledger");
  sc->ledger_up = strcmp(lua_tostring(L, -1), "down") != 0;
  lua_pop(L, 2);
  sc->client_json = dup_field(L, d, "client_json");
  sc->expect_json = dup_field(L, d, "expect_json");
  sc->ratelimit_json = dup_field(L, d, "ratelimit_json");
  lua_getfield(L, d, "line");
  sc->root_line = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (lua_getfield(L, d, "seed") == LUA_TNUMBER)
    sim__lua_seed(L, (int64_t)lua_tointeger(L, -1));
  return 0;
}

/* Reads a whole file of at most FUSEBOX_LUA_FILE_MAX bytes into *buf. */
static int read_file(const char *path, char **buf, size_t *len,
                     char err[SIM_ERRLEN]) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: cannot open: %s", path, strerror(errno));
    return SIM_EIO;
  }
  size_t cap = 4096, n = 0;
  char *b = malloc(cap);
  int rc = 0;
  while (b != NULL) {
    if (n == cap) {
      if (cap > FUSEBOX_LUA_FILE_MAX) break;
      char *nb = realloc(b, cap * 2);
      if (nb == NULL) {
        free(b);
        b = NULL;
        break;
      }
      b = nb;
      cap *= 2;
    }
    size_t got = fread(b + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (b == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
    rc = SIM_ENOMEM;
  } else if (ferror(f)) {
    snprintf(err, SIM_ERRLEN, "%s: cannot read: %s", path, strerror(errno));
    rc = SIM_EIO;
  } else if (n > FUSEBOX_LUA_FILE_MAX) {
    snprintf(err, SIM_ERRLEN, "%s: larger than %zu bytes", path,
             (size_t)FUSEBOX_LUA_FILE_MAX);
    rc = SIM_ELOAD;
  }
  fclose(f);
  if (rc != 0) {
    free(b);
    return rc;
  }
  *buf = b;
  *len = n;
  return 0;
}

/* A UTF-8 byte order mark and a first "#!" line become blanks, so line
   numbers stay right. */
static void blank_preamble(char *buf, size_t len) {
  size_t i = 0;
  if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
    memset(buf, ' ', 3);
    i = 3;
  }
  if (i < len && buf[i] == '#')
    for (; i < len && buf[i] != '\n'; i++) buf[i] = ' ';
}

static int load_text(const char *path, char *buf, size_t len, uint64_t seed,
                     sim_scenario **out, char err[SIM_ERRLEN]);

/* Loads and validates a scenario file; see sim_int.h. */
int sim__scenario_load(const char *path, uint64_t seed, sim_scenario **out,
                       char err[SIM_ERRLEN]) {
  if (out != NULL) *out = NULL;
  if (path == NULL || out == NULL || err == NULL) {
    if (err != NULL) snprintf(err, SIM_ERRLEN, "bad argument");
    return SIM_EINVAL;
  }
  err[0] = '\0';
  char *buf = NULL;
  size_t len = 0;
  int rc = read_file(path, &buf, &len, err);
  if (rc != 0) return rc;
  return load_text(path, buf, len, seed, out, err);
}

/* Loads scenario text held in memory; see sim_int.h. */
int sim__scenario_load_text(const char *name, const char *text, size_t len, uint64_t seed,
                            sim_scenario **out, char err[SIM_ERRLEN]) {
  if (out != NULL) *out = NULL;
  if (name == NULL || (text == NULL && len > 0) || out == NULL || err == NULL) {
    if (err != NULL) snprintf(err, SIM_ERRLEN, "bad argument");
    return SIM_EINVAL;
  }
  err[0] = '\0';
  if (len > FUSEBOX_LUA_FILE_MAX) {
    snprintf(err, SIM_ERRLEN, "%s: larger than %zu bytes", name, (size_t)FUSEBOX_LUA_FILE_MAX);
    return SIM_ELOAD;
  }
  char *buf = malloc(len + 1);
  if (buf == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: out of memory", name);
    return SIM_ENOMEM;
  }
  if (len) memcpy(buf, text, len);
  return load_text(name, buf, len, seed, out, err);
}

/* A fresh load of the text sc was loaded from; see sim_int.h. */
int sim__scenario_clone(const sim_scenario *sc, sim_scenario **out, char err[SIM_ERRLEN]) {
  return sim__scenario_load_text(sc->path, sc->src, sc->src_len, sc->seed, out, err);
}

/* Loads len bytes of text (taken: kept by the scenario or freed) named path
   in messages. */
static int load_text(const char *path, char *buf, size_t len, uint64_t seed,
                     sim_scenario **out, char err[SIM_ERRLEN]) {
  int rc;
  blank_preamble(buf, len);

  sim_scenario *sc = calloc(1, sizeof *sc);
  if (sc == NULL || pthread_mutex_init(&sc->mu, NULL) != 0) {
    free(sc);
    free(buf);
    snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
    return SIM_ENOMEM;
  }
  sc->effects.ref = LUA_NOREF;
  sc->src = buf; /* kept for clones (sim__scenario_clone) */
  sc->src_len = len;
  sc->seed = seed;
  sc->idempotency_honoured = 1;
  sc->ledger_up = 1;
  sc->path = strdup(path);
  if (sc->path == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
    rc = SIM_ENOMEM;
    goto fail;
  }
  sc->map = sim__srcmap_new(buf, len);
  if (sc->map == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
    rc = SIM_ENOMEM;
    goto fail;
  }
  rc = sim__lua_open(&sc->sb, sc->path, seed, err);
  if (rc != 0) goto fail;

  lua_State *L = sc->sb.L;
  lua_pushcfunction(L, open_engine);
  rc = sim__lua_call(&sc->sb, 0, 0, SIM_ENOMEM, err);
  if (rc != 0) goto fail;
  sim__lua_set_srcmap(L, sc->map);
  load_ctx ctx = {sc, buf, len};
  lua_pushcfunction(L, load_chunk);
  lua_pushlightuserdata(L, &ctx);
  rc = sim__lua_call(&sc->sb, 1, 1, SIM_ELOAD, err);
  if (rc != 0) goto fail;
  rc = sim__lua_call(&sc->sb, 0, 1, SIM_ELOAD, err); /* run the file */
  if (rc != 0) goto fail;
  lua_pushcfunction(L, load_extract);
  lua_insert(L, -2);
  lua_pushlightuserdata(L, &ctx);
  rc = sim__lua_call(&sc->sb, 2, 0, SIM_ELOAD, err);
  if (rc != 0) goto fail;
  lua_settop(L, 0);
  sim__lua_set_srcmap(L, NULL);
  lua_gc(L, LUA_GCCOLLECT); /* start serving from a clean heap */
  *out = sc;
  return 0;

fail:
  sim__scenario_free(sc);
  return rc;
}

/* Releases a scenario and its Lua state; NULL is a no-op. */
void sim__scenario_free(sim_scenario *sc) {
  if (sc == NULL) return;
  sim__lua_close(&sc->sb);
  sim__srcmap_free(sc->map);
  pthread_mutex_destroy(&sc->mu);
  for (int i = 0; i < sc->nproviders; i++) free(sc->providers[i].name);
  free(sc->providers);
  free(sc->effects.name);
  for (int i = 0; i < sc->ntags; i++) free(sc->tags[i]);
  free(sc->tags);
  free(sc->name);
  free(sc->doc);
  free(sc->client_json);
  free(sc->expect_json);
  free(sc->ratelimit_json);
  free(sc->path);
  free(sc->src);
  free(sc);
}

/* ------------------------------------------------------------- getters */

const char *sim__scenario_name(const sim_scenario *sc) { return sc->name; }
const char *sim__scenario_doc(const sim_scenario *sc) { return sc->doc; }
const char *sim__scenario_path(const sim_scenario *sc) { return sc->path; }
int sim__scenario_ntags(const sim_scenario *sc) { return sc->ntags; }

const char *sim__scenario_tag(const sim_scenario *sc, int i) {
  return i >= 0 && i < sc->ntags ? sc->tags[i] : NULL;
}

int sim__scenario_nproviders(const sim_scenario *sc) { return sc->nproviders; }

const char *sim__scenario_provider_name(const sim_scenario *sc, int i) {
  return i >= 0 && i < sc->nproviders ? sc->providers[i].name : NULL;
}

int sim__scenario_has_effects(const sim_scenario *sc) {
  return sc->has_effects;
}

int sim__scenario_idempotency_honoured(const sim_scenario *sc) {
  return sc->idempotency_honoured;
}

int sim__scenario_ledger_up(const sim_scenario *sc) { return sc->ledger_up; }

const char *sim__scenario_client_json(const sim_scenario *sc) {
  return sc->client_json;
}

const char *sim__scenario_expect_json(const sim_scenario *sc) {
  return sc->expect_json;
}

const char *sim__scenario_ratelimit_json(const sim_scenario *sc) {
  return sc->ratelimit_json;
}

/* Places a message about a key at the key's line; see sim_int.h. */
void sim__scenario_error(const sim_scenario *sc, const char *msg,
                         char err[SIM_ERRLEN]) {
  char path[128];
  int line = 0;
  if (sim__msg_path(msg, path, sizeof path))
    line = sim__srcmap_line(sc->map, sc->root_line, path);
  if (line <= 0) line = sc->root_line;
  if (line > 0)
    snprintf(err, SIM_ERRLEN, "%s:%d: %s", sc->path, line, msg);
  else
    snprintf(err, SIM_ERRLEN, "%s: %s", sc->path, msg);
}

/* The seed the scenario was loaded with. */
uint64_t sim__scenario_seed(const sim_scenario *sc) { return sc->seed; }

/* Marks the scenario as served by one session; see sim_int.h. */
int sim__scenario_claim(sim_scenario *sc) {
  pthread_mutex_lock(&sc->mu);
  int was = sc->served;
  sc->served = 1;
  pthread_mutex_unlock(&sc->mu);
  return was ? SIM_EINVAL : SIM_OK;
}

/* ------------------------------------------------------------- deciding */

/* One decision in progress, passed to the protected steps. */
typedef struct decide_ctx {
  sim_scenario *sc;
  const sim_lua_provider *p;
  int provider; /* index, or -1 for effects */
  const sim_req *req;
  sim_step *out;
} decide_ctx;

static void set_str(lua_State *L, const char *key, const char *v) {
  if (v == NULL) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, key);
}

/* Builds the `req` table (protected). */
static int push_req(lua_State *L) {
  const decide_ctx *ctx = lua_touserdata(L, 1);
  const sim_req *r = ctx->req;
  lua_createtable(L, 0, 12);
  lua_pushinteger(L, r->attempt);
  lua_setfield(L, -2, "attempt");
  lua_pushinteger(L, r->n);
  lua_setfield(L, -2, "n");
  set_str(L, "method", r->method);
  set_str(L, "path", r->path);
  set_str(L, "provider", r->provider != NULL ? r->provider : ctx->p->name);
  set_str(L, "dialect", sim__dialect_name(r->dialect));
  set_str(L, "key", r->key);
  lua_pushboolean(L, r->stream);
  lua_setfield(L, -2, "stream");
  lua_pushnumber(L, r->t);
  lua_setfield(L, -2, "t");

  lua_createtable(L, 0, r->nheaders);
  for (int i = 0; i < r->nheaders; i++) {
    const sim_header *h = &r->headers[i];
    if (h->name == NULL || h->value == NULL) continue;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (const char *c = h->name; *c != '\0'; c++)
      luaL_addchar(&b, (char)tolower((unsigned char)*c));
    luaL_pushresult(&b);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, -3) == LUA_TSTRING) { /* a repeated header: join */
      lua_pushfstring(L, "%s, %s", lua_tostring(L, -1), h->value);
      lua_remove(L, -2);
    } else {
      lua_pop(L, 1);
      lua_pushstring(L, h->value);
    }
    lua_rawset(L, -3);
  }
  lua_setfield(L, -2, "headers");

  if (r->body != NULL && r->body_len <= FUSEBOX_LUA_BODY_MAX)
    sim__lua_push_json_value(L, r->body, r->body_len, FUSEBOX_LUA_BODY_DEPTH);
  else
    lua_pushnil(L);
  lua_setfield(L, -2, "body");
  return 1;
}

/* Turns the decision into a sim_step (protected): argument 1 is the step
   list (list providers) or what the function returned, argument 2 the
   context. */
static int take_step(lua_State *L) {
  decide_ctx *ctx = lua_touserdata(L, 2);
  const char *who = ctx->provider < 0 ? "effects" : "provider";
  int idx = 1;
  if (!ctx->p->is_fn) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    lua_Integer i = ctx->req->attempt < 1 ? 1 : ctx->req->attempt;
    if (i > n) i = n;
    lua_rawgeti(L, 1, i);
    idx = lua_gettop(L);
  } else if (!sim__lua_is_step(L, 1) ||
             (ctx->provider >= 0 && sim__lua_step_has_effect(L, 1))) {
    lua_Debug ar;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->p->ref);
    lua_getinfo(L, ">S", &ar);
    if (sim__lua_is_step(L, 1))
      luaL_error(L, "%s:%d: %s function returned effect{}, which only answers "
                    "at the effect endpoint", ctx->sc->sb.short_src,
                 ar.linedefined, who);
    luaL_error(L, "%s:%d: %s function returned %s, expected a step",
               ctx->sc->sb.short_src, ar.linedefined, who,
               lua_isnone(L, 1) ? "nothing" : luaL_typename(L, 1));
  }
  sim_step **box = sim__lua_step_convert(L, idx);
  ctx->out = *box;
  *box = NULL;
  return 0;
}

/* Asks a provider what to do with one arrival; see sim_int.h. */
int sim__scenario_decide(sim_scenario *sc, int provider, const sim_req *req,
                         sim_step **out, char err[SIM_ERRLEN]) {
  if (out != NULL) *out = NULL;
  if (sc == NULL || req == NULL || out == NULL || err == NULL) {
    if (err != NULL) snprintf(err, SIM_ERRLEN, "bad argument");
    return SIM_EINVAL;
  }
  err[0] = '\0';
  const sim_lua_provider *p = NULL;
  if (provider == -1 && sc->has_effects)
    p = &sc->effects;
  else if (provider >= 0 && provider < sc->nproviders)
    p = &sc->providers[provider];
  if (p == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: no %s", sc->path,
             provider == -1 ? "effects in this scenario" : "such provider");
    return SIM_EINVAL;
  }

  decide_ctx ctx = {sc, p, provider, req, NULL};
  pthread_mutex_lock(&sc->mu);
  lua_State *L = sc->sb.L;
  int top = lua_gettop(L);
  int rc = 0;
  lua_pushcfunction(L, take_step);
  lua_rawgeti(L, LUA_REGISTRYINDEX, p->ref);
  if (p->is_fn) {
    lua_pushcfunction(L, push_req);
    lua_pushlightuserdata(L, &ctx);
    rc = sim__lua_call(&sc->sb, 1, 1, SIM_ELUA, err); /* [take fn req] */
    if (rc == 0)
      rc = sim__lua_call(&sc->sb, 1, 1, SIM_ELUA, err); /* [take result] */
  }
  if (rc == 0) {
    lua_pushlightuserdata(L, &ctx);
    rc = sim__lua_call(&sc->sb, 2, 0, SIM_ELUA, err);
  }
  lua_settop(L, top);
  pthread_mutex_unlock(&sc->mu);
  if (rc != 0) {
    sim__step_free(ctx.out);
    return rc;
  }
  *out = ctx.out;
  return 0;
}
