/*
 * lua_where.c - error positions for the tables of scenario{}: a message
 * about a key names the line the key is written on.
 *
 * The load registers the file's source map (srcmap.c) in the state's
 * registry while the file runs; scenario{} and the table-to-JSON conversion
 * raise through sim__lua_error_at with the key path they are checking, and
 * the path is looked up under the scenario{} call that is running.
 */
#include <stdarg.h>
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>

#include "sim/lua_int.h"

/* Registry key of the source map (a light userdata). */
static const char srcmap_key = 'm';

/* Registers (or with NULL, clears) the source map; see lua_int.h. */
void sim__lua_set_srcmap(lua_State *L, const sim_srcmap *m) {
  if (m != NULL) lua_pushlightuserdata(L, (void *)m);
  else lua_pushnil(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &srcmap_key);
}

/* The line of the Lua code calling the running C function, or 0. */
int sim__lua_call_line(lua_State *L) {
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar) && ar.currentline > 0)
    return ar.currentline;
  return 0;
}

/* Raises "file:line: message" at the line of path; see lua_int.h. */
void sim__lua_error_at(lua_State *L, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_Debug ar;
  if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0)
    lua_error(L); /* no Lua caller: the message handler places it */
  int line = 0;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &srcmap_key);
  const sim_srcmap *m = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (m != NULL && path != NULL) line = sim__srcmap_line(m, ar.currentline, path);
  lua_pushfstring(L, "%s:%d: %s", ar.short_src, line > 0 ? line : ar.currentline, msg);
  lua_error(L);
}
