/*
 * lua_steps.c - the step constructors (chat{}, fail{}, ...) and the
 * conversion of a Lua step into a sim_step.
 *
 * A constructor checks every field when the scenario calls it, so a typo
 * fails at load with the scenario's line, and returns a read-only step: a
 * userdata whose private user value holds the fields in canonical form
 * (named as the sim_step fields). Nothing a scenario can reach can change
 * that table, so converting it later only copies.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "common/suggest.h"
#include "sim/lua_int.h"

/* Registry names of the shared-body cache and its entries' metatable. */
#define BLOB_CACHE "fusebox.blobcache"
#define BLOB_MT "fusebox.blob"
/* Distinct large strings the cache keeps before it starts over. */
#define BLOB_CACHE_MAX 8

static int blobref_gc(lua_State *L);

#define MAX_NEST 8            /* steps wrapped in steps */
#define MAX_CHUNKS 100000     /* stream chunks */
#define MAX_HEADERS 64        /* extra headers of one step */
#define MAX_HEADER_VALUE 8192 /* bytes of one header value */

/* ------------------------------------------------------ field checking */

/* One constructor call being checked: the argument table is at index t,
   the canonical field table being built at index d. */
typedef struct args {
  lua_State *L;
  const char *step; /* the constructor's name, for messages */
  int t;
  int d;
} args;

/* The known name closest to `key` when it is a likely typo, else NULL: the
   one rule of common/suggest.h. */
const char *sim__lua_suggest(const char *key, const char *const *known) {
  return fb_suggest(key, known, NULL);
}

/*
 * Raises "what: unknown field 'key'" (with a suggestion) for any string key
 * of the table at idx not in `known`, and for positional items beyond npos.
 * Exported for scenario{} through the same wording.
 */
static void check_keys(lua_State *L, int idx, const char *what,
                       const char *noun, const char *const *known, int npos) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -1);
      int ok = 0;
      for (int i = 0; known[i] != NULL && !ok; i++)
        ok = strcmp(k, known[i]) == 0;
      if (!ok) {
        const char *s = sim__lua_suggest(k, known);
        if (s != NULL)
          luaL_error(L, "%s: unknown %s '%s' (did you mean '%s'?)", what, noun,
                     k, s);
        luaL_error(L, "%s: unknown %s '%s'", what, noun, k);
      }
    } else if (lua_isinteger(L, -1)) {
      lua_Integer i = lua_tointeger(L, -1);
      if (i < 1 || i > npos) {
        if (npos == 0)
          luaL_error(L, "%s: takes named fields only, got a value at [%d]",
                     what, (int)i);
        luaL_error(L, "%s: unexpected value at [%d]", what, (int)i);
      }
    } else {
      luaL_error(L, "%s: unexpected %s key", what, luaL_typename(L, -1));
    }
  }
}

/* Starts checking a constructor call: the argument must be a table (or
   nothing, as in hang()). Leaves the field table at index 2. */
static void args_begin(args *a, lua_State *L, const char *step,
                       const char *const *known, int npos) {
  a->L = L;
  a->step = step;
  if (lua_isnoneornil(L, 1)) {
    lua_settop(L, 0);
    lua_newtable(L);
  } else if (lua_type(L, 1) != LUA_TTABLE) {
    luaL_error(L, "%s: expected a table of fields, as in %s{...}, got %s",
               step, step, luaL_typename(L, 1));
  }
  if (lua_gettop(L) > 1)
    luaL_error(L, "%s: takes one table, as in %s{...}", step, step);
  check_keys(L, 1, step, "field", known, npos);
  lua_createtable(L, 0, 4); /* sized for a typical step: no rehash per field */
  a->t = 1;
  a->d = 2;
}

/* Pushes field `key` of the arguments; returns its type. */
static int arg_get(args *a, const char *key) {
  return lua_getfield(a->L, a->t, key);
}

static void arg_bad(args *a, const char *key, const char *want) {
  luaL_error(a->L, "%s: field '%s' must be %s, got %s", a->step, key, want,
             luaL_typename(a->L, -1));
}

/* A value is an integer when it is a Lua integer or an integral float. */
static int to_integer(lua_State *L, int idx, lua_Integer *out) {
  if (lua_isinteger(L, idx)) {
    *out = lua_tointeger(L, idx);
    return 1;
  }
  if (lua_type(L, idx) == LUA_TNUMBER) {
    lua_Number n = lua_tonumber(L, idx);
    if (n == floor(n) && n >= -9007199254740992.0 && n <= 9007199254740992.0) {
      *out = (lua_Integer)n;
      return 1;
    }
  }
  return 0;
}

/* Copies an optional string field into the field table. */
static int opt_string(args *a, const char *key, const char *dkey) {
  if (arg_get(a, key) == LUA_TNIL) {
    lua_pop(a->L, 1);
    return 0;
  }
  if (lua_type(a->L, -1) != LUA_TSTRING) arg_bad(a, key, "a string");
  lua_setfield(a->L, a->d, dkey);
  return 1;
}

/* Copies an optional integer field within [min, max]. */
static int opt_integer(args *a, const char *key, const char *dkey,
                       lua_Integer min, lua_Integer max, lua_Integer *out) {
  if (arg_get(a, key) == LUA_TNIL) {
    lua_pop(a->L, 1);
    return 0;
  }
  lua_Integer v = 0; /* arg_bad does not return; the compiler cannot see it */
  if (!to_integer(a->L, -1, &v)) arg_bad(a, key, "an integer");
  if (v < min || v > max)
    luaL_error(a->L, "%s: field '%s' must be between %I and %I, got %I",
               a->step, key, min, max, v);
  lua_pop(a->L, 1);
  lua_pushinteger(a->L, v);
  lua_setfield(a->L, a->d, dkey);
  if (out != NULL) *out = v;
  return 1;
}

/* Copies an optional number field within [min, max]. */
static int opt_number_in(args *a, const char *key, const char *dkey, double min,
                         double max, const char *want) {
  if (arg_get(a, key) == LUA_TNIL) {
    lua_pop(a->L, 1);
    return 0;
  }
  if (lua_type(a->L, -1) != LUA_TNUMBER) arg_bad(a, key, want);
  double v = lua_tonumber(a->L, -1);
  if (!isfinite(v) || v < min || v > max)
    luaL_error(a->L, "%s: field '%s' must be %s, got %f", a->step, key, want,
               (lua_Number)v);
  lua_pop(a->L, 1);
  lua_pushnumber(a->L, v);
  lua_setfield(a->L, a->d, dkey);
  return 1;
}

/* Copies an optional finite number field no smaller than min. */
static int opt_number(args *a, const char *key, const char *dkey, double min,
                      const char *want) {
  return opt_number_in(a, key, dkey, min, HUGE_VAL, want);
}

