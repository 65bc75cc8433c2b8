/*
 * lua_shared.c - `shared`, the values every Lua state of one scenario sees.
 *
 * Each event loop has its own Lua state of a scenario (lua_scenario.c), so
 * a provider function's own variables are its loop's. What must hold
 * across loops - a count of calls, the order in which logical requests
 * first came - lives here, in C, behind one lock held only for the length
 * of one operation (never while Lua runs):
 *
 *   shared.get(name)          the value, or nil
 *   shared.set(name, value)   nil, a boolean, a number or a string (nil
 *                             removes); returns value
 *   shared.incr(name [, by])  adds by (default 1) to an integer (absent =
 *                             0) and returns the sum
 *   shared.order(list, key)   the position of key in list, from 1; a key
 *                             not in it yet is added at the end
 *
 * Names, list names and keys are strings of at most SH_NAME_MAX bytes,
 * string values at most SH_VALUE_MAX; at most SH_ENTRIES_MAX entries (a
 * key of an order list is one). Over a bound is a Lua error. Not shared
 * between the servers of a fleet (docs/scenarios.md).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "sim/lua_int.h"

#define SH_NAME_MAX 512
#define SH_VALUE_MAX 4096
#define SH_ENTRIES_MAX 200000

enum { SH_NIL = 0, SH_BOOL, SH_INT, SH_NUM, SH_STR };

typedef struct sh_entry {
  struct sh_entry *next;
  uint64_t hash;
  size_t nlen;
  int type;
  lua_Integer i;  /* SH_BOOL (0/1), SH_INT */
  lua_Number d;   /* SH_NUM */
  size_t slen;    /* SH_STR: the bytes follow the name */
  char name[];    /* nlen bytes of name, then slen bytes of string */
} sh_entry;

struct sim_lua_shared {
  pthread_mutex_t mu;
  sh_entry **buckets;
  size_t nbuckets;
  size_t count;
};

/* Makes an empty store; NULL when out of memory. */
sim_lua_shared *sim__lua_shared_new(void) {
  sim_lua_shared *sh = calloc(1, sizeof *sh);
  if (sh == NULL) return NULL;
  sh->nbuckets = 64;
  sh->buckets = calloc(sh->nbuckets, sizeof *sh->buckets);
  if (sh->buckets == NULL) {
    free(sh);
    return NULL;
  }
  pthread_mutex_init(&sh->mu, NULL);
  return sh;
}

/* Releases the store; NULL is a no-op. */
void sim__lua_shared_free(sim_lua_shared *sh) {
  if (sh == NULL) return;
  for (size_t b = 0; b < sh->nbuckets; b++)
    for (sh_entry *e = sh->buckets[b], *n; e != NULL; e = n) {
      n = e->next;
      free(e);
    }
  free(sh->buckets);
  pthread_mutex_destroy(&sh->mu);
  free(sh);
}

/* FNV-1a. */
static uint64_t sh_hash(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
  return h;
}

/* The entry of name, or NULL; *link (when asked) is the link that points
   at it, or where a new one goes. */
static sh_entry *sh_find(sim_lua_shared *sh, const char *name, size_t nlen,
                         uint64_t h, sh_entry ***link) {
  sh_entry **l = &sh->buckets[h % sh->nbuckets];
  for (; *l != NULL; l = &(*l)->next)
    if ((*l)->hash == h && (*l)->nlen == nlen && memcmp((*l)->name, name, nlen) == 0)
      break;
  if (link != NULL) *link = l;
  return *l;
}

/* Doubles the buckets when the table is full enough (best effort). */
static void sh_grow(sim_lua_shared *sh) {
  if (sh->count < sh->nbuckets * 2) return;
  size_t nb = sh->nbuckets * 2;
  sh_entry **b = calloc(nb, sizeof *b);
  if (b == NULL) return; /* longer chains, still correct */
  for (size_t i = 0; i < sh->nbuckets; i++)
    for (sh_entry *e = sh->buckets[i], *n; e != NULL; e = n) {
      n = e->next;
      e->next = b[e->hash % nb];
      b[e->hash % nb] = e;
    }
  free(sh->buckets);
  sh->buckets = b;
  sh->nbuckets = nb;
}

