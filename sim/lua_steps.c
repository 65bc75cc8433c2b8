/*
 * lua_steps.c - the step constructors (chat{}, fail{}, ...) and the
 * conversion of a Lua step into a sim_step.
 *
 * A constructor checks every field when the scenario calls it, so a typo
 * fails at load with the scenario's line, and returns a read-only step: a
 * userdata that holds the sim_step itself (an lstep), filled in as the
 * fields are checked, in one pass (issue 30: the fields used to go into a
 * Lua table first and be read back from it on every request). Every
 * pointer in it points into memory the userdata keeps alive: its strings
 * are Lua strings held as its user values (one slot per field, ANCHORS),
 * its arrays live in the block after the struct, and a wrapped step is the
 * lstep of another step, held the same way. Nothing a scenario can reach
 * can change any of it, so converting a step for the server only copies.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
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
#define MAX_TOOL_CALLS 64

/* ------------------------------------------------------------ the lstep */

/* The user value slot that keeps each kind of pointer alive: a string
   field's Lua string, the private tables behind the arrays, the wrapped
   step. The most used first: a step has user values up to the last slot
   it uses (each is 16 bytes more for the collector to count). */
enum { A_CONTENT = 1, A_NEXT, A_MODEL, A_MESSAGE, A_CODE, A_TYPE, A_RA_RAW, A_BODY,
       A_HEADERS, A_TOOLS, A_CHUNKS, NANCHORS = A_CHUNKS };

/* The fields a step can be given, in canonical form (named as the sim_step
   fields, as `step.field` reads them). */
enum {
  F_CONTENT, F_MODEL, F_USAGE_IN, F_USAGE_OUT, F_FINISH, F_TOOL_CALLS, F_CHUNKS,
  F_INTERVAL, F_DROP_AFTER, F_STALL_AFTER, F_STALL, F_ERROR_AFTER, F_NO_END,
  F_NO_TERMINATOR, F_H2_FAULT, F_H2_CODE, F_STATUS, F_CODE, F_TYPE, F_MESSAGE,
  F_RETRY_AFTER, F_RETRY_AFTER_RAW, F_RETRY_AFTER_MS, F_RETRY_AFTER_DATE, F_HEADERS,
  F_SECONDS, F_AT, F_EARLY_CLOSE, F_BODY, F_APPLY, F_CUT_AT, F_CUT_ARGUMENTS, F_NEXT, NFIELDS
};

/* How a field is stored in sim_step. */
typedef enum { T_INT, T_UINT, T_LONG, T_NUM, T_STR, T_TABLE, T_STEP } ftype;

/* One field: its name, how and where it is stored, its anchor slot. */
typedef struct fdesc {
  const char *name;
  ftype type;
  size_t off; /* in sim_step */
  int anchor; /* T_STR, T_TABLE, T_STEP: its user value */
} fdesc;

#define FD(f, name, type, member, anchor) [f] = {name, type, offsetof(sim_step, member), anchor}
static const fdesc FIELDS[NFIELDS] = {
    FD(F_CONTENT, "content", T_STR, content, A_CONTENT),
    FD(F_MODEL, "model", T_STR, model, A_MODEL),
    FD(F_USAGE_IN, "usage_in", T_INT, usage_in, 0),
    FD(F_USAGE_OUT, "usage_out", T_INT, usage_out, 0),
    FD(F_FINISH, "finish", T_INT, finish, 0),
    FD(F_TOOL_CALLS, "tool_calls", T_TABLE, tool_calls, A_TOOLS),
    FD(F_CHUNKS, "chunks", T_TABLE, chunks, A_CHUNKS),
    FD(F_INTERVAL, "interval", T_NUM, interval, 0),
    FD(F_DROP_AFTER, "drop_after", T_INT, drop_after, 0),
    FD(F_STALL_AFTER, "stall_after", T_INT, stall_after, 0),
    FD(F_STALL, "stall", T_NUM, stall, 0),
    FD(F_ERROR_AFTER, "error_after", T_INT, error_after, 0),
    FD(F_NO_END, "no_end", T_INT, no_end, 0),
    FD(F_NO_TERMINATOR, "no_terminator", T_INT, no_terminator, 0),
    FD(F_H2_FAULT, "h2_fault", T_INT, h2_fault, 0),
    FD(F_H2_CODE, "h2_code", T_UINT, h2_code, 0),
    FD(F_STATUS, "status", T_INT, status, 0),
    FD(F_CODE, "code", T_STR, code, A_CODE),
    FD(F_TYPE, "type", T_STR, type, A_TYPE),
    FD(F_MESSAGE, "message", T_STR, message, A_MESSAGE),
    FD(F_RETRY_AFTER, "retry_after", T_NUM, retry_after, 0),
    FD(F_RETRY_AFTER_RAW, "retry_after_raw", T_STR, retry_after_raw, A_RA_RAW),
    FD(F_RETRY_AFTER_MS, "retry_after_ms", T_NUM, retry_after_ms, 0),
    FD(F_RETRY_AFTER_DATE, "retry_after_date", T_NUM, retry_after_date, 0),
    FD(F_HEADERS, "headers", T_TABLE, headers, A_HEADERS),
    FD(F_SECONDS, "seconds", T_NUM, seconds, 0),
    FD(F_AT, "at", T_LONG, at, 0),
    FD(F_EARLY_CLOSE, "early_close", T_INT, early_close, 0),
    FD(F_BODY, "body", T_STR, body, A_BODY),
    FD(F_APPLY, "apply", T_INT, apply, 0),
    FD(F_CUT_AT, "cut_at", T_LONG, cut_at, 0),
    FD(F_CUT_ARGUMENTS, "cut_arguments", T_INT, cut_arguments, 0),
    FD(F_NEXT, "next", T_STEP, next, A_NEXT),
};
#undef FD