/* Copies an optional boolean field as 0/1. */
static int opt_bool(args *a, const char *key, const char *dkey) {
  if (arg_get(a, key) == LUA_TNIL) {
    lua_pop(a->L, 1);
    return 0;
  }
  if (lua_type(a->L, -1) != LUA_TBOOLEAN) arg_bad(a, key, "true or false");
  lua_pushinteger(a->L, lua_toboolean(a->L, -1));
  lua_setfield(a->L, a->d, dkey);
  lua_pop(a->L, 1);
  return 1;
}

/* RFC 9110 token characters, for header names. */
static int is_token(const char *s) {
  if (*s == '\0') return 0;
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 'a' && c <= 'z') continue;
    if (c >= 'A' && c <= 'Z') continue;
    if (c >= '0' && c <= '9') continue;
    if (strchr("!#$%&'*+-.^_`|~", c) == NULL) return 0;
  }
  return 1;
}

/* A header value that cannot break the response framing. */
static int is_header_value(const char *s, size_t len) {
  if (len > MAX_HEADER_VALUE || strlen(s) != len) return 0;
  return strpbrk(s, "\r\n") == NULL;
}

/* Headers the server writes itself: a scenario setting them would break
   the framing rather than test the client. */
static const char *const server_headers[] = {"content-length",
                                             "transfer-encoding", "connection",
                                             NULL};

/* headers = {name = value}: names are tokens, values strings or numbers. */
static void opt_headers(args *a) {
  lua_State *L = a->L;
  if (arg_get(a, "headers") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (lua_type(L, -1) != LUA_TTABLE) arg_bad(a, "headers", "a table");
  int h = lua_gettop(L);
  lua_newtable(L);
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, h) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING || !is_token(lua_tostring(L, -2)))
      luaL_error(L, "%s: headers: names must be header names as strings",
                 a->step);
    const char *name = lua_tostring(L, -2);
    for (int i = 0; server_headers[i] != NULL; i++)
      if (strcasecmp(name, server_headers[i]) == 0)
        luaL_error(L, "%s: headers: '%s' is set by the server", a->step, name);
    if (lua_type(L, -1) == LUA_TNUMBER) {
      lua_Integer iv;
      if (to_integer(L, -1, &iv))
        lua_pushfstring(L, "%I", iv);
      else
        lua_pushfstring(L, "%f", lua_tonumber(L, -1));
      lua_replace(L, -2);
    }
    size_t len;
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "%s: headers: value of '%s' must be a string, got %s",
                 a->step, name, luaL_typename(L, -1));
    const char *v = lua_tolstring(L, -1, &len);
    if (!is_header_value(v, len))
      luaL_error(L, "%s: headers: value of '%s' has a line break or is too long",
                 a->step, name);
    if (++n > MAX_HEADERS)
      luaL_error(L, "%s: headers: more than %d", a->step, MAX_HEADERS);
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, h + 1);
  }
  lua_setfield(L, a->d, "headers");
  lua_pop(L, 1);
}

/* usage = {input=, output=} (or prompt_tokens/completion_tokens, or
   input_tokens/output_tokens). */
