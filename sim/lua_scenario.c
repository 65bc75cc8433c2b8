/*
 * lua_scenario.c - scenario{...}, loading a scenario file, and asking its
 * providers what to do with an arrival (the sim__scenario_* functions).
 *
 * A scenario file runs once at load, in its own sandbox (lua_sandbox.c).
 * scenario{} checks the table when the file calls it, so mistakes point at
 * the scenario's line; the load then copies what C needs (names, docs, the
 * client/expect/ratelimit tables as JSON) and keeps each provider's step
 * list or function in the registry for sim__scenario_decide.
 *
 * One Lua state per thread that asks (an event loop of the server): the
 * state the load made serves the first thread that asks, and each further
 * thread gets a state of its own, made by running the kept file text again,
 * up to MAX_LOOPS (past that, threads share states, each behind its own
 * lock). So no lock is held across calls of different loops, and a slow
 * call holds up only its own loop. What loops share lives in C: attempt
 * counters, the ledger and the rate limiter (server files), the random
 * numbers (lua_random.c) and what a scenario keeps in `shared`
 * (lua_shared.c). Lua variables a provider function changes are its
 * loop's own (docs/scenarios.md says so).
 *
 * math.random is seeded with the load's seed before the file runs; a
 * scenario's own `seed` reseeds it once the file has run, so its provider
 * functions draw the same numbers whatever seed the caller passed. Every
 * state runs its file with its own generator so seeded (top-level values
 * agree), then draws from the scenario's one shared generator.
 *
 * `req.body` is turned into a Lua table only when a provider function
 * reads it (an __index metamethod on `req`).
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "sim/lua_int.h"

#define MAX_PROVIDERS 16
#define MAX_TAGS 64
/* Lua states of one scenario: more than the server's event loops (8). */
#define MAX_LOOPS 16
/* Index of the effects table in sim_lua_loop.refs. */
#define EFFECTS_REF MAX_PROVIDERS

/* One provider (or the effects table): a step list or a function. */
typedef struct sim_lua_provider {
  char *name;
  int slot;  /* its index in sim_lua_loop.refs */
  int is_fn; /* 1: a function(req); 0: a list of steps */
} sim_lua_provider;

/* One Lua state of the scenario and the thread it serves. */
typedef struct sim_lua_loop {
  sim_lua_sandbox sb;
  pthread_mutex_t mu;  /* serialises every use of sb.L after its load */
  pthread_t owner;     /* the thread it serves, once owned */
  atomic_int owned;    /* 1: owner is set (written before it) */
  int refs[MAX_PROVIDERS + 1]; /* registry refs of each provider's list or
                                  function; EFFECTS_REF: the effects */
} sim_lua_loop;