/* A step as Lua holds it (the userdata's block): the sim_step, which of its
   fields were given, and what a constructor asks of a wrapped step. The
   step's arrays (headers, tool calls, chunk pointers) follow it. */
typedef struct lstep {
  sim_step s;
  uint64_t set;  /* bit f: field f was given (an unset one reads nil) */
  int depth;     /* steps in the chain, this one included */
  int fx;        /* 1: this step is or wraps an effect{} */
  int has_error; /* stream: an error = {...} was given */
} lstep;

/* The lstep of the step at idx, NULL when the value is not a step: its
   metatable is the step metatable, told by address (sim_lua_fast). */
static lstep *lstep_at(lua_State *L, int idx) {
  lstep *ls = lua_touserdata(L, idx);
  if (ls == NULL || !lua_getmetatable(L, idx)) return NULL;
  int same = lua_topointer(L, -1) == sim__lua_fast(L)->step_mt;
  lua_pop(L, 1);
  return same ? ls : NULL;
}

/* ------------------------------------------------------ field checking */

/* One constructor call being checked: the argument table is at index t;
   the step is built in st, its anchors kept in the stack slots base + 1 ..
   base + NANCHORS until the userdata takes them. */
typedef struct args {
  lua_State *L;
  const char *step; /* the constructor's name, for messages */
  int t;
  const char *const *known; /* the fields of t it may have */
  uint64_t present;         /* which of them it has (check_keys) */
  int base;
  unsigned anchored;        /* bit k: anchor slot k holds a value */
  lstep st;
  sim_header hdr[MAX_HEADERS]; /* into the private headers table */
  sim_tool_call tc[MAX_TOOL_CALLS]; /* into the private tool-call tables */
} args;

/* The known name closest to `key` when it is a likely typo, else NULL: the
   one rule of common/suggest.h. */
const char *sim__lua_suggest(const char *key, const char *const *known) {
  return fb_suggest(key, known, NULL);
}

/*
 * Raises "what: unknown field 'key'" (with a suggestion) for any string key
 * of the table at idx not in `known`, and for positional items beyond npos.
 * Returns which of `known` are there (bit i: known[i]), so the fields that
 * are not are never looked up.
 */
static uint64_t check_keys(lua_State *L, int idx, const char *what,
                           const char *noun, const char *const *known, int npos) {
  uint64_t present = 0;
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -1);
      int ok = 0;
      for (int i = 0; known[i] != NULL && !ok; i++)
        if (strcmp(k, known[i]) == 0) {
          ok = 1;
          present |= 1ull << i;
        }
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
  return present;
}

/* Empty anchor slots above the stack's top, and the step at sim__step_new's
   defaults, for a constructor called `step`. */
static void args_init(args *a, lua_State *L, const char *step) {
  a->L = L;
  a->step = step;
  a->base = lua_gettop(L);
  luaL_checkstack(L, NANCHORS + 8, "step");
  lua_settop(L, a->base + NANCHORS); /* the slots, nil, in one call */
  a->anchored = 0;
  memset(&a->st, 0, sizeof a->st);
  sim_step *s = &a->st.s;
  s->usage_in = s->usage_out = -1;
  s->drop_after = s->stall_after = s->error_after = -1;
  s->stall = -1;
  s->apply = 1;
  s->cut_at = -1;
}

/* Starts checking a constructor call: the argument must be a table (or
   nothing, as in hang()). Leaves the argument at index 1 and the anchor
   slots above it. */