static void opt_usage(args *a) {
  static const char *const known[] = {"input",         "output",
                                      "prompt_tokens", "completion_tokens",
                                      "input_tokens",  "output_tokens",
                                      NULL};
  lua_State *L = a->L;
  if (arg_get(a, "usage") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (lua_type(L, -1) != LUA_TTABLE) arg_bad(a, "usage", "a table");
  char what[48];
  snprintf(what, sizeof what, "%s: usage", a->step);
  check_keys(L, -1, what, "field", known, 0);
  for (int i = 0; known[i] != NULL; i++) {
    lua_getfield(L, -1, known[i]);
    if (!lua_isnil(L, -1)) {
      lua_Integer v = 0;
      if (!to_integer(L, -1, &v) || v < 0 || v > INT_MAX)
        luaL_error(L, "%s: usage.%s must be a non-negative integer", a->step,
                   known[i]);
      lua_pushinteger(L, v);
      lua_setfield(L, a->d, i % 2 == 0 ? "usage_in" : "usage_out");
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

#define MAX_TOOL_CALLS 64

/* tool_calls = { { name=, arguments = table | "raw text", id= }, ... }:
   stored as a list of {id, name, arguments (JSON text)}; ids default to
   "call_<n>" so a retried turn carries the same id. */
static void opt_tool_calls(args *a) {
  static const char *const known[] = {"name", "arguments", "id", NULL};
  lua_State *L = a->L;
  if (arg_get(a, "tool_calls") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (lua_type(L, -1) != LUA_TTABLE) arg_bad(a, "tool_calls", "a list of tables");
  int t = lua_gettop(L);
  lua_Integer n = (lua_Integer)lua_rawlen(L, t);
  if (n < 1 || n > MAX_TOOL_CALLS)
    luaL_error(L, "%s: tool_calls must list 1 to %d calls", a->step, MAX_TOOL_CALLS);
  lua_createtable(L, (int)n, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    char what[64];
    snprintf(what, sizeof what, "%s: tool_calls[%d]", a->step, (int)i);
    if (lua_rawgeti(L, t, i) != LUA_TTABLE) luaL_error(L, "%s must be a table", what);
    int c = lua_gettop(L);
    check_keys(L, c, what, "field", known, 0);
    lua_createtable(L, 0, 3);
    if (lua_getfield(L, c, "name") != LUA_TSTRING || lua_rawlen(L, -1) == 0)
      luaL_error(L, "%s: 'name' must be a non-empty string", what);
    lua_setfield(L, -2, "name");
    int ty = lua_getfield(L, c, "id");
    if (ty == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushfstring(L, "call_%d", (int)i);
    } else if (ty != LUA_TSTRING) {
      luaL_error(L, "%s: 'id' must be a string", what);
    }
    lua_setfield(L, -2, "id");
    ty = lua_getfield(L, c, "arguments");
    if (ty == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushliteral(L, "{}");
    } else if (ty == LUA_TTABLE) {
      sim__lua_push_json_text(L, -1, what);
      lua_remove(L, -2);
    } else if (ty != LUA_TSTRING) {
      luaL_error(L, "%s: 'arguments' must be a table or a string of JSON text", what);
    }
    lua_setfield(L, -2, "arguments");
    lua_rawseti(L, -3, i);
    lua_pop(L, 1);
  }
  lua_setfield(L, a->d, "tool_calls");
  lua_pop(L, 1);
}

/* incomplete = "max_output_tokens" | "content_filter": the answer ends cut
   short, in each API's words. */
static void opt_incomplete(args *a) {
  lua_State *L = a->L;
  if (arg_get(a, "incomplete") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  int f = strcmp(v, "max_output_tokens") == 0 ? SIM_FINISH_LENGTH
          : strcmp(v, "content_filter") == 0  ? SIM_FINISH_FILTER
                                              : 0;
  if (f == 0)
    luaL_error(L, "%s: 'incomplete' must be \"max_output_tokens\" or \"content_filter\"",
               a->step);
  lua_pop(L, 1);
  lua_pushinteger(L, f);
  lua_setfield(L, a->d, "finish");
}

/* ------------------------------------------------------------ step values */

/* Pushes the field table of the step at idx. */
static void step_data(lua_State *L, int idx) { lua_getiuservalue(L, idx, 1); }

/* Integer field `key` of the step at idx (0 when absent). */
static lua_Integer step_int(lua_State *L, int idx, const char *key) {
  step_data(L, idx);
  lua_getfield(L, -1, key);
  lua_Integer v = lua_tointeger(L, -1);
  lua_pop(L, 2);
  return v;
}

/* 1 if the value at idx is a step made by a constructor. */
int sim__lua_is_step(lua_State *L, int idx) {
  return luaL_testudata(L, idx, SIM_LUA_STEP_MT) != NULL;
}

/* The kind of the step at idx. */
sim_step_kind sim__lua_step_kind(lua_State *L, int idx) {
  return (sim_step_kind)step_int(L, lua_absindex(L, idx), "kind");
}

/* 1 if the step at idx is or wraps an effect{} step. */
int sim__lua_step_has_effect(lua_State *L, int idx) {
  return (int)step_int(L, lua_absindex(L, idx), "fx");
}

/* Turns the field table at index d into a step and leaves it at the top.
   `next` is the index of a wrapped step or 0. */
static int make_step(lua_State *L, int d, sim_step_kind kind, int next) {
  d = lua_absindex(L, d);
  lua_Integer depth = 1, fx = kind == SIM_STEP_EFFECT;
  if (next != 0) {
    next = lua_absindex(L, next);
    lua_Integer nd = step_int(L, next, "depth");
    depth += nd > 0 ? nd : 1;
    fx |= step_int(L, next, "fx");
    if (depth > MAX_NEST)
      luaL_error(L, "%s: steps nest deeper than %d", sim__step_kind_name(kind),
                 MAX_NEST);
    lua_pushvalue(L, next);
    lua_setfield(L, d, "next");
  }
  lua_pushinteger(L, kind);
  lua_setfield(L, d, "kind");
  if (depth > 1) { /* absent: 1, and fx absent: 0 (most steps are plain) */
    lua_pushinteger(L, depth);
    lua_setfield(L, d, "depth");
  }
  if (fx) {
    lua_pushinteger(L, fx);
    lua_setfield(L, d, "fx");
  }
  lua_newuserdatauv(L, 1, 1);
  lua_pushvalue(L, d);
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, SIM_LUA_STEP_MT);
  return 1;
}

/* Pushes a step of `kind` with every field at its default. */
static void push_plain_step(lua_State *L, sim_step_kind kind) {
  lua_newtable(L);
  make_step(L, -1, kind, 0);
  lua_remove(L, -2);
}

/* Pushes the wrapped step given as field `key` or positional item `pos`
   (0: none); pushes nil when neither is there. */
static void arg_step(args *a, const char *key, int pos) {
  lua_State *L = a->L;
  int named = arg_get(a, key) != LUA_TNIL;
  if (pos > 0) {
    lua_rawgeti(L, 1, pos);
    if (!lua_isnil(L, -1)) {
      if (named)
        luaL_error(L, "%s: the step is given twice (at [%d] and as '%s')",
                   a->step, pos, key);
      lua_remove(L, -2);
    } else {
      lua_pop(L, 1);
    }
  }
  if (!lua_isnil(L, -1) && !sim__lua_is_step(L, -1))
    luaL_error(L, "%s: the wrapped step must be a step such as chat{...}, got %s",
               a->step, luaL_typename(L, -1));
}

/* ------------------------------------------------------- the constructors */

static const char *const chat_keys[] = {"content", "model", "usage", "headers",
                                        "tool_calls", "incomplete", NULL};

/* chat{content=, model=, usage=, headers=, tool_calls=, incomplete=} */
static int l_chat(lua_State *L) {
  args a;
  args_begin(&a, L, "chat", chat_keys, 0);
  opt_string(&a, "content", "content");
  opt_string(&a, "model", "model");
  opt_usage(&a);
  opt_headers(&a);
  opt_tool_calls(&a);
  opt_incomplete(&a);
  return make_step(L, a.d, SIM_STEP_CHAT, 0);
}

static const char *const stream_keys[] = {
  "chunks", "content", "interval", "drop_after", "stall_after", "stall",
  "error_after", "error", "no_end", "no_terminator", "model", "usage", "headers",
  "tool_calls", "incomplete", NULL};

/* error = {status=, code=, type=, message=} of a stream. */
static void stream_error(args *a) {
  static const char *const known[] = {"status", "code", "type", "message",
                                      NULL};
  lua_State *L = a->L;
  if (arg_get(a, "error") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (lua_type(L, -1) != LUA_TTABLE) arg_bad(a, "error", "a table");
  check_keys(L, -1, "stream: error", "field", known, 0);
  args sub = {L, "stream: error", lua_gettop(L), a->d};
  opt_integer(&sub, "status", "status", 100, 599, NULL);
  opt_string(&sub, "code", "code");
  opt_string(&sub, "type", "type");
  opt_string(&sub, "message", "message");
  lua_pop(L, 1);
  lua_pushinteger(L, 1);
  lua_setfield(L, a->d, "has_error");
}

/* stream{chunks=, content=, interval=, drop_after=, stall_after=, stall=,
   error_after=, error=, no_end=, no_terminator=, model=, usage=, headers=} */
static int l_stream(lua_State *L) {
  args a;
  args_begin(&a, L, "stream", stream_keys, 0);
  lua_Integer nchunks = -1;
  if (arg_get(&a, "chunks") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TTABLE)
      arg_bad(&a, "chunks", "a list of strings");
    int c = lua_gettop(L);
    lua_Integer count = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, c) != 0) {
      if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1)
        luaL_error(L, "stream: chunks must be a list of strings");
      if (lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "stream: chunks[%I] must be a string, got %s",
                   lua_tointeger(L, -2), luaL_typename(L, -1));
      if (lua_tointeger(L, -2) > max) max = lua_tointeger(L, -2);
      count++;
      lua_pop(L, 1);
    }
    if (count != max)
      luaL_error(L, "stream: chunks must be a list without holes");
    if (count > MAX_CHUNKS)
      luaL_error(L, "stream: more than %d chunks", MAX_CHUNKS);
    nchunks = count;
    lua_createtable(L, (int)count, 0);
    for (lua_Integer i = 1; i <= count; i++) {
      lua_rawgeti(L, c, i);
      lua_rawseti(L, -2, i);
    }
    lua_setfield(L, a.d, "chunks");
  }
  lua_pop(L, 1);
  if (opt_string(&a, "content", "content") && nchunks >= 0)
    luaL_error(L, "stream: give chunks or content, not both");
  opt_number(&a, "interval", "interval", 0, "a number of seconds >= 0");
  opt_integer(&a, "drop_after", "drop_after", 0, INT_MAX, NULL);
  int has_stall_after =
      opt_integer(&a, "stall_after", "stall_after", 0, INT_MAX, NULL);
  if (arg_get(&a, "stall") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER)
      arg_bad(&a, "stall", "a number of seconds (negative: forever)");
    if (!has_stall_after)
      luaL_error(L, "stream: 'stall' needs 'stall_after' (the chunk count "
                    "after which the stream stalls)");
    double s = lua_tonumber(L, -1);
    if (isnan(s))
      luaL_error(L, "stream: field 'stall' must be a number of seconds "
                    "(negative: forever), got nan");
    lua_pushnumber(L, s < 0 ? -1 : s);
    lua_setfield(L, a.d, "stall");
  }
  lua_pop(L, 1);
  int has_error_after =
      opt_integer(&a, "error_after", "error_after", 0, INT_MAX, NULL);
  stream_error(&a);
  lua_getfield(L, a.d, "has_error");
  int has_error = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (has_error && !has_error_after) {
    if (nchunks < 0)
      luaL_error(L, "stream: 'error' needs 'error_after' (the chunk count "
                    "after which the error event is sent)");
    lua_pushinteger(L, nchunks);
    lua_setfield(L, a.d, "error_after");
  }
  opt_bool(&a, "no_end", "no_end");
  opt_bool(&a, "no_terminator", "no_terminator");
  opt_string(&a, "model", "model");
  opt_usage(&a);
  opt_headers(&a);
  opt_tool_calls(&a);
  opt_incomplete(&a);
  return make_step(L, a.d, SIM_STEP_STREAM, 0);
}

static const char *const fail_keys[] = {
  "status", "code", "type", "message", "retry_after", "retry_after_ms",
  "retry_after_date", "headers", NULL};

/* fail{status=, code=, type=, message=, retry_after=, retry_after_ms=,
   retry_after_date=, headers=} */
static int l_fail(lua_State *L) {
  args a;
  args_begin(&a, L, "fail", fail_keys, 0);
  /* 1xx is an interim answer: a client would wait on for the real one. */
  if (!opt_integer(&a, "status", "status", 200, 599, NULL))
    luaL_error(L, "fail: field 'status' is required, as in fail{status = 503}");
  opt_string(&a, "code", "code");
  opt_string(&a, "type", "type");
  opt_string(&a, "message", "message");
  int ra = arg_get(&a, "retry_after");
  if (ra == LUA_TSTRING) {
    size_t len;
    const char *v = lua_tolstring(L, -1, &len);
    if (!is_header_value(v, len))
      luaL_error(L, "fail: retry_after has a line break or is too long");
    lua_setfield(L, a.d, "retry_after_raw");
  } else if (ra != LUA_TNIL) {
    lua_pop(L, 1);
    opt_number(&a, "retry_after", "retry_after", 0,
               "a number of seconds >= 0 (or a string sent as is)");
  } else {
    lua_pop(L, 1);
  }
  opt_number(&a, "retry_after_ms", "retry_after_ms", 0,
             "a number of milliseconds >= 0");
  /* An HTTP-date has a four-digit year: the range keeps it one. */
  if (opt_number_in(&a, "retry_after_date", "retry_after_date",
                    -SIM_RETRY_DATE_MAX, SIM_RETRY_DATE_MAX,
                    "a number of seconds ahead, between -1e9 and 1e9") &&
      ra != LUA_TNIL)
    luaL_error(L, "fail: give retry_after or retry_after_date, not both "
                  "(both are the Retry-After header)");
  opt_headers(&a);
  return make_step(L, a.d, SIM_STEP_FAIL, 0);
}

static const char *const bare_keys[] = {"headers", NULL};

/* hang{}, drop{}, reset{}: nothing to set but extra headers. */
static int bare_step(lua_State *L, const char *name, sim_step_kind kind) {
  args a;
  args_begin(&a, L, name, bare_keys, 0);
  opt_headers(&a);
  return make_step(L, a.d, kind, 0);
}

static int l_hang(lua_State *L) { return bare_step(L, "hang", SIM_STEP_HANG); }
static int l_drop(lua_State *L) { return bare_step(L, "drop", SIM_STEP_DROP); }
static int l_reset(lua_State *L) {
  return bare_step(L, "reset", SIM_STEP_RESET);
}

static const char *const h2_keys[] = {"code", "headers", NULL};

/* h2_reset{code=}, h2_goaway{code=}: code names an HTTP/2 error code
   (RFC 9113 7), lower case; a reset defaults to refused_stream (never
   processed: safe to retry), a GOAWAY to no_error. */
static int h2_step(lua_State *L, const char *name, int fault, const char *dflt) {
  static const struct { const char *name; unsigned code; } codes[] = {
      {"no_error", 0},       {"protocol_error", 1}, {"internal_error", 2},
      {"refused_stream", 7}, {"cancel", 8},         {"enhance_your_calm", 11}};
  args a;
  args_begin(&a, L, name, h2_keys, 0);
  const char *code = dflt;
  if (arg_get(&a, "code") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "%s: code must be a string (refused_stream, internal_error, ...)", name);
    code = lua_tostring(L, -1);
  }
  int found = -1;
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
    if (strcmp(codes[i].name, code) == 0) found = (int)i;
  if (found < 0)
    luaL_error(L, "%s: unknown code '%s' (no_error, protocol_error, internal_error, "
                  "refused_stream, cancel, enhance_your_calm)", name, code);
  lua_pop(L, 1);
  lua_pushinteger(L, fault);
  lua_setfield(L, a.d, "h2_fault");
  lua_pushinteger(L, (lua_Integer)codes[found].code);
  lua_setfield(L, a.d, "h2_code");
  opt_headers(&a);
  return make_step(L, a.d, SIM_STEP_H2, 0);
}
static int l_h2_reset(lua_State *L) { return h2_step(L, "h2_reset", SIM_H2_RST, "refused_stream"); }
static int l_h2_goaway(lua_State *L) { return h2_step(L, "h2_goaway", SIM_H2_GOAWAY, "no_error"); }

