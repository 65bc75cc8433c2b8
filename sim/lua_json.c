/*
 * lua_json.c - Lua tables <-> JSON text, for the scenario engine.
 *
 * Lua -> JSON turns a scenario's `client`, `expect` and `ratelimit` tables
 * into text other modules read; JSON -> Lua gives provider functions the
 * request body as `req.body`. Both run inside protected calls: a Lua error
 * may happen at any allocation, so C memory is held by a collectable box.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <lauxlib.h>
#include <lua.h>

#include "sim/lua_int.h"

#define JSON_BOX_MT "fusebox.jsonbox"

/* C memory of one conversion, released by the GC if a Lua error strikes. */
typedef struct json_box {
  cJSON *root;
  char *text;
} json_box;

static int json_box_gc(lua_State *L) {
  json_box *b = lua_touserdata(L, 1);
  if (b != NULL) {
    cJSON_Delete(b->root);
    b->root = NULL;
    cJSON_free(b->text);
    b->text = NULL;
  }
  return 0;
}

static json_box *json_box_push(lua_State *L) {
  json_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->root = NULL;
  b->text = NULL;
  if (luaL_newmetatable(L, JSON_BOX_MT)) {
    lua_pushcfunction(L, json_box_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

static void oom(lua_State *L) { luaL_error(L, "out of memory"); }

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends ".key" or "[i]" to a path for messages; cuts long paths. */
static void path_push(char *dst, size_t cap, const char *base, const char *key,
                      long long i) {
  if (key != NULL)
    snprintf(dst, cap, "%s.%s", base, key);
  else
    snprintf(dst, cap, "%s[%lld]", base, i);
}

static void add_json(lua_State *L, int idx, cJSON *parent, const char *key,
                     const char *path, int depth);

/* Attaches `item` to parent (under key, or appended); raises when out of
   memory. Attaching first keeps every node reachable from the box. */
static void attach(lua_State *L, cJSON *parent, const char *key, cJSON *item) {
  if (item == NULL) oom(L);
  cJSON_bool ok = key != NULL ? cJSON_AddItemToObject(parent, key, item)
                              : cJSON_AddItemToArray(parent, item);
  if (!ok) {
    cJSON_Delete(item);
    oom(L);
  }
}

/* Fills `node` (a fresh array or object) from the table at idx. */
static void fill_table(lua_State *L, int idx, cJSON *node, int is_list,
                       long long n, const char *path, int depth) {
  char sub[160];
  if (is_list) {
    for (long long i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, (lua_Integer)i);
      path_push(sub, sizeof sub, path, NULL, i);
      add_json(L, lua_gettop(L), node, NULL, sub, depth + 1);
      lua_pop(L, 1);
    }
    return;
  }
  /* Objects get sorted keys so the text is stable across runs. */
  const char **keys = lua_newuserdatauv(L, (size_t)n * sizeof *keys, 0);
  long long k = 0;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    keys[k++] = lua_tostring(L, -1); /* kept alive by the table */
  }
  qsort(keys, (size_t)n, sizeof *keys, cmp_str);
  for (long long i = 0; i < n; i++) {
    lua_getfield(L, idx, keys[i]);
    path_push(sub, sizeof sub, path, keys[i], 0);
    add_json(L, lua_gettop(L), node, keys[i], sub, depth + 1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1); /* the key array */
}

/* Converts the value at idx and attaches it to parent; raises on values
   JSON cannot hold (functions, mixed or sparse tables, NaN, deep nesting). */
static void add_json(lua_State *L, int idx, cJSON *parent, const char *key,
                     const char *path, int depth) {
  switch (lua_type(L, idx)) {
  case LUA_TBOOLEAN:
    attach(L, parent, key, cJSON_CreateBool(lua_toboolean(L, idx)));
    return;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) {
      attach(L, parent, key, cJSON_CreateNumber((double)lua_tointeger(L, idx)));
    } else {
      double d = lua_tonumber(L, idx);
      if (!isfinite(d)) sim__lua_error_at(L, path, "%s: %f is not a JSON number", path, d);
      attach(L, parent, key, cJSON_CreateNumber(d));
    }
    return;
  case LUA_TSTRING: {
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    if (strlen(s) != len)
      sim__lua_error_at(L, path, "%s: a string with a NUL byte cannot be "
                                  "turned into JSON", path);
    attach(L, parent, key, cJSON_CreateString(s));
    return;
  }
  case LUA_TTABLE:
    break;
  default:
    sim__lua_error_at(L, path, "%s: a %s cannot be turned into JSON", path,
               luaL_typename(L, idx));
    return;
  }

  if (depth > FUSEBOX_LUA_JSON_DEPTH)
    sim__lua_error_at(L, path, "%s: tables nest deeper than %d", path,
               FUSEBOX_LUA_JSON_DEPTH);
  luaL_checkstack(L, 8, "tables nest too deep");

  /* One pass over the keys decides list or object. */
  long long nint = 0, maxint = 0, nstr = 0;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      nstr++;
    } else if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1) {
      nint++;
      if (lua_tointeger(L, -1) > maxint) maxint = lua_tointeger(L, -1);
    } else {
      sim__lua_error_at(L, path, "%s: a %s key cannot be turned into JSON", path,
                 lua_type(L, -1) == LUA_TNUMBER ? "non-integer number"
                                                : luaL_typename(L, -1));
    }
  }
  if (nint > 0 && nstr > 0)
    sim__lua_error_at(L, path, "%s: a table mixes list items and named keys", path);
  if (nint > 0 && maxint != nint)
    sim__lua_error_at(L, path, "%s: a list has holes (nil items)", path);

  /* An empty table is an object: the tables read as JSON are mostly maps. */
  cJSON *node = nint > 0 ? cJSON_CreateArray() : cJSON_CreateObject();
  attach(L, parent, key, node);
  fill_table(L, idx, node, nint > 0, nint > 0 ? nint : nstr, path, depth);
}

