/*
 * lua_sandbox.c - one sandboxed Lua state per scenario.
 *
 * What a scenario can reach: base (without dofile, loadfile, print; load
 * only compiles text; no __gc finalizers; see sb_xpcall), string (without
 * dump), table, math (seeded; random from lua_random.c), utf8 and an `os` holding only clock and time. What bounds it: an allocator
 * with a byte budget, and a count hook with an instruction budget and a
 * CPU-time deadline per call into Lua. Library functions whose work in C
 * grows with their input (pattern matching, utf8.*, tonumber and string
 * arithmetic, table.sort/move/insert/remove) are charged for it up front,
 * so no single instruction runs long between two looks at the clock. Once over budget the hook is re-armed to fire on every
 * instruction and every line and raise each time, so a scenario's pcall
 * can catch the error but can never run on after it. Every call goes
 * through sim__lua_call: lua_pcall with a traceback handler, whose first
 * line becomes "file:line: message". (Modelled on redis script_lua.c and
 * Lua's own lua.c docall.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "sim/lua_int.h"

_Static_assert(sizeof(((sim_lua_sandbox *)0)->short_src) >= LUA_IDSIZE,
               "short_src must hold a Lua chunk id");

/* Instructions between two hook calls while under budget: each call also
   looks at the clocks (sb_out_of_time), so the deadline is seen within a
   few hundred instructions. */
#define SB_HOOK_STEP 250

/* Input bytes a library function may scan for the cost of one instruction
   (see sb_costly). */
#define SB_SCAN_BYTES_PER_INSN 8

/* Bytes allocated that cost as much as one instruction (see sb_alloc). */
#define SB_BYTES_PER_INSN 32

static sim_lua_sandbox *sandbox_of(lua_State *L) {
  void *ud = NULL;
  lua_getallocf(L, &ud);
  return ud;
}

/* The size class of a block of n bytes (n > 0): 0 for 1-16 ... 31 for
   497-512; SIM_LUA_SPARE_CLASSES for a larger one, which is not kept. A
   kept block is malloc'd at its class's full size, so any block of the
   class can serve any request of it. */
static int sb_class(size_t n) {
  return n <= 16 * SIM_LUA_SPARE_CLASSES ? (int)((n - 1) / 16) : SIM_LUA_SPARE_CLASSES;
}

/* The bytes of a kept block of class c. */
static size_t sb_class_size(int c) { return 16 * (size_t)(c + 1); }

/* A block of n bytes: a kept one of its class, else a new one. */
static void *sb_get(sim_lua_sandbox *sb, size_t n) {
  int c = sb_class(n);
  if (c == SIM_LUA_SPARE_CLASSES) return malloc(n);
  void *p = sb->spare[c];
  if (p == NULL) return malloc(sb_class_size(c));
  sb->spare[c] = *(void **)p; /* the next one, kept in the block itself */
  sb->spare_bytes -= sb_class_size(c);
  return p;
}

/* Frees block p of n bytes, or keeps it for its class. */
static void sb_put(sim_lua_sandbox *sb, void *p, size_t n) {
  int c = sb_class(n);
  if (c == SIM_LUA_SPARE_CLASSES || sb->spare_bytes + sb_class_size(c) > SIM_LUA_SPARE_BYTES) {
    free(p);
    return;
  }
  *(void **)p = sb->spare[c];
  sb->spare[c] = p;
  sb->spare_bytes += sb_class_size(c);
}

/* Frees the kept blocks. */
static void sb_drain(sim_lua_sandbox *sb) {
  for (int c = 0; c < SIM_LUA_SPARE_CLASSES; c++) {
    while (sb->spare[c] != NULL) {
      void *p = sb->spare[c];
      sb->spare[c] = *(void **)p;
      free(p);
    }
  }
  sb->spare_bytes = 0;
}

/* A block of nsize bytes for block ptr of osize: the same when both sizes
   are of one kept class, else a new one with ptr's bytes (ptr freed). */
static void *sb_resize(sim_lua_sandbox *sb, void *ptr, size_t osize, size_t nsize) {
  int oc = sb_class(osize), nc = sb_class(nsize);
  if (oc == SIM_LUA_SPARE_CLASSES && nc == SIM_LUA_SPARE_CLASSES) return realloc(ptr, nsize);
  if (oc == nc) return ptr;
  void *p = sb_get(sb, nsize);
  if (p == NULL) return NULL;
  memcpy(p, ptr, osize < nsize ? osize : nsize);
  sb_put(sb, ptr, osize);
  return p;
}