static void args_begin(args *a, lua_State *L, const char *step,
                       const char *const *known, int npos) {
  if (lua_isnoneornil(L, 1)) {
    lua_settop(L, 0);
    lua_newtable(L);
  } else if (lua_type(L, 1) != LUA_TTABLE) {
    luaL_error(L, "%s: expected a table of fields, as in %s{...}, got %s",
               step, step, luaL_typename(L, 1));
  }
  if (lua_gettop(L) > 1)
    luaL_error(L, "%s: takes one table, as in %s{...}", step, step);
  a->present = check_keys(L, 1, step, "field", known, npos);
  a->known = known;
  a->t = 1;
  args_init(a, L, step);
}

/* The place of field f in the step being built. */
static void *field_at(args *a, int f) { return (char *)&a->st.s + FIELDS[f].off; }

/* Sets integer (or unsigned, or long) field f to v. */
static void set_int(args *a, int f, lua_Integer v) {
  switch (FIELDS[f].type) {
  case T_UINT: *(unsigned *)field_at(a, f) = (unsigned)v; break;
  case T_LONG: *(long *)field_at(a, f) = (long)v; break;
  default: *(int *)field_at(a, f) = (int)v; break;
  }
  a->st.set |= 1ull << f;
}

/* Sets number field f to v; the Retry-After forms note that they are set. */
static void set_num(args *a, int f, double v) {
  *(double *)field_at(a, f) = v;
  a->st.set |= 1ull << f;
  if (f == F_RETRY_AFTER) a->st.s.has_retry_after = 1;
  else if (f == F_RETRY_AFTER_MS) a->st.s.has_retry_after_ms = 1;
  else if (f == F_RETRY_AFTER_DATE) a->st.s.has_retry_after_date = 1;
}

/* Keeps the value on top (a string, a private table or a step: popped) in
   field f's anchor slot; returns where it is now. */
static int anchor(args *a, int f) {
  int slot = a->base + FIELDS[f].anchor;
  lua_replace(a->L, slot);
  a->st.set |= 1ull << f;
  a->anchored |= 1u << FIELDS[f].anchor;
  return slot;
}

/* Sets string field f to the string on top (popped). */
static void set_str(args *a, int f) {
  int slot = anchor(a, f);
  *(const char **)field_at(a, f) = lua_tostring(a->L, slot);
}

/* 1 when the arguments do not have field `key`, a known field that
   check_keys did not see: nothing to look up (most fields of most calls). */
static int arg_absent(const args *a, const char *key) {
  int i = 0;
  while (a->known[i] != NULL && a->known[i] != key) i++; /* one literal, most often */
  if (a->known[i] == NULL)
    for (i = 0; a->known[i] != NULL && strcmp(a->known[i], key) != 0;) i++;
  return a->known[i] != NULL && !(a->present & (1ull << i));
}

/* Pushes field `key` of the arguments; returns its type. An absent field
   is nil without a lookup. */