struct sim_scenario {
  sim_lua_loop loops[MAX_LOOPS];
  atomic_int nloops;       /* loops[0 .. nloops) are open */
  pthread_mutex_t loops_mu; /* serialises opening and claiming loops */
  sim_lua_shared *shared;  /* `shared` of every loop */
  sim_lua_rng rng;         /* math.random of every loop, after the load */
  pthread_mutex_t rng_mu;
  atomic_long waits;       /* decisions that waited for a loop's lock */
  atomic_long body_conversions; /* req.body tables made */
  int max_loops;           /* states made at most (MAX_LOOPS; benchmarks: fewer) */
  sim_lua_call_hook hook;  /* tests: runs before each provider call */
  void *hook_arg;
  char *src;               /* the file text, for the states made later */
  size_t src_len;
  uint64_t seed;           /* the load's seed */
  pthread_mutex_t mu;      /* guards served */
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
      if (!sim_provider_name_ok(name, len))
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

/* Keeps the provider described by the table at idx (fn= or steps=) in the
   registry; returns the reference. */
static int keep_provider(lua_State *L, int idx, int *is_fn) {
  idx = lua_absindex(L, idx);
  *is_fn = 0;
  if (lua_getfield(L, idx, "fn") == LUA_TFUNCTION) {
    *is_fn = 1;
  } else {
    lua_pop(L, 1);
    lua_getfield(L, idx, "steps");
  }
  return luaL_ref(L, LUA_REGISTRYINDEX);
}

/* What the load of one state passes to its protected steps. */
typedef struct load_ctx {
  sim_scenario *sc;
  sim_lua_loop *loop;
} load_ctx;

/* Compiles the file text (protected): returns the chunk. */
static int load_chunk(lua_State *L) {
  load_ctx *ctx = lua_touserdata(L, 1);
  sim_lua_sandbox *sb = &ctx->loop->sb;
  const char *chunkname = lua_pushfstring(L, "@%s", ctx->sc->path);
  /* Learn how Lua abbreviates the path before any message uses it. */
  if (luaL_loadbufferx(L, "", 0, chunkname, "t") != LUA_OK) lua_error(L);
  lua_Debug ar;
  lua_getinfo(L, ">S", &ar);
  snprintf(sb->short_src, sizeof sb->short_src, "%s", ar.short_src);
  if (luaL_loadbufferx(L, ctx->sc->src, ctx->sc->src_len, chunkname, "t") != LUA_OK)
    lua_error(L);
  return 1;
}

/* The scenario table the file returned (argument 1), or raises. */
static int returned_table(lua_State *L) {
  if (!luaL_testudata(L, 1, SIM_LUA_SCENARIO_MT)) {
    const char *got = sim__lua_is_step(L, 1) ? "a step"
                      : lua_isnone(L, 1)     ? "nothing"
                                             : luaL_typename(L, 1);
    luaL_error(L, "the file must return scenario{...}, got %s", got);
  }
  lua_getiuservalue(L, 1, 1);
  return lua_gettop(L);
}

/* Copies the returned scenario into C (protected): arguments are the
   value the file returned and the load context. */
static int load_extract(lua_State *L) {
  load_ctx *ctx = lua_touserdata(L, 2);
  sim_scenario *sc = ctx->sc;
  int d = returned_table(L);
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
    p->slot = sc->nproviders;
    p->name = dup_field(L, lua_gettop(L), "name");
    sc->nproviders++;
    ctx->loop->refs[p->slot] = keep_provider(L, -1, &p->is_fn);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);