/*
 * The allocator: malloc and free (small blocks kept a while for reuse, a
 * list a size class), but a request that would take the state over its
 * budget fails, which Lua turns into a memory error.
 */
static void *sb_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  sim_lua_sandbox *sb = ud;
  size_t old = ptr != NULL ? osize : 0; /* for new blocks osize is a type tag */
  if (nsize == 0) {
    if (ptr != NULL) sb_put(sb, ptr, osize);
    sb->mem_used -= old;
    return NULL;
  }
  if (nsize > old && sb->mem_used - old + nsize > sb->mem_max) {
    sb->mem_denied = 1;
    return NULL;
  }
  void *p = ptr == NULL ? sb_get(sb, nsize) : sb_resize(sb, ptr, osize, nsize);
  if (p == NULL) return NULL;
  sb->mem_used = sb->mem_used - old + nsize;
  /* Work done in C (string.rep, .., table.concat) is out of the hook's
     reach, but it allocates: growing memory is charged as instructions, so
     a loop of big copies that stays under the memory limit still stops. The
     next hook call raises once the budget is gone. */
  if (nsize > old) sb->insn_used += (long)((nsize - old) / SB_BYTES_PER_INSN);
  return p;
}

/*
 * The thread's CPU clock, read for real only when needed: it is a system
 * call (CLOCK_THREAD_CPUTIME_ID has no vDSO path), and read at every call
 * into Lua it took 8.7 % of a loaded server's CPU (issue 13, perf). A
 * thread uses at most as much CPU as wall time passes, so the last real
 * reading plus the wall time since bounds the CPU clock from above, and
 * that bound, read on the cheap monotonic clock, decides most checks.
 */
#define SB_CPU_REREAD_MS 10.0 /* a call's deadline is at most this early */

static __thread double tl_cpu_ms;  /* the thread's CPU clock at its last real read */
static __thread double tl_wall_ms; /* the monotonic clock then; 0 = never read */
static __thread double (*tl_cpu_clock)(void);  /* NULL: CLOCK_THREAD_CPUTIME_ID */
static __thread double (*tl_wall_clock)(void); /* NULL: CLOCK_MONOTONIC */