/* A new entry for name holding slen bytes of string room, linked in; NULL
   when out of memory or over SH_ENTRIES_MAX. */
static sh_entry *sh_add(sim_lua_shared *sh, const char *name, size_t nlen,
                        uint64_t h, size_t slen) {
  if (sh->count >= SH_ENTRIES_MAX) return NULL;
  sh_entry *e = calloc(1, sizeof *e + nlen + slen);
  if (e == NULL) return NULL;
  e->hash = h;
  e->nlen = nlen;
  memcpy(e->name, name, nlen);
  sh_grow(sh);
  sh_entry **l = &sh->buckets[h % sh->nbuckets];
  e->next = *l;
  *l = e;
  sh->count++;
  return e;
}

/* The store of the running function (upvalue 1). */
static sim_lua_shared *sh_of(lua_State *L) {
  return lua_touserdata(L, lua_upvalueindex(1));
}

/* Builds the internal name: a kind byte, then the parts joined by a NUL,
   into buf (at least 2 * SH_NAME_MAX + 2 bytes). Raises on a bad part. */
static size_t sh_name(lua_State *L, char kind, int a, int b, char *buf) {
  size_t la = 0, lb = 0;
  const char *pa = luaL_checklstring(L, a, &la);
  const char *pb = b > 0 ? luaL_checklstring(L, b, &lb) : NULL;
  if (la > SH_NAME_MAX || lb > SH_NAME_MAX)
    luaL_error(L, "shared: a name or key longer than %d bytes", SH_NAME_MAX);
  buf[0] = kind;
  memcpy(buf + 1, pa, la);
  size_t n = 1 + la;
  if (pb != NULL) {
    buf[n++] = '\0';
    memcpy(buf + n, pb, lb);
    n += lb;
  }
  return n;
}

static int l_get(lua_State *L) {
  sim_lua_shared *sh = sh_of(L);
  char name[2 * SH_NAME_MAX + 2];
  size_t nlen = sh_name(L, 'v', 1, 0, name);
  uint64_t h = sh_hash(name, nlen);
  luaL_Buffer b;
  char *room = luaL_buffinitsize(L, &b, SH_VALUE_MAX); /* allocate before locking */
  int type = SH_NIL;
  lua_Integer i = 0;
  lua_Number d = 0;
  size_t slen = 0;
  pthread_mutex_lock(&sh->mu);
  sh_entry *e = sh_find(sh, name, nlen, h, NULL);
  if (e != NULL) {
    type = e->type;
    i = e->i;
    d = e->d;
    slen = e->slen;
    if (type == SH_STR) memcpy(room, e->name + e->nlen, slen);
  }
  pthread_mutex_unlock(&sh->mu);
  switch (type) {
  case SH_BOOL: lua_pushboolean(L, (int)i); break;
  case SH_INT: lua_pushinteger(L, i); break;
  case SH_NUM: lua_pushnumber(L, d); break;
  case SH_STR: luaL_pushresultsize(&b, slen); break;
  default: lua_pushnil(L);
  }
  return 1;
}

static int l_set(lua_State *L) {
  sim_lua_shared *sh = sh_of(L);
  char name[2 * SH_NAME_MAX + 2];
  size_t nlen = sh_name(L, 'v', 1, 0, name);
  lua_settop(L, 2);
  int type = SH_NIL;
  lua_Integer i = 0;
  lua_Number d = 0;
  size_t slen = 0;
  const char *s = NULL;
  switch (lua_type(L, 2)) {
  case LUA_TNIL: break;
  case LUA_TBOOLEAN: type = SH_BOOL; i = lua_toboolean(L, 2); break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, 2)) {
      type = SH_INT;
      i = lua_tointeger(L, 2);
    } else {
      type = SH_NUM;
      d = lua_tonumber(L, 2);
    }
    break;
  case LUA_TSTRING:
    type = SH_STR;
    s = lua_tolstring(L, 2, &slen);
    if (slen > SH_VALUE_MAX)
      return luaL_error(L, "shared.set: a string longer than %d bytes", SH_VALUE_MAX);
    break;
  default:
    return luaL_error(L, "shared.set: a value must be nil, a boolean, a number "
                         "or a string, got %s", luaL_typename(L, 2));
  }
  uint64_t h = sh_hash(name, nlen);
  int full = 0;
  pthread_mutex_lock(&sh->mu);
  sh_entry **link;
  sh_entry *e = sh_find(sh, name, nlen, h, &link);
  if (e != NULL && (type == SH_NIL || (type == SH_STR && slen > e->slen))) {
    *link = e->next; /* removed, or replaced by a larger one below */
    free(e);
    sh->count--;
    e = NULL;
  }
  if (type != SH_NIL) {
    if (e == NULL) e = sh_add(sh, name, nlen, h, type == SH_STR ? slen : 0);
    if (e == NULL) {
      full = 1;
    } else {
      e->type = type;
      e->i = i;
      e->d = d;
      e->slen = slen;
      if (s != NULL) memcpy(e->name + e->nlen, s, slen);
    }
  }
  pthread_mutex_unlock(&sh->mu);
  if (full) return luaL_error(L, "shared: full (%d entries) or out of memory", SH_ENTRIES_MAX);
  return 1;
}