  if (lua_getfield(L, d, "effects") == LUA_TTABLE) {
    sc->effects.name = strdup("effects");
    if (sc->effects.name == NULL) oom(L);
    sc->effects.slot = EFFECTS_REF;
    ctx->loop->refs[EFFECTS_REF] = keep_provider(L, -1, &sc->effects.is_fn);
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

/* Keeps the providers of a further state's scenario (protected): arguments
   as load_extract's. The file must have returned the same providers as at
   the load (a file that decides them by the clock may not). */
static int load_refs(lua_State *L) {
  load_ctx *ctx = lua_touserdata(L, 2);
  sim_scenario *sc = ctx->sc;
  int d = returned_table(L);
  lua_getfield(L, d, "providers");
  int same = (int)lua_rawlen(L, -1) == sc->nproviders;
  for (int i = 0; same && i < sc->nproviders; i++) {
    int is_fn = 0;
    lua_rawgeti(L, -1, i + 1);
    lua_getfield(L, -1, "name");
    same = strcmp(lua_tostring(L, -1), sc->providers[i].name) == 0;
    lua_pop(L, 1);
    ctx->loop->refs[i] = keep_provider(L, -1, &is_fn);
    same = same && is_fn == sc->providers[i].is_fn;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (lua_getfield(L, d, "effects") == LUA_TTABLE) {
    int is_fn = 0;
    ctx->loop->refs[EFFECTS_REF] = keep_provider(L, -1, &is_fn);
    same = same && sc->has_effects && is_fn == sc->effects.is_fn;
  } else {
    same = same && !sc->has_effects;
  }
  if (!same)
    luaL_error(L, "the file returned other providers than when it was loaded");
  return 0;
}

/* The light userdata key of req's snapshot in req: its address. */
static const char SNAP_KEY = 's';

/* The metatable of `req`: its fields are made on first read (see below). */
static int req_index(lua_State *L);
static int req_pairs(lua_State *L);
static void open_req_meta(lua_State *L) {
  luaL_newmetatable(L, SIM_LUA_REQ_MT);
  lua_pushcfunction(L, req_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, req_pairs);
  lua_setfield(L, -2, "__pairs");
  lua_pushliteral(L, "req");
  lua_setfield(L, -2, "__metatable");
  sim__lua_fast(L)->req_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* push_req's way to it */
}

/* Defines the step constructors, scenario{} and req's metatable in a fresh
   sandbox (protected; the sandbox itself knows nothing of scenarios). */
static int open_engine(lua_State *L) {
  sim__lua_open_shared(L, lua_touserdata(L, 1));
  sim__lua_open_steps(L);
  sim__lua_open_scenario(L);
  open_req_meta(L);
  return 0;
}

/* Opens loop's state and runs the scenario file in it: the first state
   (first = 1) fills sc from what the file returned; a further one only
   keeps its own references to the providers. Returns 0, or a code with
   "file:line: message" in err; the state is closed on failure. */
static int open_loop(sim_scenario *sc, sim_lua_loop *loop, int first,
                     char err[SIM_ERRLEN]) {
  for (int i = 0; i <= MAX_PROVIDERS; i++) loop->refs[i] = LUA_NOREF;
  int rc = sim__lua_open(&loop->sb, sc->path, sc->seed, err);
  if (rc != 0) return rc;
  lua_State *L = loop->sb.L;
  lua_pushcfunction(L, open_engine);
  lua_pushlightuserdata(L, sc->shared);
  rc = sim__lua_call(&loop->sb, 1, 0, SIM_ENOMEM, err);
  if (rc != 0) goto fail;
  sim__lua_set_srcmap(L, sc->map);
  load_ctx ctx = {sc, loop};
  lua_pushcfunction(L, load_chunk);
  lua_pushlightuserdata(L, &ctx);
  rc = sim__lua_call(&loop->sb, 1, 1, SIM_ELOAD, err);
  if (rc != 0) goto fail;
  rc = sim__lua_call(&loop->sb, 0, 1, SIM_ELOAD, err); /* run the file */
  if (rc != 0) goto fail;
  lua_pushcfunction(L, first ? load_extract : load_refs);
  lua_insert(L, -2);
  lua_pushlightuserdata(L, &ctx);
  rc = sim__lua_call(&loop->sb, 2, 0, SIM_ELOAD, err);
  if (rc != 0) goto fail;
  lua_settop(L, 0);
  sim__lua_set_srcmap(L, NULL);
  lua_gc(L, LUA_GCCOLLECT); /* start serving from a clean heap */
  /* A collection when the heap is 4x what the last one left, not Lua's 2x:
     the garbage of a decision is a few small tables, and marking the
     loaded scenario over again for it was ~1.5k instructions a request
     (issue 30; 400 saves as much as 1000). Over the sandbox's memory
     budget Lua collects at once before failing, so no budget is lost. */
  lua_gc(L, LUA_GCINC, 400, 0, 0);
  /* From now on math.random draws from the scenario's one generator; the
     first state hands it what the load left in its own. */
  if (first) sc->rng = loop->sb.rng_own;
  loop->sb.rng = &sc->rng;
  loop->sb.rng_mu = &sc->rng_mu;
  return 0;
fail:
  sim__lua_close(&loop->sb);
  return rc;
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
  if (sc == NULL) {
    free(buf);
    snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
    return SIM_ENOMEM;
  }
  /* Mutexes first: sim__scenario_free destroys them. */
  pthread_mutex_init(&sc->mu, NULL);
  pthread_mutex_init(&sc->loops_mu, NULL);
  pthread_mutex_init(&sc->rng_mu, NULL);
  pthread_mutex_init(&sc->loops[0].mu, NULL);
  sc->src = buf;
  sc->src_len = len;
  sc->seed = seed;
  sc->max_loops = MAX_LOOPS;
  sc->effects.slot = EFFECTS_REF;
  sc->idempotency_honoured = 1;
  sc->ledger_up = 1;
  sc->path = strdup(path);
  if (sc->path == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
    rc = SIM_ENOMEM;
    goto fail;
  }
  sc->map = sim__srcmap_new(buf, len);
  sc->shared = sim__lua_shared_new();
  if (sc->map == NULL || sc->shared == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
    rc = SIM_ENOMEM;
    goto fail;
  }
  rc = open_loop(sc, &sc->loops[0], 1, err);
  if (rc != 0) goto fail;
  atomic_store(&sc->nloops, 1); /* unowned: the first thread to ask takes it */
  *out = sc;
  return 0;

fail:
  sim__scenario_free(sc);
  return rc;
}

/* Releases a scenario and its Lua states; NULL is a no-op. */
void sim__scenario_free(sim_scenario *sc) {
  if (sc == NULL) return;
  int n = atomic_load(&sc->nloops);
  for (int i = 0; i < MAX_LOOPS; i++) {
    sim__lua_close(&sc->loops[i].sb);
    if (i == 0 || i < n) pthread_mutex_destroy(&sc->loops[i].mu);
  }
  sim__srcmap_free(sc->map);
  sim__lua_shared_free(sc->shared);
  pthread_mutex_destroy(&sc->mu);
  pthread_mutex_destroy(&sc->loops_mu);
  pthread_mutex_destroy(&sc->rng_mu);
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
  free(sc->src);
  free(sc->path);
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
  sim_lua_loop *loop;
  const sim_lua_provider *p;
  int provider; /* index, or -1 for effects */
  const sim_req *req;
  struct req_snap *snap; /* the req of a function's call, NULL before it */
  int body_read; /* 1: req.body was asked for (made, or nil) */
  int headers_read; /* 1: req.headers was made */
  sim_step *out;
} decide_ctx;

/*
 * What `req`'s fields are made from, copied when the call starts: a full
 * userdata kept in req under a light key (SNAP_KEY). Fields are made on
 * their first read (req_index), so a function that reads none of them pays
 * for one table and this block instead of a dozen table stores (issue 30);
 * a req kept past its call still reads them from here. ctx is the decision
 * while it lasts and NULL after: the body and headers were the server's
 * bytes, and are gone by then.
 */
typedef struct req_snap {
  decide_ctx *ctx;
  lua_Integer attempt, n;
  double t;
  int stream;
  const char *dialect; /* a static name */
  const char *method, *path, *provider, *key; /* into text, or NULL */
  char text[];
} req_snap;

/* The fields req_index makes, in the order __pairs makes them. */
static const char *const REQ_FIELDS[] = {"attempt", "n", "method", "path", "provider",
                                         "dialect", "key", "stream", "t", NULL};

/* The snapshot of the req table at idx (NULL for a table that is not one). */
static req_snap *snap_of(lua_State *L, int idx) {
  lua_rawgetp(L, idx, &SNAP_KEY);
  req_snap *s = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return s;
}

/* The decide_ctx of req at idx while its decision lasts, else NULL (a req
   kept past its call). */
static decide_ctx *current_ctx(lua_State *L, int idx) {
  req_snap *s = snap_of(L, idx);
  return s != NULL ? s->ctx : NULL;
}

/*
 * Makes req's body (req at idx) if it is the request being decided and its
 * body has not been asked for: parses it into a table (nil when it is not
 * JSON) and keeps it in req, so later reads are plain field reads.
 */
static void make_body(lua_State *L, int idx) {
  decide_ctx *ctx = current_ctx(L, idx);
  if (ctx == NULL || ctx->body_read) return;
  ctx->body_read = 1;
  if (ctx->req->body == NULL || ctx->req->body_len == 0 ||
      ctx->req->body_len > FUSEBOX_LUA_BODY_MAX)
    return; /* none, or too large to convert: nil */
  atomic_fetch_add_explicit(&ctx->sc->body_conversions, 1, memory_order_relaxed);
  sim__lua_push_json_value(L, ctx->req->body, ctx->req->body_len,
                           FUSEBOX_LUA_BODY_DEPTH);
  lua_setfield(L, idx, "body"); /* req's metatable has no __newindex */
}

/*
 * Makes req.headers (req at idx) on its first read, as make_body: names in
 * lower case, a repeated header's values joined with ", ". Most provider
 * functions never read them (issue 13: building them cost every request).
 */
static void make_headers(lua_State *L, int idx) {
  decide_ctx *ctx = current_ctx(L, idx);
  if (ctx == NULL || ctx->headers_read) return;
  ctx->headers_read = 1;
  const sim_req *r = ctx->req;
  const sim_header *hs = r->headers;
  int nh = r->nheaders;
  if (r->load_headers != NULL) r->load_headers(r->headers_arg, &hs, &nh);
  lua_createtable(L, 0, nh);
  for (int i = 0; i < nh; i++) {
    const sim_header *h = &hs[i];
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
  lua_setfield(L, idx, "headers");
}

/* Pushes scalar field i of REQ_FIELDS from snapshot s (nil when absent). */
static void push_field(lua_State *L, const req_snap *s, int i) {
  switch (i) {
  case 0: lua_pushinteger(L, s->attempt); break;
  case 1: lua_pushinteger(L, s->n); break;
  case 2: lua_pushstring(L, s->method); break; /* NULL pushes nil */
  case 3: lua_pushstring(L, s->path); break;
  case 4: lua_pushstring(L, s->provider); break;
  case 5: lua_pushstring(L, s->dialect); break;
  case 6: lua_pushstring(L, s->key); break;
  case 7: lua_pushboolean(L, s->stream); break;
  default: lua_pushnumber(L, s->t); break;
  }
}

/* Makes scalar field i in req at idx from its snapshot, unless the
   function has set it itself. */
static void make_field(lua_State *L, int idx, int i) {
  req_snap *s = snap_of(L, idx);
  if (s == NULL) return;
  lua_pushstring(L, REQ_FIELDS[i]);
  if (lua_rawget(L, idx) == LUA_TNIL) {
    lua_pop(L, 1);
    push_field(L, s, i);
    lua_setfield(L, idx, REQ_FIELDS[i]); /* req's metatable has no __newindex */
  } else {
    lua_pop(L, 1);
  }
}

/*
 * __index of req: every field is made on its first read and kept in req,
 * so later reads are plain field reads; `body` and `headers` only during
 * the decision that received them.
 */
static int req_index(lua_State *L) {
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  const char *k = lua_tostring(L, 2);
  if (strcmp(k, "body") == 0) make_body(L, 1);
  else if (strcmp(k, "headers") == 0) make_headers(L, 1);
  else {
    int i = 0;
    while (REQ_FIELDS[i] != NULL && strcmp(k, REQ_FIELDS[i]) != 0) i++;
    if (REQ_FIELDS[i] == NULL) return 0;
    req_snap *s = snap_of(L, 1);
    if (s == NULL) return 0;
    push_field(L, s, i);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, 1);
  return 1;
}

/* The iterator of pairs(req): next, past the snapshot's light key. */
static int req_next(lua_State *L) {
  lua_settop(L, 2);
  while (lua_next(L, 1) != 0) {
    if (lua_type(L, -2) != LUA_TLIGHTUSERDATA) return 2;
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  return 1;
}

/* __pairs of req: makes every field first, so that pairs() sees them. */
static int req_pairs(lua_State *L) {
  make_body(L, 1);
  make_headers(L, 1);
  for (int i = 0; REQ_FIELDS[i] != NULL; i++) make_field(L, 1, i);
  lua_pushcfunction(L, req_next);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

/* A copy of the n bytes at s and a NUL (s NULL stays NULL) at *at in
   text, which has room. */
static const char *snap_str(char **at, const char *s, size_t n) {
  if (s == NULL) return NULL;
  char *d = memcpy(*at, s, n);
  d[n] = '\0';
  *at += n + 1;
  return d;
}

/* Pushes the `req` table: empty but for its snapshot (see req_snap). */
static void push_req(lua_State *L, decide_ctx *ctx) {
  const sim_req *r = ctx->req;
  const char *provider = r->provider != NULL ? r->provider : ctx->p->name;
  const char *strs[4] = {r->method, r->path, provider, r->key};
  size_t lens[4], len = 0;
  for (int i = 0; i < 4; i++) {
    lens[i] = strs[i] != NULL ? strlen(strs[i]) : 0;
    len += strs[i] != NULL ? lens[i] + 1 : 0;
  }
  lua_createtable(L, 0, 1);
  req_snap *s = lua_newuserdatauv(L, sizeof *s + len, 0);
  s->ctx = ctx;
  s->attempt = r->attempt;
  s->n = r->n;
  s->t = r->t;
  s->stream = r->stream;
  s->dialect = sim__dialect_name(r->dialect);
  char *at = s->text;
  s->method = snap_str(&at, strs[0], lens[0]);
  s->path = snap_str(&at, strs[1], lens[1]);
  s->provider = snap_str(&at, strs[2], lens[2]);
  s->key = snap_str(&at, strs[3], lens[3]);
  ctx->snap = s;
  lua_rawsetp(L, -2, &SNAP_KEY);
  lua_rawgeti(L, LUA_REGISTRYINDEX, sim__lua_fast(L)->req_mt_ref);
  lua_setmetatable(L, -2);
}

/* Turns the decision into a sim_step (protected): argument 1 is the step
   list (list providers) or what the function returned, argument 2 the
   context. */
static int take_step(lua_State *L) {
  decide_ctx *ctx = lua_touserdata(L, 2);
  const char *who = ctx->provider < 0 ? "effects" : "provider";
  int idx = 1, kind;
  if (!ctx->p->is_fn) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    lua_Integer i = ctx->req->attempt < 1 ? 1 : ctx->req->attempt;
    if (i > n) i = n;
    lua_rawgeti(L, 1, i);
    idx = lua_gettop(L);
  } else if ((kind = sim__lua_step_check(L, 1)) < 0 || (ctx->provider >= 0 && kind > 0)) {
    lua_Debug ar;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->loop->refs[ctx->p->slot]);
    lua_getinfo(L, ">S", &ar);
    if (kind >= 0)
      luaL_error(L, "%s:%d: %s function returned effect{}, which only answers "
                    "at the effect endpoint", ctx->loop->sb.short_src,
                 ar.linedefined, who);
    luaL_error(L, "%s:%d: %s function returned %s, expected a step",
               ctx->loop->sb.short_src, ar.linedefined, who,
               lua_isnone(L, 1) ? "nothing" : luaL_typename(L, 1));
  }
  sim__lua_step_convert(L, idx, &ctx->out); /* decide frees it on an error */
  return 0;
}

/* One decision (protected): argument 1 is the provider's step list or
   function, argument 2 the context. A function is called with `req` and
   what it returns is taken as the step, all in one protected call (each
   call arms the limits afresh and costs its own set-up). */
static int decide_call(lua_State *L) {
  decide_ctx *ctx = lua_touserdata(L, 2);
  if (ctx->p->is_fn) {
    lua_pushvalue(L, 1);
    push_req(L, ctx);
    lua_call(L, 1, 1);
    lua_replace(L, 1);
  }
  return take_step(L);
}

/* A small hash of a thread id, to spread threads over shared states. */
static unsigned thread_hash(pthread_t t) {
  unsigned char b[sizeof t];
  unsigned h = 2166136261u;
  memcpy(b, &t, sizeof t);
  for (size_t i = 0; i < sizeof t; i++) h = (h ^ b[i]) * 16777619u;
  return h;
}

/*
 * The state of the calling thread, made on its first call: the load's own
 * state if nobody has it yet, else a new one (the file run again), else,
 * past MAX_LOOPS or when a new state cannot be made, one shared with other
 * threads (each state has its own lock, so sharing stays correct).
 */
static sim_lua_loop *loop_of_thread(sim_scenario *sc) {
  pthread_t me = pthread_self();
  int n = atomic_load_explicit(&sc->nloops, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (atomic_load_explicit(&sc->loops[i].owned, memory_order_acquire) &&
        pthread_equal(sc->loops[i].owner, me))
      return &sc->loops[i];

  pthread_mutex_lock(&sc->loops_mu);
  n = atomic_load_explicit(&sc->nloops, memory_order_relaxed);
  sim_lua_loop *lp = NULL;
  for (int i = 0; i < n && lp == NULL; i++)
    if (!atomic_load_explicit(&sc->loops[i].owned, memory_order_relaxed))
      lp = &sc->loops[i];
  if (lp == NULL && n < sc->max_loops) {
    char err[SIM_ERRLEN];
    lp = &sc->loops[n];
    memset(&lp->sb, 0, sizeof lp->sb);
    pthread_mutex_init(&lp->mu, NULL);
    if (open_loop(sc, lp, 0, err) != 0) {
      pthread_mutex_destroy(&lp->mu);
      lp = NULL; /* out of memory, or a file that changed its mind: share */
    }
  }
  if (lp != NULL) {
    lp->owner = me;
    atomic_store_explicit(&lp->owned, 1, memory_order_release);
    if (lp == &sc->loops[n]) atomic_store_explicit(&sc->nloops, n + 1, memory_order_release);
  } else {
    lp = &sc->loops[thread_hash(me) % (unsigned)n];
  }
  pthread_mutex_unlock(&sc->loops_mu);
  return lp;
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

  sim_lua_loop *loop = loop_of_thread(sc);
  decide_ctx ctx = {.sc = sc, .loop = loop, .p = p, .provider = provider, .req = req};
  if (pthread_mutex_trylock(&loop->mu) != 0) {
    atomic_fetch_add_explicit(&sc->waits, 1, memory_order_relaxed);
    pthread_mutex_lock(&loop->mu);
  }
  if (sc->hook != NULL) sc->hook(sc->hook_arg, (int)(loop - sc->loops));
  lua_State *L = loop->sb.L;
  int top = lua_gettop(L);
  lua_pushcfunction(L, decide_call);
  lua_rawgeti(L, LUA_REGISTRYINDEX, loop->refs[p->slot]);
  lua_pushlightuserdata(L, &ctx);
  int rc = sim__lua_call(&loop->sb, 2, 0, SIM_ELUA, err);
  /* The request is over: its req keeps no way to its bytes. */
  if (ctx.snap != NULL) ctx.snap->ctx = NULL;
  lua_settop(L, top);
  pthread_mutex_unlock(&loop->mu);
  if (rc != 0) {
    sim__step_free(ctx.out);
    return rc;
  }
  *out = ctx.out;
  return 0;
}

/* What the engine has done so far; see lua_int.h. */
void sim__scenario_stats(const sim_scenario *sc, sim_scenario_stats *out) {
  sim_scenario *s = (sim_scenario *)sc;
  out->loops = atomic_load(&s->nloops);
  out->waits = atomic_load(&s->waits);
  out->body_conversions = atomic_load(&s->body_conversions);
}

/* Sets the test hook; see lua_int.h. */
void sim__scenario_set_hook(sim_scenario *sc, sim_lua_call_hook fn, void *arg) {
  sc->hook = fn;
  sc->hook_arg = arg;
}

/* Caps the states; see lua_int.h. */
void sim__scenario_set_max_loops(sim_scenario *sc, int n) {
  sc->max_loops = n < 1 ? 1 : n > MAX_LOOPS ? MAX_LOOPS : n;
}