static const char *const h2_window_keys[] = {"step", "after", "stall", "headers", NULL};

/* h2_window{step, after=, stall=}: the step's HEADERS, then `after` bytes
   of its body, then no DATA for `stall` seconds (negative or absent:
   forever), as if the client's flow-control window were shut; the step
   defaults to chat{} and must have a body, as truncate's. */
static int l_h2_window(lua_State *L) {
  args a;
  args_begin(&a, L, "h2_window", h2_window_keys, 1);
  if (!opt_integer(&a, "after", "at", 0, INT_MAX, NULL)) {
    lua_pushinteger(L, 0);
    lua_setfield(L, a.d, "at");
  }
  if (arg_get(&a, "stall") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER || isnan(lua_tonumber(L, -1)))
      arg_bad(&a, "stall", "a number of seconds (negative: forever)");
    double s = lua_tonumber(L, -1);
    lua_pushnumber(L, s < 0 ? -1 : s);
    lua_setfield(L, a.d, "stall");
  }
  lua_pop(L, 1);
  lua_pushinteger(L, SIM_H2_WINDOW);
  lua_setfield(L, a.d, "h2_fault");
  opt_headers(&a);
  arg_step(&a, "step", 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    push_plain_step(L, SIM_STEP_CHAT);
  }
  sim_step_kind k = sim__lua_step_kind(L, -1);
  if (k != SIM_STEP_CHAT && k != SIM_STEP_FAIL && k != SIM_STEP_GARBAGE)
    luaL_error(L, "h2_window: can hold back chat, fail or garbage, not %s",
               sim__step_kind_name(k));
  return make_step(L, a.d, SIM_STEP_H2, -1);
}