static int arg_get(args *a, const char *key) {
  if (arg_absent(a, key)) {
    lua_pushnil(a->L);
    return LUA_TNIL;
  }
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

/* An optional string field, kept as field f. */
static int opt_string(args *a, const char *key, int f) {
  if (arg_absent(a, key)) return 0;
  if (arg_get(a, key) == LUA_TNIL) {
    lua_pop(a->L, 1);
    return 0;
  }
  if (lua_type(a->L, -1) != LUA_TSTRING) arg_bad(a, key, "a string");
  set_str(a, f);
  return 1;
}

/* An optional integer field within [min, max], kept as field f. */
static int opt_integer(args *a, const char *key, int f, lua_Integer min, lua_Integer max) {
  if (arg_absent(a, key)) return 0;
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
  set_int(a, f, v);
  return 1;
}

/* An optional number field within [min, max], kept as field f. */
static int opt_number_in(args *a, const char *key, int f, double min,
                         double max, const char *want) {
  if (arg_absent(a, key)) return 0;
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
  set_num(a, f, v);
  return 1;
}

/* An optional finite number field no smaller than min. */
static int opt_number(args *a, const char *key, int f, double min, const char *want) {
  return opt_number_in(a, key, f, min, HUGE_VAL, want);
}

/* An optional boolean field, kept as 0/1. */
static int opt_bool(args *a, const char *key, int f) {
  if (arg_absent(a, key)) return 0;
  if (arg_get(a, key) == LUA_TNIL) {
    lua_pop(a->L, 1);
    return 0;
  }
  if (lua_type(a->L, -1) != LUA_TBOOLEAN) arg_bad(a, key, "true or false");
  set_int(a, f, lua_toboolean(a->L, -1));
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

static int cmp_header(const void *a, const void *b) {
  const sim_header *x = a, *y = b;
  return strcmp(x->name, y->name);
}

/* headers = {name = value}: names are tokens, values strings or numbers.
   Kept in a private table (its strings are what hdr points into), sorted
   by name. */
static void opt_headers(args *a) {
  lua_State *L = a->L;
  if (arg_absent(a, "headers")) return;
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
  /* the private table's strings, named in hdr */
  n = 0;
  lua_pushnil(L);
  while (lua_next(L, h + 1) != 0) {
    a->hdr[n].name = (char *)lua_tostring(L, -2);
    a->hdr[n].value = (char *)lua_tostring(L, -1);
    n++;
    lua_pop(L, 1);
  }
  qsort(a->hdr, (size_t)n, sizeof a->hdr[0], cmp_header);
  a->st.s.nheaders = n;
  anchor(a, F_HEADERS);
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
  if (arg_absent(a, "usage")) return;
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
      set_int(a, i % 2 == 0 ? F_USAGE_IN : F_USAGE_OUT, v);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* tool_calls = { { name=, arguments = table | "raw text", id= }, ... }:
   kept as a private list of {id, name, arguments (JSON text)} that tc
   points into; ids default to "call_<n>" so a retried turn carries the
   same id. */
static void opt_tool_calls(args *a) {
  static const char *const known[] = {"name", "arguments", "id", NULL};
  lua_State *L = a->L;
  if (arg_absent(a, "tool_calls")) return;
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
    sim_tool_call *tc = &a->tc[i - 1];
    if (lua_getfield(L, c, "name") != LUA_TSTRING || lua_rawlen(L, -1) == 0)
      luaL_error(L, "%s: 'name' must be a non-empty string", what);
    tc->name = (char *)lua_tostring(L, -1);
    lua_setfield(L, -2, "name");
    int ty = lua_getfield(L, c, "id");
    if (ty == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushfstring(L, "call_%d", (int)i);
    } else if (ty != LUA_TSTRING) {
      luaL_error(L, "%s: 'id' must be a string", what);
    }
    tc->id = (char *)lua_tostring(L, -1);
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
    tc->arguments = (char *)lua_tostring(L, -1);
    lua_setfield(L, -2, "arguments");
    lua_rawseti(L, -3, i);
    lua_pop(L, 1);
  }
  a->st.s.ntool_calls = (int)n;
  anchor(a, F_TOOL_CALLS);
  lua_pop(L, 1);
}

/* incomplete = "max_output_tokens" | "content_filter": the answer ends cut
   short, in each API's words. */
static void opt_incomplete(args *a) {
  lua_State *L = a->L;
  if (arg_absent(a, "incomplete")) return;
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
  set_int(a, F_FINISH, f);
}

/* ------------------------------------------------------------ step values */

/* 1 if the value at idx is a step made by a constructor. */
int sim__lua_is_step(lua_State *L, int idx) { return lstep_at(L, idx) != NULL; }

/* The kind of the step at idx. */
sim_step_kind sim__lua_step_kind(lua_State *L, int idx) {
  lstep *ls = lstep_at(L, idx);
  return ls != NULL ? ls->s.kind : SIM_STEP_CHAT;
}

/* 1 if the step at idx is or wraps an effect{} step. */
int sim__lua_step_has_effect(lua_State *L, int idx) {
  lstep *ls = lstep_at(L, idx);
  return ls != NULL && ls->fx;
}

/* -1 when the value at idx is not a step, 1 a step that is or wraps an
   effect{}, 0 another step: both questions in one look. */
int sim__lua_step_check(lua_State *L, int idx) {
  lstep *ls = lstep_at(L, idx);
  return ls == NULL ? -1 : ls->fx != 0;
}

/* Makes the step the constructor built in a (its wrapped step at index
   next, or 0) and leaves it at the top: a userdata holding the lstep, its
   arrays after it, and the anchors as its user values. */
static int make_step(args *a, sim_step_kind kind, int next) {
  lua_State *L = a->L;
  lstep *st = &a->st;
  st->s.kind = kind;
  st->depth = 1;
  st->fx = kind == SIM_STEP_EFFECT;
  if (next != 0) {
    next = lua_absindex(L, next);
    lstep *inner = lstep_at(L, next);
    st->depth += inner->depth;
    st->fx |= inner->fx;
    if (st->depth > MAX_NEST)
      luaL_error(L, "%s: steps nest deeper than %d", sim__step_kind_name(kind), MAX_NEST);
    st->s.next = &inner->s;
    lua_pushvalue(L, next);
    anchor(a, F_NEXT);
  }
  int nchunks = 0;
  if (st->set & (1ull << F_CHUNKS)) nchunks = (int)lua_rawlen(L, a->base + A_CHUNKS);
  size_t hsz = (size_t)st->s.nheaders * sizeof(sim_header);
  size_t tsz = (size_t)st->s.ntool_calls * sizeof(sim_tool_call);
  size_t csz = (size_t)nchunks * sizeof(char *);
  int nuv = 0; /* user values up to the last anchor used */
  for (unsigned m = a->anchored; m != 0; m >>= 1) nuv++;
  nuv = nuv > 0 ? nuv - 1 : 0; /* bit k is slot k: the highest one */
  lstep *ls = lua_newuserdatauv(L, sizeof *ls + hsz + tsz + csz, nuv);
  *ls = *st;
  char *more = (char *)(ls + 1);
  if (hsz) {
    ls->s.headers = memcpy(more, a->hdr, hsz);
    more += hsz;
  }
  if (tsz) {
    ls->s.tool_calls = memcpy(more, a->tc, tsz);
    more += tsz;
  }
  if (nchunks) { /* the private chunk list's strings */
    ls->s.chunks = (char **)(void *)more;
    for (int i = 1; i <= nchunks; i++) {
      lua_rawgeti(L, a->base + A_CHUNKS, i);
      ls->s.chunks[i - 1] = (char *)lua_tostring(L, -1);
      lua_pop(L, 1);
    }
    ls->s.nchunks = nchunks;
  }
  for (int k = 1; k <= nuv; k++) {
    if (!(a->anchored & (1u << k))) continue;
    lua_pushvalue(L, a->base + k);
    lua_setiuservalue(L, -2, k);
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, sim__lua_fast(L)->step_mt_ref);
  lua_setmetatable(L, -2);
  return 1;
}

/* Pushes a step of `kind` with every field at its default. */
static void push_plain_step(lua_State *L, sim_step_kind kind) {
  static const char *const none[] = {NULL};
  args a;
  int top = lua_gettop(L);
  args_init(&a, L, sim__step_kind_name(kind));
  a.t = 0;
  a.known = none;
  a.present = 0;
  make_step(&a, kind, 0);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
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
  opt_string(&a, "content", F_CONTENT);
  opt_string(&a, "model", F_MODEL);
  opt_usage(&a);
  opt_headers(&a);
  opt_tool_calls(&a);
  opt_incomplete(&a);
  return make_step(&a, SIM_STEP_CHAT, 0);
}

static const char *const stream_keys[] = {
  "chunks", "content", "interval", "drop_after", "stall_after", "stall",
  "error_after", "error", "no_end", "no_terminator", "model", "usage", "headers",
  "tool_calls", "incomplete", NULL};

/* The fields of an error event (stream{}'s and upstream{}'s error = {}):
   status, code, type, message, in the table on top (left there). */
static void error_fields(args *a, const char *what) {
  static const char *const known[] = {"status", "code", "type", "message", NULL};
  args sub = *a; /* the same step, its fields read from the error table */
  sub.present = check_keys(a->L, -1, what, "field", known, 0);
  sub.known = known;
  sub.step = what;
  sub.t = lua_gettop(a->L);
  opt_integer(&sub, "status", F_STATUS, 100, 599);
  opt_string(&sub, "code", F_CODE);
  opt_string(&sub, "type", F_TYPE);
  opt_string(&sub, "message", F_MESSAGE);
  a->st = sub.st;
  a->anchored = sub.anchored;
}

/* error = {status=, code=, type=, message=} of a stream. */
static void stream_error(args *a) {
  lua_State *L = a->L;
  if (arg_get(a, "error") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (lua_type(L, -1) != LUA_TTABLE) arg_bad(a, "error", "a table");
  error_fields(a, "stream: error");
  lua_pop(L, 1);
  a->st.has_error = 1;
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
    anchor(&a, F_CHUNKS);
  }
  lua_pop(L, 1);
  if (opt_string(&a, "content", F_CONTENT) && nchunks >= 0)
    luaL_error(L, "stream: give chunks or content, not both");
  opt_number(&a, "interval", F_INTERVAL, 0, "a number of seconds >= 0");
  opt_integer(&a, "drop_after", F_DROP_AFTER, 0, INT_MAX);
  int has_stall_after = opt_integer(&a, "stall_after", F_STALL_AFTER, 0, INT_MAX);
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
    set_num(&a, F_STALL, s < 0 ? -1 : s);
  }
  lua_pop(L, 1);
  int has_error_after = opt_integer(&a, "error_after", F_ERROR_AFTER, 0, INT_MAX);
  stream_error(&a);
  if (a.st.has_error && !has_error_after) {
    if (nchunks < 0)
      luaL_error(L, "stream: 'error' needs 'error_after' (the chunk count "
                    "after which the error event is sent)");
    set_int(&a, F_ERROR_AFTER, nchunks);
  }
  opt_bool(&a, "no_end", F_NO_END);
  opt_bool(&a, "no_terminator", F_NO_TERMINATOR);
  opt_string(&a, "model", F_MODEL);
  opt_usage(&a);
  opt_headers(&a);
  opt_tool_calls(&a);
  opt_incomplete(&a);
  return make_step(&a, SIM_STEP_STREAM, 0);
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
  if (!opt_integer(&a, "status", F_STATUS, 200, 599))
    luaL_error(L, "fail: field 'status' is required, as in fail{status = 503}");
  opt_string(&a, "code", F_CODE);
  opt_string(&a, "type", F_TYPE);
  opt_string(&a, "message", F_MESSAGE);
  int ra = arg_get(&a, "retry_after");
  if (ra == LUA_TSTRING) {
    size_t len;
    const char *v = lua_tolstring(L, -1, &len);
    if (!is_header_value(v, len))
      luaL_error(L, "fail: retry_after has a line break or is too long");
    set_str(&a, F_RETRY_AFTER_RAW);
  } else if (ra != LUA_TNIL) {
    lua_pop(L, 1);
    opt_number(&a, "retry_after", F_RETRY_AFTER, 0,
               "a number of seconds >= 0 (or a string sent as is)");
  } else {
    lua_pop(L, 1);
  }
  opt_number(&a, "retry_after_ms", F_RETRY_AFTER_MS, 0, "a number of milliseconds >= 0");
  /* An HTTP-date has a four-digit year: the range keeps it one. */
  if (opt_number_in(&a, "retry_after_date", F_RETRY_AFTER_DATE, -SIM_RETRY_DATE_MAX,
                    SIM_RETRY_DATE_MAX, "a number of seconds ahead, between -1e9 and 1e9") &&
      ra != LUA_TNIL)
    luaL_error(L, "fail: give retry_after or retry_after_date, not both "
                  "(both are the Retry-After header)");
  opt_headers(&a);
  return make_step(&a, SIM_STEP_FAIL, 0);
}

static const char *const bare_keys[] = {"headers", NULL};

/* hang{}, drop{}, reset{}: nothing to set but extra headers. */
static int bare_step(lua_State *L, const char *name, sim_step_kind kind) {
  args a;
  args_begin(&a, L, name, bare_keys, 0);
  opt_headers(&a);
  return make_step(&a, kind, 0);
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
  set_int(&a, F_H2_FAULT, fault);
  set_int(&a, F_H2_CODE, (lua_Integer)codes[found].code);
  opt_headers(&a);
  return make_step(&a, SIM_STEP_H2, 0);
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
  if (!opt_integer(&a, "after", F_AT, 0, INT_MAX)) set_int(&a, F_AT, 0);
  if (arg_get(&a, "stall") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER || isnan(lua_tonumber(L, -1)))
      arg_bad(&a, "stall", "a number of seconds (negative: forever)");
    double s = lua_tonumber(L, -1);
    set_num(&a, F_STALL, s < 0 ? -1 : s);
  }
  lua_pop(L, 1);
  set_int(&a, F_H2_FAULT, SIM_H2_WINDOW);
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
  return make_step(&a, SIM_STEP_H2, -1);
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
    set_num(&a, F_SECONDS, v);
    lua_pop(L, 1);
  } else {
    if (sim__lua_is_step(L, -1))
      step_pos = 1;
    else if (t1 != LUA_TNIL)
      luaL_error(L, "delay: [1] must be the seconds or the step, got %s",
                 luaL_typename(L, -1));
    lua_pop(L, 1);
    if (!opt_number(&a, "seconds", F_SECONDS, 0, "a number of seconds >= 0"))
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
  return make_step(&a, SIM_STEP_DELAY, -1);
}