static double sb_ms(clockid_t id) {
  struct timespec ts;
  if (clock_gettime(id, &ts) != 0) return 0;
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Sets the calling thread's clocks; see lua_int.h. */
void sim__lua_clocks(double (*cpu_ms)(void), double (*wall_ms)(void)) {
  tl_cpu_clock = cpu_ms;
  tl_wall_clock = wall_ms;
  tl_wall_ms = 0; /* the next check reads the new clocks */
}

static double sb_wall(void) { return tl_wall_clock ? tl_wall_clock() : sb_ms(CLOCK_MONOTONIC); }

/* Reads the thread's CPU clock for real; returns it. */
static double sb_cpu_read(double wall) {
  tl_cpu_ms = tl_cpu_clock ? tl_cpu_clock() : sb_ms(CLOCK_THREAD_CPUTIME_ID);
  tl_wall_ms = wall;
  return tl_cpu_ms;
}

/* A CPU-clock reading no later than now, at most SB_CPU_REREAD_MS old:
   the base of a call's deadline (so the deadline is never late). */
static double sb_cpu_base(void) {
  double wall = sb_wall();
  if (tl_wall_ms == 0 || wall - tl_wall_ms > SB_CPU_REREAD_MS) return sb_cpu_read(wall);
  return tl_cpu_ms;
}

/* 1 when the current call has used up its CPU time: decided by the upper
   bound when it is under the deadline, else by a real reading. */
static int sb_out_of_time(sim_lua_sandbox *sb) {
  if (sb->cpu_exceeded) return 1;
  double wall = sb_wall();
  if (tl_wall_ms != 0 && tl_cpu_ms + (wall - tl_wall_ms) <= sb->cpu_deadline) return 0;
  if (sb_cpu_read(wall) > sb->cpu_deadline) sb->cpu_exceeded = 1;
  return sb->cpu_exceeded;
}

/*
 * The count hook. Under budget it counts, looks at the CPU clock and notes
 * the scenario line being run (for limit messages). Over budget it fires
 * on every instruction and raises every time.
 */
static void sb_hook(lua_State *L, lua_Debug *ar) {
  sim_lua_sandbox *sb = sandbox_of(L);
  if (!sb->insn_exceeded) {
    sb->insn_used += SB_HOOK_STEP;
    if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0 &&
        strcmp(ar->short_src, sb->short_src) == 0)
      sb->line = ar->currentline;
    if (sb->insn_used <= sb->insn_max && !sb_out_of_time(sb)) return;
    sb->insn_exceeded = 1;
    lua_sethook(L, sb_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  }
  if (sb->cpu_exceeded) lua_pushliteral(L, "CPU time limit exceeded");
  else lua_pushliteral(L, "instruction limit exceeded");
  lua_error(L);
}

/*
 * Charges `cost` instructions to the current call for work done in C, where
 * the hook cannot count; over budget it raises as the hook does.
 */
static void sb_charge(lua_State *L, double cost) {
  sim_lua_sandbox *sb = sandbox_of(L);
  if (!sb->insn_exceeded && cost < (double)(sb->insn_max - sb->insn_used) &&
      (cost < SB_HOOK_STEP || !sb_out_of_time(sb))) {
    sb->insn_used += (long)cost;
    return;
  }
  if (!sb->insn_exceeded) {
    lua_Debug ar;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) &&
        ar.currentline > 0 && strcmp(ar.short_src, sb->short_src) == 0)
      sb->line = ar.currentline;
    sb->insn_exceeded = 1;
    lua_sethook(L, sb_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  }
  if (sb->cpu_exceeded) lua_pushliteral(L, "CPU time limit exceeded");
  else lua_pushliteral(L, "instruction limit exceeded");
  lua_error(L);
}

/* 1 if only ')' follow position i: a quantifier there ends the match at
   once instead of backtracking. */
static int trailing(const char *p, size_t i, size_t pl) {
  for (; i < pl; i++)
    if (p[i] != ')') return 0;
  return 1;
}

/*
 * An upper bound of the steps Lua's backtracking matcher may take for
 * pattern p against n bytes: every unbounded item (*, +, - not at the end;
 * %b; back-references) multiplies by n, every ? by 2, an unanchored search
 * by n once more. Over-counting (a '-' inside a set) only makes it safer.
 */
static double pattern_cost(const char *p, size_t pl, size_t n) {
  if (strpbrk(p, "^$*+?.([%-") == NULL || strlen(p) != pl)
    return ((double)n + 1) * ((double)pl + 1); /* a plain search */
  size_t i = p[0] == '^' ? 1 : 0;
  int k = i ? 0 : 1, q = 0;
  for (; i < pl; i++) {
    char c = p[i];
    if (c == '%' && i + 1 < pl) {
      char d = p[++i];
      if (d == 'b') {
        k++;
        i += 2;
      } else if (d >= '0' && d <= '9') {
        k++;
      }
    } else if (c == '[') {
      i++;
      if (i < pl && p[i] == '^') i++;
      do {
        if (i < pl && p[i] == '%') i++;
        i++;
      } while (i < pl && p[i] != ']');
    } else if (c == '*' || c == '+' || c == '-') {
      if (!trailing(p, i + 1, pl)) k++;
    } else if (c == '?') {
      q++;
    }
  }
  double cost = ((double)pl + 1) * pow((double)n + 1, k) * pow(2, q < 60 ? q : 60);
  return cost < 1e18 ? cost : 1e18;
}

/* Which pattern function a sb_pattern closure wraps (upvalue 2). */
enum { SB_FIND, SB_MATCH, SB_GMATCH, SB_GSUB };

/* string.find/match/gmatch/gsub: charge the pattern's worst case, then run
   the original (upvalue 1). */