static const char *const delay_keys[] = {"seconds", "step", "headers", NULL};

/* delay{seconds=, step=} or delay{2, chat{}}; the step defaults to chat{}. */
static int l_delay(lua_State *L) {
  args a;
  args_begin(&a, L, "delay", delay_keys, 2);
  int step_pos = 2;
  int t1 = lua_rawgeti(L, 1, 1);
  if (t1 == LUA_TNUMBER) {
    if (arg_get(&a, "seconds") != LUA_TNIL)
      luaL_error(L, "delay: the seconds are given twice (at [1] and as "
                    "'seconds')");
    lua_pop(L, 1);
    double v = lua_tonumber(L, -1);
    if (!isfinite(v) || v < 0)
      luaL_error(L, "delay: the seconds must be a number >= 0, got %f",
                 (lua_Number)v);
    lua_setfield(L, a.d, "seconds");
  } else {
    if (sim__lua_is_step(L, -1))
      step_pos = 1;
    else if (t1 != LUA_TNIL)
      luaL_error(L, "delay: [1] must be the seconds or the step, got %s",
                 luaL_typename(L, -1));
    lua_pop(L, 1);
    if (!opt_number(&a, "seconds", "seconds", 0, "a number of seconds >= 0"))
      luaL_error(L, "delay: the seconds are required, as in delay{2, chat{}}");
  }
  if (step_pos == 1) {
    if (lua_rawgeti(L, 1, 2) != LUA_TNIL)
      luaL_error(L, "delay: unexpected value at [2]");
    lua_pop(L, 1);
  }
  opt_headers(&a);
  arg_step(&a, "step", step_pos);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    push_plain_step(L, SIM_STEP_CHAT);
  }
  return make_step(L, a.d, SIM_STEP_DELAY, -1);
}

static const char *const truncate_keys[] = {"step", "at", "mode", "headers",
                                            NULL};

/* truncate{step, at=, mode="short-body"|"early-close"}; the step defaults
   to chat{} and must have a body: chat, fail or garbage. */
static int l_truncate(lua_State *L) {
  args a;
  args_begin(&a, L, "truncate", truncate_keys, 1);
  if (!opt_integer(&a, "at", "at", 0, INT_MAX, NULL))
    luaL_error(L, "truncate: field 'at' (bytes of the body sent) is required");
  if (arg_get(&a, "mode") != LUA_TNIL) {
    const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    if (strcmp(m, "short-body") != 0 && strcmp(m, "early-close") != 0)
      luaL_error(L, "truncate: mode must be \"short-body\" or \"early-close\"");
    lua_pushinteger(L, strcmp(m, "early-close") == 0);
    lua_setfield(L, a.d, "early_close");
  }
  lua_pop(L, 1);
  opt_headers(&a);
  arg_step(&a, "step", 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    push_plain_step(L, SIM_STEP_CHAT);
  }
  sim_step_kind k = sim__lua_step_kind(L, -1);
  if (k != SIM_STEP_CHAT && k != SIM_STEP_FAIL && k != SIM_STEP_GARBAGE)
    luaL_error(L, "truncate: can cut chat, fail or garbage, not %s",
               sim__step_kind_name(k));
  return make_step(L, a.d, SIM_STEP_TRUNCATE, -1);
}

static const char *const garbage_keys[] = {"body", "headers", NULL};

/* garbage{body=}: a 200 whose body is not JSON. */
static int l_garbage(lua_State *L) {
  args a;
  args_begin(&a, L, "garbage", garbage_keys, 0);
  opt_string(&a, "body", "body");
  opt_headers(&a);
  return make_step(L, a.d, SIM_STEP_GARBAGE, 0);
}

static const char *const effect_keys[] = {"apply", "respond", "headers", NULL};

/* effect{apply=true|false, respond="ok"|"drop"|"reset"|"hang"|step} */
static int l_effect(lua_State *L) {
  args a;
  args_begin(&a, L, "effect", effect_keys, 0);
  opt_bool(&a, "apply", "apply");
  opt_headers(&a);
  int next = 0;
  int t = arg_get(&a, "respond");
  if (t == LUA_TSTRING) {
    const char *r = lua_tostring(L, -1);
    if (strcmp(r, "ok") == 0) {
      /* a normal answer: no wrapped step */
    } else if (strcmp(r, "drop") == 0) {
      push_plain_step(L, SIM_STEP_DROP);
      next = lua_gettop(L);
    } else if (strcmp(r, "reset") == 0) {
      push_plain_step(L, SIM_STEP_RESET);
      next = lua_gettop(L);
    } else if (strcmp(r, "hang") == 0) {
      push_plain_step(L, SIM_STEP_HANG);
      next = lua_gettop(L);
    } else {
      luaL_error(L, "effect: respond must be \"ok\", \"drop\", \"reset\", "
                    "\"hang\" or a step, got \"%s\"", r);
    }
  } else if (t != LUA_TNIL) {
    if (!sim__lua_is_step(L, -1))
      arg_bad(&a, "respond", "\"ok\", \"drop\", \"reset\", \"hang\" or a step");
    if (sim__lua_step_has_effect(L, -1))
      luaL_error(L, "effect: respond cannot be another effect{}");
    next = lua_gettop(L);
  }
  return make_step(L, a.d, SIM_STEP_EFFECT, next);
}