static const char *const truncate_keys[] = {"step", "at", "mode", "headers",
                                            NULL};

/* truncate{step, at=, mode="short-body"|"early-close"}; the step defaults
   to chat{} and must have a body: chat, fail or garbage. */
static int l_truncate(lua_State *L) {
  args a;
  args_begin(&a, L, "truncate", truncate_keys, 1);
  if (!opt_integer(&a, "at", F_AT, 0, INT_MAX))
    luaL_error(L, "truncate: field 'at' (bytes of the body sent) is required");
  if (arg_get(&a, "mode") != LUA_TNIL) {
    const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    if (strcmp(m, "short-body") != 0 && strcmp(m, "early-close") != 0)
      luaL_error(L, "truncate: mode must be \"short-body\" or \"early-close\"");
    set_int(&a, F_EARLY_CLOSE, strcmp(m, "early-close") == 0);
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
  return make_step(&a, SIM_STEP_TRUNCATE, -1);
}

static const char *const garbage_keys[] = {"body", "headers", NULL};

/* garbage{body=}: a 200 whose body is not JSON. */
static int l_garbage(lua_State *L) {
  args a;
  args_begin(&a, L, "garbage", garbage_keys, 0);
  opt_string(&a, "body", F_BODY);
  opt_headers(&a);
  return make_step(&a, SIM_STEP_GARBAGE, 0);
}

static const char *const effect_keys[] = {"apply", "respond", "headers", NULL};

/* effect{apply=true|false, respond="ok"|"drop"|"reset"|"hang"|step} */
static int l_effect(lua_State *L) {
  args a;
  args_begin(&a, L, "effect", effect_keys, 0);
  opt_bool(&a, "apply", F_APPLY);
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
  return make_step(&a, SIM_STEP_EFFECT, next);
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
  opt_number(&a, "delay", F_SECONDS, 0, "a number of seconds >= 0");
  opt_integer(&a, "truncate", F_CUT_AT, 0, INT_MAX);
  opt_integer(&a, "drop_after", F_DROP_AFTER, 0, INT_MAX);
  int has_stall_after = opt_integer(&a, "stall_after", F_STALL_AFTER, 0, INT_MAX);
  if (arg_get(&a, "stall") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER)
      arg_bad(&a, "stall", "a number of seconds (negative: until the client gives up)");
    if (!has_stall_after)
      luaL_error(L, "upstream: 'stall' needs 'stall_after' (the frame count "
                    "after which the answer stalls)");
    double s = lua_tonumber(L, -1);
    if (isnan(s))
      luaL_error(L, "upstream: field 'stall' must be a number of seconds, got nan");
    set_num(&a, F_STALL, s < 0 ? -1 : s);
  }
  lua_pop(L, 1);
  int has_error_after = opt_integer(&a, "error_after", F_ERROR_AFTER, 0, INT_MAX);
  if (arg_get(&a, "error") != LUA_TNIL && !has_error_after)
    luaL_error(L, "upstream: 'error' needs 'error_after' (the frame count "
                  "after which the error event is sent)");
  lua_pop(L, 1);
  if (has_error_after) {
    /* the error event's fields, as stream{}'s */
    if (arg_get(&a, "error") != LUA_TNIL) {
      if (lua_type(L, -1) != LUA_TTABLE) arg_bad(&a, "error", "a table");
      error_fields(&a, "upstream: error");
    }
    lua_pop(L, 1);
  }
  opt_bool(&a, "cut_arguments", F_CUT_ARGUMENTS);
  return make_step(&a, SIM_STEP_UPSTREAM, 0);
}