static int sb_pattern(lua_State *L) {
  int which = (int)lua_tointeger(L, lua_upvalueindex(2));
  size_t n = 0, pl = 0;
  luaL_checklstring(L, 1, &n);
  const char *p = luaL_checklstring(L, 2, &pl);
  if (which != SB_GSUB) { /* init: only the rest of the subject is searched */
    lua_Integer init = luaL_optinteger(L, 3, 1);
    if (init > 1)
      n = (size_t)init - 1 < n ? n - ((size_t)init - 1) : 0;
    else if (init < 0 && (lua_Unsigned)0 - (lua_Unsigned)init < n)
      n = (size_t)((lua_Unsigned)0 - (lua_Unsigned)init); /* no -mininteger */
  }
  double cost;
  if (which == SB_FIND && lua_toboolean(L, 4))
    cost = ((double)n + 1) * ((double)pl + 1); /* a plain search */
  else
    cost = pattern_cost(p, pl, n);
  sb_charge(L, cost);
  lua_CFunction orig = lua_tocfunction(L, lua_upvalueindex(1));
  return orig(L);
}

/*
 * Library functions whose C work grows with their input, charged for it
 * before they run (upvalue 1 the original, upvalue 2 what to charge):
 * SB_COST_STR1 the bytes of a string first argument (utf8.len, codepoint,
 * offset; tonumber), SB_COST_STRS the bytes of every string argument
 * (string arithmetic, which converts its operands), SB_COST_LEN1 the length
 * of the table argument (table.insert/remove shift it), SB_COST_MOVE the
 * elements moved, SB_COST_SORT n log n comparisons, each as long as the
 * longest string element.
 */
enum { SB_COST_STR1, SB_COST_STRS, SB_COST_LEN1, SB_COST_MOVE, SB_COST_SORT };

static int sb_costly(lua_State *L) {
  int kind = (int)lua_tointeger(L, lua_upvalueindex(2));
  double cost = 1;
  if (kind == SB_COST_STR1 && lua_type(L, 1) == LUA_TSTRING) {
    cost += (double)lua_rawlen(L, 1) / SB_SCAN_BYTES_PER_INSN;
  } else if (kind == SB_COST_STRS) {
    for (int i = 1; i <= lua_gettop(L); i++)
      if (lua_type(L, i) == LUA_TSTRING)
        cost += (double)lua_rawlen(L, i) / SB_SCAN_BYTES_PER_INSN;
  } else if (kind == SB_COST_LEN1 && lua_type(L, 1) == LUA_TTABLE) {
    cost += (double)lua_rawlen(L, 1);
  } else if (kind == SB_COST_MOVE && lua_isinteger(L, 2) && lua_isinteger(L, 3)) {
    lua_Integer f = lua_tointeger(L, 2), e = lua_tointeger(L, 3);
    if (e >= f) cost += (double)e - (double)f;
  } else if (kind == SB_COST_SORT && lua_type(L, 1) == LUA_TTABLE) {
    lua_Unsigned n = lua_rawlen(L, 1);
    size_t longest = 0;
    for (lua_Unsigned i = 1; i <= n; i++) { /* n is bounded by the memory */
      if (lua_rawgeti(L, 1, (lua_Integer)i) == LUA_TSTRING && lua_rawlen(L, -1) > longest)
        longest = lua_rawlen(L, -1);
      lua_pop(L, 1);
    }
    cost += (double)n * log2((double)n + 1) *
            (1.0 + (double)longest / SB_SCAN_BYTES_PER_INSN);
  }
  sb_charge(L, cost);
  lua_CFunction orig = lua_tocfunction(L, lua_upvalueindex(1));
  return orig(L);
}

/* Wraps field `name` of the table at the top of the stack in sb_costly. */
static void sb_wrap(lua_State *L, const char *name, int kind) {
  if (lua_getfield(L, -1, name) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return;
  }
  lua_pushinteger(L, kind);
  lua_pushcclosure(L, sb_costly, 2);
  lua_setfield(L, -2, name);
}

/* Arms the hook with a fresh budget. */
static void sb_arm(sim_lua_sandbox *sb) {
  sb->insn_used = 0;
  sb->insn_exceeded = 0;
  sb->cpu_exceeded = 0;
  sb->cpu_deadline = sb_cpu_base() + (double)sb->cpu_max_ms;
  sb->mem_denied = 0;
  sb->line = 0;
  lua_sethook(sb->L, sb_hook, LUA_MASKCOUNT, SB_HOOK_STEP);
}

