/*
 * lua_random.c - math.random and math.randomseed of a scenario, drawn from
 * a generator in C that every Lua state of the scenario can share.
 *
 * A scenario has one Lua state per event loop (lua_scenario.c), but one
 * sequence of random numbers: a request draws the same numbers whichever
 * loop serves it, so a seed gives the same answers for the same sequence of
 * requests, as it did when one state served every loop. The generator is
 * Lua 5.4's own (xoshiro256**, seeded and projected onto a range the way
 * lmathlib.c does), so a seed gives the numbers it gave before.
 *
 * While a state loads its file it draws from its own generator, seeded
 * with the load's seed: top-level code computes the same values in every
 * state. After the load the scenario points the state at the shared one.
 */
#include <stdint.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

#include "sim/lua_int.h"

static uint64_t rotl(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

/* xoshiro256**, as lmathlib.c's nextrand. */
static uint64_t next_rand(uint64_t s[4]) {
  uint64_t s0 = s[0], s1 = s[1], s2 = s[2] ^ s0, s3 = s[3] ^ s1;
  uint64_t res = rotl(s1 * 5, 7) * 9;
  s1 <<= 17;
  s[0] = s0 ^ s3;
  s[1] = s[1] ^ s2;
  s[2] = s2 ^ s1;
  s[3] = rotl(s3, 45);
  return res;
}

/* As lmathlib.c's setseed: the state {n1, 0xff, n2, 0}, 16 draws dropped. */
static void set_seed(uint64_t s[4], uint64_t n1, uint64_t n2) {
  s[0] = n1;
  s[1] = 0xff;
  s[2] = n2;
  s[3] = 0;
  for (int i = 0; i < 16; i++) (void)next_rand(s);
}

/* A random integer in [0, n] from ran, drawing again while out of range
   (lmathlib.c's project). */
static uint64_t project(uint64_t ran, uint64_t n, uint64_t s[4]) {
  if ((n & (n + 1)) == 0) return ran & n;
  uint64_t lim = n;
  lim |= lim >> 1;
  lim |= lim >> 2;
  lim |= lim >> 4;
  lim |= lim >> 8;
  lim |= lim >> 16;
  lim |= lim >> 32;
  while ((ran &= lim) > n) ran = next_rand(s);
  return ran;
}

/* Runs f on the state's current generator, under its lock when shared. */
static void rng_lock(sim_lua_sandbox *sb) {
  if (sb->rng_mu != NULL) pthread_mutex_lock(sb->rng_mu);
}

static void rng_unlock(sim_lua_sandbox *sb) {
  if (sb->rng_mu != NULL) pthread_mutex_unlock(sb->rng_mu);
}

/* The sandbox of L (the allocator's user data, as lua_sandbox.c sets it). */
static sim_lua_sandbox *sandbox_of(lua_State *L) {
  void *ud = NULL;
  lua_getallocf(L, &ud);
  return ud;
}

/* math.random([m [, n]]): as Lua's, from the scenario's generator. */
static int l_random(lua_State *L) {
  sim_lua_sandbox *sb = sandbox_of(L);
  lua_Integer low, up;
  int nargs = lua_gettop(L);
  if (nargs == 1) {
    low = 1;
    up = luaL_checkinteger(L, 1);
  } else if (nargs == 2) {
    low = luaL_checkinteger(L, 1);
    up = luaL_checkinteger(L, 2);
  } else if (nargs != 0) {
    return luaL_error(L, "wrong number of arguments");
  }
  if (nargs > 0 && !(nargs == 1 && up == 0))
    luaL_argcheck(L, low <= up, 1, "interval is empty");
  /* Nothing below raises: the lock is never left held. */
  rng_lock(sb);
  uint64_t rv = next_rand(sb->rng->s);
  if (nargs == 0) {
    rng_unlock(sb);
    lua_pushnumber(L, (lua_Number)(rv >> 11) * 0x1.0p-53);
  } else if (nargs == 1 && up == 0) {
    rng_unlock(sb);
    lua_pushinteger(L, (lua_Integer)rv);
  } else {
    uint64_t p = project(rv, (uint64_t)up - (uint64_t)low, sb->rng->s);
    rng_unlock(sb);
    lua_pushinteger(L, (lua_Integer)(p + (uint64_t)low));
  }
  return 1;
}

/* math.randomseed([n1 [, n2]]): as Lua's; without arguments a seed from the
   clock. Returns the two seed parts, as Lua 5.4.4 does. */
static int l_randomseed(lua_State *L) {
  sim_lua_sandbox *sb = sandbox_of(L);
  uint64_t n1, n2;
  if (lua_isnone(L, 1)) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    n1 = (uint64_t)ts.tv_sec ^ ((uint64_t)ts.tv_nsec << 20);
    n2 = (uint64_t)(uintptr_t)sb;
  } else {
    n1 = (uint64_t)luaL_checkinteger(L, 1);
    n2 = (uint64_t)luaL_optinteger(L, 2, 0);
  }
  rng_lock(sb);
  set_seed(sb->rng->s, n1, n2);
  rng_unlock(sb);
  lua_pushinteger(L, (lua_Integer)n1);
  lua_pushinteger(L, (lua_Integer)n2);
  return 2;
}

/* Replaces math.random and math.randomseed (the math table is on top). */
void sim__lua_open_random(lua_State *L) {
  lua_pushcfunction(L, l_random);
  lua_setfield(L, -2, "random");
  lua_pushcfunction(L, l_randomseed);
  lua_setfield(L, -2, "randomseed");
}

/* Seeds a generator as math.randomseed(seed) does; see lua_int.h. */
void sim__lua_rng_seed(sim_lua_rng *g, int64_t seed) {
  set_seed(g->s, (uint64_t)seed, 0);
}