static const char *const upstream_keys[] = {
  "delay", "truncate", "drop_after", "error_after", "stall_after", "stall",
  "cut_arguments", "error", NULL};

/* upstream{delay=, truncate=, drop_after=, error_after=, stall_after=,
   stall=, cut_arguments=, error=}: the attempt goes to the real provider
   (serve --upstream URL) and the faults named are played on its answer.
   Frame counts are SSE events; on an answer that is not a stream only
   delay and truncate apply (docs/upstream.md). */
static int l_upstream(lua_State *L) {
  args a;
  args_begin(&a, L, "upstream", upstream_keys, 0);
  opt_number(&a, "delay", "seconds", 0, "a number of seconds >= 0");
  opt_integer(&a, "truncate", "cut_at", 0, INT_MAX, NULL);
  opt_integer(&a, "drop_after", "drop_after", 0, INT_MAX, NULL);
  int has_stall_after = opt_integer(&a, "stall_after", "stall_after", 0, INT_MAX, NULL);
  if (arg_get(&a, "stall") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER)
      arg_bad(&a, "stall", "a number of seconds (negative: until the client gives up)");
    if (!has_stall_after)
      luaL_error(L, "upstream: 'stall' needs 'stall_after' (the frame count "
                    "after which the answer stalls)");
    double s = lua_tonumber(L, -1);
    if (isnan(s))
      luaL_error(L, "upstream: field 'stall' must be a number of seconds, got nan");
    lua_pushnumber(L, s < 0 ? -1 : s);
    lua_setfield(L, a.d, "stall");
  }
  lua_pop(L, 1);
  int has_error_after = opt_integer(&a, "error_after", "error_after", 0, INT_MAX, NULL);
  if (arg_get(&a, "error") != LUA_TNIL && !has_error_after)
    luaL_error(L, "upstream: 'error' needs 'error_after' (the frame count "
                  "after which the error event is sent)");
  lua_pop(L, 1);
  if (has_error_after) {
    /* the error event's fields, as stream{}'s */
    static const char *const known[] = {"status", "code", "type", "message", NULL};
    if (arg_get(&a, "error") != LUA_TNIL) {
      if (lua_type(L, -1) != LUA_TTABLE) arg_bad(&a, "error", "a table");
      check_keys(L, -1, "upstream: error", "field", known, 0);
      args sub = {L, "upstream: error", lua_gettop(L), a.d};
      opt_integer(&sub, "status", "status", 100, 599, NULL);
      opt_string(&sub, "code", "code");
      opt_string(&sub, "type", "type");
      opt_string(&sub, "message", "message");
    }
    lua_pop(L, 1);
  }
  opt_bool(&a, "cut_arguments", "cut_arguments");
  return make_step(L, a.d, SIM_STEP_UPSTREAM, 0);
}

/* --------------------------------------------------- the step metatable */

/* step.kind reads the kind's name; other fields read their canonical
   values (tables as copies, so the step stays unchanged). */
static int step_index(lua_State *L) {
  step_data(L, 1);
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  const char *k = lua_tostring(L, 2);
  if (strcmp(k, "kind") == 0) {
    lua_getfield(L, -1, "kind");
    lua_pushstring(L, sim__step_kind_name((sim_step_kind)lua_tointeger(L, -1)));
    return 1;
  }
  if (strcmp(k, "depth") == 0 || strcmp(k, "fx") == 0 ||
      strcmp(k, "has_error") == 0)
    return 0;
  lua_getfield(L, -1, k);
  if (lua_type(L, -1) == LUA_TTABLE) {
    int src = lua_gettop(L);
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, src) != 0) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, -4);
    }
  }
  return 1;
}

static int step_newindex(lua_State *L) {
  return luaL_error(L, "steps are read-only: build a new one instead");
}

static int step_tostring(lua_State *L) {
  lua_pushfstring(L, "%s{...}", sim__step_kind_name(sim__lua_step_kind(L, 1)));
  return 1;
}

static const luaL_Reg step_ctors[] = {
  {"chat", l_chat},         {"stream", l_stream},   {"fail", l_fail},
  {"hang", l_hang},         {"delay", l_delay},     {"drop", l_drop},
  {"reset", l_reset},       {"truncate", l_truncate},
  {"h2_reset", l_h2_reset}, {"h2_goaway", l_h2_goaway}, {"h2_window", l_h2_window},
  {"garbage", l_garbage},   {"effect", l_effect},   {"upstream", l_upstream},
  {NULL, NULL},
};

/* The step constructor nearest a misspelt global name; see lua_int.h. */
const char *sim__lua_step_suggest(const char *name) {
  const char *names[sizeof step_ctors / sizeof step_ctors[0] + 1];
  size_t n = 0;
  for (const luaL_Reg *r = step_ctors; r->name != NULL; r++) names[n++] = r->name;
  names[n++] = "scenario";
  names[n] = NULL;
  return fb_suggest(name, names, NULL);
}

static const luaL_Reg step_meta[] = {
  {"__index", step_index},
  {"__newindex", step_newindex},
  {"__tostring", step_tostring},
  {NULL, NULL},
};

/* Defines the step constructors and the step metatables. */
void sim__lua_open_steps(lua_State *L) {
  luaL_newmetatable(L, SIM_LUA_STEP_MT);
  luaL_setfuncs(L, step_meta, 0);
  lua_pushliteral(L, "step");
  lua_setfield(L, -2, "__metatable"); /* getmetatable(step) == "step" */
  lua_pop(L, 1);

  luaL_newmetatable(L, BLOB_MT);
  lua_pushcfunction(L, blobref_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);

  for (const luaL_Reg *r = step_ctors; r->name != NULL; r++) {
    lua_pushcfunction(L, r->func);
    lua_setglobal(L, r->name);
  }
}

/* ---------------------------------------------------------- conversion */

static void oom(lua_State *L) { luaL_error(L, "out of memory"); }

static char *dup_lua(lua_State *L, int idx) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  char *p = malloc(len + 1);
  if (p == NULL) oom(L);
  memcpy(p, s, len + 1);
  return p;
}

/* __gc of a cache entry: drops the entry's reference to its blob. */
static int blobref_gc(lua_State *L) {
  sim_blob **box = lua_touserdata(L, 1);
  if (box != NULL && *box != NULL) {
    sim__blob_unref(*box);
    *box = NULL;
  }
  return 0;
}

/* The blob of the string at idx: a copy of its bytes. */
static sim_blob *blob_of_string(lua_State *L, int idx) {
  size_t len;
  const char *p = lua_tolstring(L, idx, &len);
  return sim__blob_new(p, len);
}