/*
 * Lua says "attempt to call a nil value (global 'fial')" for a misspelt
 * step; a scenario's author needs "unknown step 'fial' (did you mean
 * 'fail'?)". Returns msg with that part rewritten (pushed on the stack), or
 * msg itself when it is another error or the name is near no step (a
 * sandboxed `require` keeps Lua's own words).
 */
static const char *unknown_step(lua_State *L, const char *msg) {
  static const char pat[] = "attempt to call a nil value (global '";
  const char *at = strstr(msg, pat);
  if (at == NULL) return msg;
  const char *name = at + sizeof pat - 1;
  const char *end = strchr(name, '\'');
  if (end == NULL || end - name > 63) return msg;
  char word[64];
  memcpy(word, name, (size_t)(end - name));
  word[end - name] = '\0';
  const char *near = sim__lua_step_suggest(word);
  if (near == NULL) return msg; /* not near a step: Lua's words say it */
  const char *rest = end[1] == ')' ? end + 2 : end + 1;
  char out[512];
  snprintf(out, sizeof out, "%.*sunknown step '%s' (did you mean '%s'?)%s",
           (int)(at - msg), msg, word, near, rest);
  return lua_pushstring(L, out);
}

/*
 * The message handler: makes sure the message starts with the position of
 * the innermost scenario line (errors raised with level 0, non-string error
 * values, errors from chunks the scenario load()ed) and appends a traceback.
 */
static int sb_msgh(lua_State *L) {
  sim_lua_sandbox *sb = sandbox_of(L);
  const char *msg = NULL;
  int t = lua_type(L, 1);
  if (t == LUA_TSTRING || t == LUA_TNUMBER)
    msg = lua_tostring(L, 1);
  else
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  size_t n = strlen(sb->short_src);
  if (n == 0 || strncmp(msg, sb->short_src, n) != 0 || msg[n] != ':') {
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
      if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0 &&
          strcmp(ar.short_src, sb->short_src) == 0) {
        msg = lua_pushfstring(L, "%s:%d: %s", sb->short_src, ar.currentline,
                              msg);
        break;
      }
    }
  }
  msg = unknown_step(L, msg);
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Writes the first line of a message into err, naming the file by its full
   path where Lua abbreviated it, and prefixing the path when absent. */
static void sb_message(sim_lua_sandbox *sb, const char *msg,
                       char err[SIM_ERRLEN]) {
  int len = (int)strcspn(msg, "\n");
  size_t n = strlen(sb->short_src), pn = strlen(sb->path);
  if (n > 0 && strncmp(msg, sb->short_src, n) == 0 && msg[n] == ':')
    snprintf(err, SIM_ERRLEN, "%s%.*s", sb->path, len - (int)n, msg + n);
  else if (strncmp(msg, sb->path, pn) == 0 && msg[pn] == ':')
    snprintf(err, SIM_ERRLEN, "%.*s", len, msg);
  else
    snprintf(err, SIM_ERRLEN, "%s: %.*s", sb->path, len, msg);
}

/* "path:line: what" with the line the hook last saw, or "path: what". */
static void sb_limit_message(sim_lua_sandbox *sb, const char *what,
                             char err[SIM_ERRLEN]) {
  if (sb->line > 0)
    snprintf(err, SIM_ERRLEN, "%s:%d: %s", sb->path, sb->line, what);
  else
    snprintf(err, SIM_ERRLEN, "%s: %s", sb->path, what);
}

/* Formats the error value at idx after a failed call with `status`. */
static void sb_error(sim_lua_sandbox *sb, int status, int idx,
                     char err[SIM_ERRLEN]) {
  lua_State *L = sb->L;
  const char *msg = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx)
                                                     : "(no error message)";
  if (sb->cpu_exceeded)
    sb_limit_message(sb, "CPU time limit exceeded", err);
  else if (sb->insn_exceeded)
    sb_limit_message(sb, "instruction limit exceeded", err);
  else if (status == LUA_ERRMEM ||
           (sb->mem_denied && (status == LUA_ERRERR ||
                               strstr(msg, "not enough memory") != NULL)))
    sb_limit_message(sb, "memory limit exceeded", err);
  else
    sb_message(sb, msg, err);
}