static int l_incr(lua_State *L) {
  sim_lua_shared *sh = sh_of(L);
  char name[2 * SH_NAME_MAX + 2];
  size_t nlen = sh_name(L, 'v', 1, 0, name);
  lua_Integer by = luaL_optinteger(L, 2, 1);
  uint64_t h = sh_hash(name, nlen);
  int bad = 0, full = 0;
  lua_Integer v = 0;
  pthread_mutex_lock(&sh->mu);
  sh_entry *e = sh_find(sh, name, nlen, h, NULL);
  if (e == NULL) {
    e = sh_add(sh, name, nlen, h, 0);
    if (e != NULL) e->type = SH_INT;
    else full = 1;
  }
  if (e != NULL && e->type != SH_INT) {
    bad = 1;
  } else if (e != NULL) {
    e->i = (lua_Integer)((lua_Unsigned)e->i + (lua_Unsigned)by); /* wraps, as Lua */
    v = e->i;
  }
  pthread_mutex_unlock(&sh->mu);
  if (full) return luaL_error(L, "shared: full (%d entries) or out of memory", SH_ENTRIES_MAX);
  if (bad) return luaL_error(L, "shared.incr: '%s' does not hold an integer", lua_tostring(L, 1));
  lua_pushinteger(L, v);
  return 1;
}

static int l_order(lua_State *L) {
  sim_lua_shared *sh = sh_of(L);
  char key[2 * SH_NAME_MAX + 2], list[SH_NAME_MAX + 2];
  size_t klen = sh_name(L, 'o', 1, 2, key);
  size_t llen = sh_name(L, 'n', 1, 0, list);
  uint64_t kh = sh_hash(key, klen), lh = sh_hash(list, llen);
  int full = 0;
  lua_Integer pos = 0;
  pthread_mutex_lock(&sh->mu);
  sh_entry *e = sh_find(sh, key, klen, kh, NULL);
  if (e != NULL) {
    pos = e->i;
  } else {
    sh_entry *n = sh_find(sh, list, llen, lh, NULL);
    if (n == NULL) n = sh_add(sh, list, llen, lh, 0);
    e = n != NULL ? sh_add(sh, key, klen, kh, 0) : NULL;
    if (e == NULL) {
      full = 1;
    } else {
      pos = e->i = ++n->i;
      e->type = SH_INT;
    }
  }
  pthread_mutex_unlock(&sh->mu);
  if (full) return luaL_error(L, "shared: full (%d entries) or out of memory", SH_ENTRIES_MAX);
  lua_pushinteger(L, pos);
  return 1;
}

static const luaL_Reg sh_funcs[] = {
  {"get", l_get}, {"set", l_set}, {"incr", l_incr}, {"order", l_order}, {NULL, NULL},
};

/* Defines the global `shared` over sh (borrowed: outlives the state). */
void sim__lua_open_shared(lua_State *L, sim_lua_shared *sh) {
  luaL_newlibtable(L, sh_funcs);
  lua_pushlightuserdata(L, sh);
  luaL_setfuncs(L, sh_funcs, 1);
  lua_setglobal(L, "shared");
}