/* The blob of the chunk list at idx (checked by stream{}: strings, no
   holes): every chunk NUL-terminated, in order. */
static sim_blob *blob_of_chunks(lua_State *L, int idx) {
  int n = (int)lua_rawlen(L, idx);
  size_t total = 0;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    total += lua_rawlen(L, -1) + 1;
    lua_pop(L, 1);
  }
  char *buf = malloc(total > 0 ? total : 1);
  if (buf == NULL) return NULL;
  size_t at = 0;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    size_t len;
    const char *p = lua_tolstring(L, -1, &len);
    memcpy(buf + at, p, len + 1);
    at += len + 1;
    lua_pop(L, 1);
  }
  sim_blob *b = sim__blob_new(buf, total);
  free(buf);
  return b;
}

/* The cache table, made on first use, pushed on the stack. */
static int cache_table(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, BLOB_CACHE) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 0, BLOB_CACHE_MAX);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, BLOB_CACHE);
  }
  return lua_gettop(L);
}

/* Caches blob b (taking its reference) under the value at idx, starting the
   cache over when full. Returns a new reference the caller owns. */
static sim_blob *cache_put(lua_State *L, int idx, sim_blob *b) {
  idx = lua_absindex(L, idx);
  int cache = cache_table(L);
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, cache) != 0) {
    n++;
    lua_pop(L, 1);
  }
  if (n >= BLOB_CACHE_MAX) { /* start over; the old entries are collected */
    lua_createtable(L, 0, BLOB_CACHE_MAX);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, BLOB_CACHE);
    lua_replace(L, cache);
  }
  sim_blob **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = b; /* the box owns this reference from here on, even on an error */
  luaL_setmetatable(L, BLOB_MT);
  lua_pushvalue(L, idx);
  lua_pushvalue(L, -2);
  lua_rawset(L, cache);
  lua_pop(L, 2);
  return sim__blob_ref(b);
}

/*
 * The shared blob of the large value at idx, made on first use by make
 * (NULL: look it up only, NULL when absent): a cache in the registry maps
 * the value (kept alive by the cache) to a userdata holding one reference,
 * so every step built from the same value, at load or per request, shares
 * one copy. Returns a reference the caller owns.
 */
static sim_blob *cached_blob(lua_State *L, int idx, sim_blob *(*make)(lua_State *, int)) {
  idx = lua_absindex(L, idx);
  int cache = cache_table(L);
  lua_pushvalue(L, idx);
  if (lua_rawget(L, cache) == LUA_TUSERDATA) {
    sim_blob *b = *(sim_blob **)lua_touserdata(L, -1);
    lua_pop(L, 2);
    return b ? sim__blob_ref(b) : NULL;
  }
  lua_pop(L, 2);
  if (make == NULL) return NULL;
  sim_blob *b = make(L, idx);
  if (b == NULL) oom(L);
  return cache_put(L, idx, b);
}

/* 1 when blob b holds exactly the n chunks of the list at idx. */
static int chunks_equal(lua_State *L, int idx, int n, const sim_blob *b) {
  const char *p = sim__blob_data(b), *end = p + sim__blob_len(b);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    size_t len;
    const char *c = lua_tolstring(L, -1, &len);
    int same = (size_t)(end - p) > len && memcmp(p, c, len) == 0 && p[len] == '\0';
    lua_pop(L, 1);
    if (!same) return 0;
    p += len + 1;
  }
  return p == end;
}

/*
 * The shared blob of the chunk list at idx (n chunks). A stream{} made per
 * request holds a fresh copy of its list each time, so the cache is keyed by
 * the list's content: a hash names the entry, and a hit is checked chunk by
 * chunk (a different list with the same hash gets its own blob). Returns a
 * reference the caller owns.
 */
static sim_blob *chunks_blob(lua_State *L, int idx, int n) {
  uint64_t h = 1469598103934665603ull;
  size_t total = 0;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    size_t len;
    const char *c = lua_tolstring(L, -1, &len);
    for (size_t k = 0; k < len; k++) h = (h ^ (unsigned char)c[k]) * 1099511628211ull;
    h = (h ^ 0x100u) * 1099511628211ull; /* the chunk boundary */
    total += len;
    lua_pop(L, 1);
  }
  lua_pushfstring(L, "\x01chunks:%d:%I:%p", n, (lua_Integer)total, (void *)(uintptr_t)h);
  int key = lua_gettop(L);
  sim_blob *b = cached_blob(L, key, NULL);
  if (b != NULL && !chunks_equal(L, idx, n, b)) { /* a collision: replace the entry */
    sim__blob_unref(b);
    b = NULL;
  }
  if (b == NULL) {
    sim_blob *made = blob_of_chunks(L, idx);
    if (made == NULL) oom(L);
    b = cache_put(L, key, made);
  }
  lua_settop(L, key - 1);
  return b;
}

/* A text value (content, body, message) at v: shared as a blob when large,
   else copied. */
static void text_at(lua_State *L, int v, char **text, sim_blob **blob) {
  if (lua_type(L, v) != LUA_TSTRING) return;
  if (lua_rawlen(L, v) >= SIM_BLOB_MIN) {
    *blob = cached_blob(L, v, blob_of_string);
    *text = (char *)sim__blob_data(*blob);
  } else {
    *text = dup_lua(L, v);
  }
}

/* A string value at v, copied, or NULL. */
static char *str_at(lua_State *L, int v) {
  return lua_type(L, v) == LUA_TSTRING ? dup_lua(L, v) : NULL;
}

static int int_at(lua_State *L, int v, int *out) {
  int has = lua_type(L, v) == LUA_TNUMBER;
  if (has) *out = (int)lua_tointeger(L, v);
  return has;
}

static int num_at(lua_State *L, int v, double *out) {
  int has = lua_type(L, v) == LUA_TNUMBER;
  if (has) *out = (double)lua_tonumber(L, v);
  return has;
}

/* A string field of the table at t, copied, or NULL. */
static char *field_str(lua_State *L, int t, const char *key) {
  lua_getfield(L, t, key);
  char *v = str_at(L, -1);
  lua_pop(L, 1);
  return v;
}

static int cmp_header(const void *a, const void *b) {
  const sim_header *x = a, *y = b;
  return strcmp(x->name, y->name);
}

static void convert(lua_State *L, int idx, sim_step **slot);