/* Calls the function below nargs arguments; see lua_int.h. */
int sim__lua_call(sim_lua_sandbox *sb, int nargs, int nresults, int code,
                  char err[SIM_ERRLEN]) {
  lua_State *L = sb->L;
  int base = lua_gettop(L) - nargs; /* the function's index */
  lua_pushcfunction(L, sb_msgh);    /* a light C function: no allocation */
  lua_insert(L, base);
  sb_arm(sb);
  int status = lua_pcall(L, nargs, nresults, base);
  if (status == LUA_OK) {
    lua_remove(L, base);
    return 0;
  }
  sb_error(sb, status, -1, err);
  lua_settop(L, base - 1);
  return code;
}

/* load(chunk [, name [, mode [, env]]]) with mode forced to text. */
static int sb_load(lua_State *L) {
  lua_CFunction orig = lua_tocfunction(L, lua_upvalueindex(1));
  int n = lua_gettop(L);
  if (n < 3) {
    lua_settop(L, 2);
    lua_pushliteral(L, "t");
  } else {
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
  }
  return orig(L);
}

/*
 * Lua runs two kinds of scenario code with hooks switched off, where the
 * instruction limit cannot reach: __gc finalizers, and the message handler
 * of an xpcall when the error was raised by the hook itself. So finalizers
 * are refused, and xpcall calls its handler after the failed call has
 * unwound (scenarios have no debug library, so a handler cannot tell).
 */
static int sb_setmetatable(lua_State *L) {
  lua_CFunction orig = lua_tocfunction(L, lua_upvalueindex(1));
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL)
      return luaL_error(L, "__gc metamethods are not allowed in scenarios");
    lua_pop(L, 1);
  }
  return orig(L);
}

/* xpcall(f, handler, ...): see above. */
static int sb_xpcall(lua_State *L) {
  int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  luaL_checkstack(L, n + 2, "too many arguments");
  lua_pushvalue(L, 1);
  for (int i = 3; i <= n; i++) lua_pushvalue(L, i);
  int status = lua_pcall(L, n - 2, LUA_MULTRET, 0);
  if (status == LUA_OK) {
    lua_pushboolean(L, 1);
    lua_insert(L, n + 1);
    return lua_gettop(L) - n;
  }
  if (status == LUA_ERRRUN) {
    lua_pushvalue(L, 2);
    lua_insert(L, -2);
    lua_pcall(L, 1, 1, 0); /* the handler's result, or its own error */
  }
  lua_pushboolean(L, 0);
  lua_insert(L, -2);
  return 2;
}

static int sb_os_clock(lua_State *L) {
  lua_pushnumber(L, (lua_Number)clock() / (lua_Number)CLOCKS_PER_SEC);
  return 1;
}

static int sb_os_time(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)time(NULL));
  return 1;
}

static const luaL_Reg sb_os_funcs[] = {
  {"clock", sb_os_clock},
  {"time", sb_os_time},
  {NULL, NULL},
};

static const luaL_Reg sb_libs[] = {
  {LUA_GNAME, luaopen_base},         {LUA_STRLIBNAME, luaopen_string},
  {LUA_TABLIBNAME, luaopen_table},   {LUA_MATHLIBNAME, luaopen_math},
  {LUA_UTF8LIBNAME, luaopen_utf8},   {NULL, NULL},
};

/* String functions whose pattern matching runs in C, out of the hook's
   reach: each is charged its worst case first (sb_pattern). */
static const char *const sb_pattern_funcs[] = {"find", "match", "gmatch",
                                               "gsub", NULL}; /* SB_FIND.. */

/* Global names removed from the base library. */
static const char *const sb_removed[] = {"dofile", "loadfile", "print", NULL};

/* Reseeds the generator math.random draws from, which the scenario cannot
   replace (its own math.randomseed reseeds the same generator). */
void sim__lua_seed(lua_State *L, int64_t seed) {
  sim_lua_sandbox *sb = sandbox_of(L);
  if (sb->rng_mu != NULL) pthread_mutex_lock(sb->rng_mu);
  sim__lua_rng_seed(sb->rng, seed);
  if (sb->rng_mu != NULL) pthread_mutex_unlock(sb->rng_mu);
}