/*
 * Pushes the table at idx as JSON text. Every node is attached to a root
 * held by a collectable box before anything under it is converted, so a Lua
 * error at any point leaks nothing.
 */
void sim__lua_push_json_text(lua_State *L, int idx, const char *what) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE)
    sim__lua_error_at(L, what, "%s must be a table, got %s", what, luaL_typename(L, idx));
  json_box *b = json_box_push(L);
  b->root = cJSON_CreateArray(); /* a holder for the one converted value */
  if (b->root == NULL) oom(L);
  add_json(L, idx, b->root, NULL, what, 1);
  b->text = cJSON_PrintUnformatted(cJSON_GetArrayItem(b->root, 0));
  if (b->text == NULL) oom(L);
  if (strlen(b->text) > FUSEBOX_LUA_JSON_MAX)
    sim__lua_error_at(L, what, "%s: the table is larger than %d bytes as JSON", what,
               (int)FUSEBOX_LUA_JSON_MAX);
  lua_pushstring(L, b->text);
  /* Release now rather than at the next collection. */
  cJSON_free(b->text);
  b->text = NULL;
  cJSON_Delete(b->root);
  b->root = NULL;
  lua_remove(L, -2); /* the box */
}

/* ------------------------------------------------------- JSON -> Lua */

static int json_depth_ok(const cJSON *v, int depth, int max) {
  if (depth > max) return 0;
  if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
    for (const cJSON *c = v->child; c != NULL; c = c->next)
      if (!json_depth_ok(c, depth + 1, max)) return 0;
  }
  return 1;
}

static void push_json(lua_State *L, const cJSON *v) {
  luaL_checkstack(L, 4, "JSON nests too deep");
  if (cJSON_IsObject(v)) {
    lua_createtable(L, 0, 4);
    for (const cJSON *c = v->child; c != NULL; c = c->next) {
      if (c->string == NULL || cJSON_IsNull(c)) continue;
      push_json(L, c);
      lua_setfield(L, -2, c->string);
    }
  } else if (cJSON_IsArray(v)) {
    int n = cJSON_GetArraySize(v);
    lua_createtable(L, n, 0);
    lua_Integer i = 1;
    for (const cJSON *c = v->child; c != NULL; c = c->next, i++) {
      if (cJSON_IsNull(c)) continue; /* a hole, as Lua has no null */
      push_json(L, c);
      lua_rawseti(L, -2, i);
    }
  } else if (cJSON_IsString(v)) {
    lua_pushstring(L, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    if (d == floor(d) && fabs(d) < 9007199254740992.0)
      lua_pushinteger(L, (lua_Integer)d);
    else
      lua_pushnumber(L, d);
  } else if (cJSON_IsBool(v)) {
    lua_pushboolean(L, cJSON_IsTrue(v));
  } else {
    lua_pushnil(L);
  }
}

/* Pushes the JSON text as a Lua value, or nil when it is not JSON or nests
   deeper than max_depth. The parsed tree is boxed while Lua allocates. */
void sim__lua_push_json_value(lua_State *L, const char *text, size_t len,
                              int max_depth) {
  if (text == NULL || len == 0) {
    lua_pushnil(L);
    return;
  }
  json_box *b = json_box_push(L);
  b->root = cJSON_ParseWithLength(text, len);
  if (b->root == NULL || !json_depth_ok(b->root, 1, max_depth)) {
    lua_pop(L, 1);
    lua_pushnil(L);
    return;
  }
  push_json(L, b->root);
  cJSON_Delete(b->root);
  b->root = NULL;
  lua_remove(L, -2); /* the box */
}