/* --------------------------------------------------- the step metatable */

/* Pushes a copy of the table at idx (one level), so the step stays
   unchanged whatever the reader does with it. */
static void push_table_copy(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
}

/* step.kind reads the kind's name; other fields read their canonical
   values (tables as copies, so the step stays unchanged), nil when the
   step was not given them. */
static int step_index(lua_State *L) {
  lstep *ls = lstep_at(L, 1);
  if (ls == NULL || lua_type(L, 2) != LUA_TSTRING) return 0;
  const char *k = lua_tostring(L, 2);
  if (strcmp(k, "kind") == 0) {
    lua_pushstring(L, sim__step_kind_name(ls->s.kind));
    return 1;
  }
  int f = 0;
  while (f < NFIELDS && strcmp(FIELDS[f].name, k) != 0) f++;
  if (f == NFIELDS || !(ls->set & (1ull << f))) return 0;
  const void *at = (const char *)&ls->s + FIELDS[f].off;
  switch (FIELDS[f].type) {
  case T_INT: lua_pushinteger(L, *(const int *)at); break;
  case T_UINT: lua_pushinteger(L, *(const unsigned *)at); break;
  case T_LONG: lua_pushinteger(L, *(const long *)at); break;
  case T_NUM: lua_pushnumber(L, *(const double *)at); break;
  case T_TABLE:
    lua_getiuservalue(L, 1, FIELDS[f].anchor);
    push_table_copy(L, -1);
    break;
  default: lua_getiuservalue(L, 1, FIELDS[f].anchor); break; /* a string, a step */
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
  sim_lua_fast *fast = sim__lua_fast(L);
  fast->step_mt = lua_topointer(L, -1);
  fast->step_mt_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* also by reference */

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

/* A copy of the C string s (NULL stays NULL); raises when out of memory. */
static char *dup_str(lua_State *L, const char *s) {
  if (s == NULL) return NULL;
  char *p = strdup(s);
  if (p == NULL) oom(L);
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

/* A text field (content, body, message) of the step at idx kept in user
   value uv: shared as a blob when large, else copied. */
static void text_at(lua_State *L, int idx, int uv, const char *src, char **text,
                    sim_blob **blob) {
  if (src == NULL) return;
  lua_getiuservalue(L, idx, uv);
  if (lua_rawlen(L, -1) >= SIM_BLOB_MIN) {
    *blob = cached_blob(L, -1, blob_of_string);
    *text = (char *)sim__blob_data(*blob);
  } else {
    size_t len;
    const char *p = lua_tolstring(L, -1, &len);
    *text = malloc(len + 1);
    if (*text == NULL) oom(L);
    memcpy(*text, p, len + 1);
  }
  lua_pop(L, 1);
}

/* The chunks of the step at idx (ls), one shared copy when large. */
static void chunks_at(lua_State *L, int idx, const lstep *ls, sim_step *s) {
  int n = ls->s.nchunks;
  s->chunks = calloc(n > 0 ? (size_t)n : 1, sizeof *s->chunks);
  if (s->chunks == NULL) oom(L);
  lua_getiuservalue(L, idx, A_CHUNKS);
  int v = lua_gettop(L);
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
    size_t len;
    const char *c = lua_tolstring(L, -1, &len);
    s->chunks[s->nchunks] = malloc(len + 1);
    if (s->chunks[s->nchunks] == NULL) oom(L);
    memcpy(s->chunks[s->nchunks], c, len + 1);
    s->nchunks++;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Copies the step at idx into *slot, which owns the copy from its
   allocation on, so a Lua error at any point leaks nothing: the numbers at
   once, then each string and array the step has. */
static void convert(lua_State *L, int idx, const lstep *ls, sim_step **slot) {
  luaL_checkstack(L, 8, "steps nest too deep");
  idx = lua_absindex(L, idx);
  const sim_step *src = &ls->s;
  /* A short content is copied into the step's own block: one allocation
     instead of two for the answer of nearly every request (issue 30). */
  size_t inl = 0;
  if (src->content != NULL) {
    lua_getiuservalue(L, idx, A_CONTENT);
    size_t len = lua_rawlen(L, -1);
    lua_pop(L, 1);
    if (len < SIM_BLOB_MIN) inl = len + 1;
  }
  sim_step *s = malloc(sizeof *s + inl);
  if (s == NULL) oom(L);
  *s = *src; /* every pointer and count below is made the copy's own */
  s->content = s->model = s->code = s->type = s->message = s->retry_after_raw = s->body = NULL;
  s->content_inline = 0;
  s->content_blob = s->chunks_blob = s->message_blob = s->body_blob = NULL;
  s->chunks = NULL;
  s->nchunks = 0;
  s->headers = NULL;
  s->nheaders = 0;
  s->tool_calls = NULL;
  s->ntool_calls = 0;
  s->next = NULL;
  *slot = s;
  if (inl > 0) {
    s->content = memcpy(s + 1, src->content, inl); /* the Lua string: its NUL too */
    s->content_inline = 1;
  } else {
    text_at(L, idx, A_CONTENT, src->content, &s->content, &s->content_blob);
  }
  text_at(L, idx, A_MESSAGE, src->message, &s->message, &s->message_blob);
  text_at(L, idx, A_BODY, src->body, &s->body, &s->body_blob);
  s->model = dup_str(L, src->model);
  s->code = dup_str(L, src->code);
  s->type = dup_str(L, src->type);
  s->retry_after_raw = dup_str(L, src->retry_after_raw);
  if (src->nheaders > 0) {
    s->headers = calloc((size_t)src->nheaders, sizeof *s->headers);
    if (s->headers == NULL) oom(L);
    s->nheaders = src->nheaders; /* all NULL until copied: each is freed */
    for (int i = 0; i < src->nheaders; i++) {
      s->headers[i].name = dup_str(L, src->headers[i].name);
      s->headers[i].value = dup_str(L, src->headers[i].value);
    }
  }
  if (src->ntool_calls > 0) {
    s->tool_calls = calloc((size_t)src->ntool_calls, sizeof *s->tool_calls);
    if (s->tool_calls == NULL) oom(L);
    s->ntool_calls = src->ntool_calls; /* as the headers */
    for (int i = 0; i < src->ntool_calls; i++) {
      s->tool_calls[i].id = dup_str(L, src->tool_calls[i].id);
      s->tool_calls[i].name = dup_str(L, src->tool_calls[i].name);
      s->tool_calls[i].arguments = dup_str(L, src->tool_calls[i].arguments);
    }
  }
  if (ls->set & (1ull << F_CHUNKS)) chunks_at(L, idx, ls, s);
  if (src->next != NULL) { /* the lstep of the step in A_NEXT: s is its first member */
    lua_getiuservalue(L, idx, A_NEXT);
    convert(L, -1, (const lstep *)(const void *)src->next, &s->next);
    lua_pop(L, 1);
  }
}

/* Converts the step at idx into *slot; see lua_int.h. */
void sim__lua_step_convert(lua_State *L, int idx, sim_step **slot) {
  const lstep *ls = lstep_at(L, idx);
  if (ls == NULL) luaL_error(L, "not a step");
  convert(L, idx, ls, slot);
}