/* Builds the sandbox (protected): arguments are the seed. */
static int sb_setup(lua_State *L) {
  int64_t seed = (int64_t)lua_tointeger(L, 1);
  for (const luaL_Reg *lib = sb_libs; lib->func != NULL; lib++) {
    luaL_requiref(L, lib->name, lib->func, 1);
    lua_pop(L, 1);
  }
  for (int i = 0; sb_removed[i] != NULL; i++) {
    lua_pushnil(L);
    lua_setglobal(L, sb_removed[i]);
  }
  lua_getglobal(L, "load");
  lua_pushcclosure(L, sb_load, 1);
  lua_setglobal(L, "load");
  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, sb_setmetatable, 1);
  lua_setglobal(L, "setmetatable");
  lua_pushcfunction(L, sb_xpcall);
  lua_setglobal(L, "xpcall");

  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  for (int i = 0; sb_pattern_funcs[i] != NULL; i++) {
    lua_getfield(L, -1, sb_pattern_funcs[i]);
    lua_pushinteger(L, i); /* SB_FIND, SB_MATCH, ... */
    lua_pushcclosure(L, sb_pattern, 2);
    lua_setfield(L, -2, sb_pattern_funcs[i]);
  }
  lua_pop(L, 1);

  static const char *const utf8_funcs[] = {"len", "codepoint", "offset", NULL};
  lua_getglobal(L, LUA_UTF8LIBNAME);
  for (int i = 0; utf8_funcs[i] != NULL; i++) sb_wrap(L, utf8_funcs[i], SB_COST_STR1);
  lua_pop(L, 1);
  lua_getglobal(L, LUA_TABLIBNAME);
  sb_wrap(L, "insert", SB_COST_LEN1);
  sb_wrap(L, "remove", SB_COST_LEN1);
  sb_wrap(L, "move", SB_COST_MOVE);
  sb_wrap(L, "sort", SB_COST_SORT);
  lua_pop(L, 1);
  lua_pushglobaltable(L);
  sb_wrap(L, "tonumber", SB_COST_STR1);
  lua_pop(L, 1);
  /* "123" + 1 converts in the string metatable's arithmetic metamethods. */
  static const char *const arith[] = {"__add", "__sub", "__mul", "__div", "__mod",
                                      "__pow", "__unm", "__idiv", NULL};
  lua_pushliteral(L, "");
  if (lua_getmetatable(L, -1)) {
    for (int i = 0; arith[i] != NULL; i++) sb_wrap(L, arith[i], SB_COST_STRS);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);

  luaL_newlib(L, sb_os_funcs);
  lua_setglobal(L, "os");

  lua_getglobal(L, LUA_MATHLIBNAME);
  sim__lua_open_random(L);
  lua_pop(L, 1);

  sim__lua_seed(L, seed);
  return 0;
}

/* Opens the sandboxed state; see lua_int.h. */
int sim__lua_open(sim_lua_sandbox *sb, const char *path, uint64_t seed,
                  char err[SIM_ERRLEN]) {
  sb->path = path;
  sb->short_src[0] = '\0';
  sb->mem_used = 0;
  sb->rng = &sb->rng_own;
  sb->rng_mu = NULL;
  if (sb->mem_max == 0) sb->mem_max = FUSEBOX_LUA_MEM_MAX;
  if (sb->insn_max == 0) sb->insn_max = FUSEBOX_LUA_INSN_MAX;
  if (sb->cpu_max_ms == 0) sb->cpu_max_ms = FUSEBOX_LUA_CPU_MAX_MS;
  sb->L = lua_newstate(sb_alloc, sb);
  if (sb->L == NULL) {
    sb_drain(sb); /* what the failed state freed */
    snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
    return SIM_ENOMEM;
  }
  memset(&sb->fast, 0, sizeof sb->fast);
  sim__lua_fast(sb->L) = &sb->fast;
  lua_pushcfunction(sb->L, sb_setup);
  lua_pushinteger(sb->L, (lua_Integer)seed);
  int rc = sim__lua_call(sb, 1, 0, SIM_ENOMEM, err);
  if (rc != 0) sim__lua_close(sb);
  return rc;
}

/*
 * Closes the state. Finalizers a scenario set (__gc) run during lua_close:
 * the hook is left raising on every instruction so none can run long.
 */
void sim__lua_close(sim_lua_sandbox *sb) {
  if (sb->L == NULL) return;
  sb->insn_exceeded = 1;
  lua_sethook(sb->L, sb_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  lua_close(sb->L);
  sb->L = NULL;
  sb_drain(sb);
}