/* tool_calls: the list at v. */
static void tool_calls_at(lua_State *L, sim_step *s, int v) {
  if (lua_type(L, v) != LUA_TTABLE) return;
  int n = (int)lua_rawlen(L, v);
  s->tool_calls = calloc(n > 0 ? (size_t)n : 1, sizeof *s->tool_calls);
  if (s->tool_calls == NULL) oom(L);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, v, i);
    int t = lua_gettop(L);
    sim_tool_call *tc = &s->tool_calls[s->ntool_calls++];
    tc->id = field_str(L, t, "id");
    tc->name = field_str(L, t, "name");
    tc->arguments = field_str(L, t, "arguments");
    if (tc->id == NULL || tc->name == NULL || tc->arguments == NULL) oom(L);
    lua_pop(L, 1);
  }
}

/* chunks: the list at v, one shared copy when large. */
static void chunks_at(lua_State *L, sim_step *s, int v) {
  if (lua_type(L, v) != LUA_TTABLE) return;
  int n = (int)lua_rawlen(L, v);
  s->chunks = calloc(n > 0 ? (size_t)n : 1, sizeof *s->chunks);
  if (s->chunks == NULL) oom(L);
  size_t total = 0;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, v, i);
    total += lua_rawlen(L, -1);
    lua_pop(L, 1);
  }
  if (total >= SIM_BLOB_MIN) { /* one shared copy of the whole list */
    s->chunks_blob = chunks_blob(L, v, n);
    const char *p = sim__blob_data(s->chunks_blob);
    for (; s->nchunks < n; s->nchunks++) {
      s->chunks[s->nchunks] = (char *)p;
      lua_rawgeti(L, v, s->nchunks + 1);
      p += lua_rawlen(L, -1) + 1; /* a chunk may hold a NUL */
      lua_pop(L, 1);
    }
  }
  for (int i = 1; s->chunks_blob == NULL && i <= n; i++) {
    lua_rawgeti(L, v, i);
    s->chunks[s->nchunks] = dup_lua(L, -1);
    s->nchunks++;
    lua_pop(L, 1);
  }
}

/* headers: the name -> value table at v, sorted by name. */
static void headers_at(lua_State *L, sim_step *s, int v) {
  if (lua_type(L, v) != LUA_TTABLE) return;
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, v) != 0) {
    lua_pop(L, 1);
    n++;
  }
  s->headers = calloc(n > 0 ? (size_t)n : 1, sizeof *s->headers);
  if (s->headers == NULL) oom(L);
  int top = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, v) != 0 && s->nheaders < n) {
    sim_header *hd = &s->headers[s->nheaders++];
    hd->name = dup_lua(L, -2);
    hd->value = dup_lua(L, -1);
    lua_pop(L, 1);
  }
  lua_settop(L, top);
  qsort(s->headers, (size_t)s->nheaders, sizeof *s->headers, cmp_header);
}

/* Copies field k (len bytes), its value at v, into s. Names the
   constructors do not set (depth, fx, has_error) are skipped. */
static void convert_field(lua_State *L, sim_step *s, const char *k, size_t len, int v) {
#define IS(name) (len == sizeof name - 1 && memcmp(k, name, len) == 0)
  if (IS("content")) text_at(L, v, &s->content, &s->content_blob);
  else if (IS("model")) s->model = str_at(L, v);
  else if (IS("usage_in")) int_at(L, v, &s->usage_in);
  else if (IS("usage_out")) int_at(L, v, &s->usage_out);
  else if (IS("finish")) int_at(L, v, &s->finish);
  else if (IS("tool_calls")) tool_calls_at(L, s, v);
  else if (IS("chunks")) chunks_at(L, s, v);
  else if (IS("interval")) num_at(L, v, &s->interval);
  else if (IS("drop_after")) int_at(L, v, &s->drop_after);
  else if (IS("stall_after")) int_at(L, v, &s->stall_after);
  else if (IS("stall")) num_at(L, v, &s->stall);
  else if (IS("error_after")) int_at(L, v, &s->error_after);
  else if (IS("no_end")) int_at(L, v, &s->no_end);
  else if (IS("no_terminator")) int_at(L, v, &s->no_terminator);
  else if (IS("h2_fault")) int_at(L, v, &s->h2_fault);
  else if (IS("h2_code")) {
    int code = 0;
    if (int_at(L, v, &code)) s->h2_code = (unsigned)code;
  }
  else if (IS("status")) int_at(L, v, &s->status);
  else if (IS("code")) s->code = str_at(L, v);
  else if (IS("type")) s->type = str_at(L, v);
  else if (IS("message")) text_at(L, v, &s->message, &s->message_blob);
  else if (IS("retry_after")) s->has_retry_after = num_at(L, v, &s->retry_after);
  else if (IS("retry_after_raw")) s->retry_after_raw = str_at(L, v);
  else if (IS("retry_after_ms")) s->has_retry_after_ms = num_at(L, v, &s->retry_after_ms);
  else if (IS("retry_after_date"))
    s->has_retry_after_date = num_at(L, v, &s->retry_after_date);
  else if (IS("headers")) headers_at(L, s, v);
  else if (IS("seconds")) num_at(L, v, &s->seconds);
  else if (IS("at")) {
    int at = 0;
    if (int_at(L, v, &at)) s->at = at;
  } else if (IS("early_close")) int_at(L, v, &s->early_close);
  else if (IS("body")) text_at(L, v, &s->body, &s->body_blob);
  else if (IS("apply")) int_at(L, v, &s->apply);
  else if (IS("cut_at")) {
    int at = 0;
    if (int_at(L, v, &at)) s->cut_at = at;
  } else if (IS("cut_arguments")) int_at(L, v, &s->cut_arguments);
  else if (IS("next") && lua_type(L, v) == LUA_TUSERDATA) convert(L, v, &s->next);
#undef IS
}

/* Copies the field table of the step at idx into *slot, which owns the step
   from its allocation on, so a Lua error at any point leaks nothing. One
   pass over the fields present (a step sets a few of some thirty). */
static void convert(lua_State *L, int idx, sim_step **slot) {
  luaL_checkstack(L, 8, "steps nest too deep");
  idx = lua_absindex(L, idx);
  step_data(L, idx);
  int d = lua_gettop(L);
  int kind = 0;
  lua_getfield(L, d, "kind");
  int_at(L, -1, &kind);
  lua_pop(L, 1);
  sim_step *s = sim__step_new((sim_step_kind)kind);
  if (s == NULL) oom(L);
  *slot = s;
  lua_pushnil(L);
  while (lua_next(L, d) != 0) {
    size_t len;
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &len) : NULL;
    if (k != NULL) convert_field(L, s, k, len, lua_gettop(L));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Converts the step at idx into *slot; see lua_int.h. */
void sim__lua_step_convert(lua_State *L, int idx, sim_step **slot) {
  idx = lua_absindex(L, idx);
  if (!sim__lua_is_step(L, idx)) luaL_error(L, "not a step");
  convert(L, idx, slot);
}
