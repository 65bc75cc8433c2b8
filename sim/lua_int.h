/*
 * lua_int.h - internals shared by the Lua scenario engine (sim/lua_*.c).
 *
 * Only sim/lua_*.c include this header, and they include lua.h themselves:
 * it names lua_State by its struct tag so that it needs no Lua header.
 *
 *   lua_sandbox.c   the state: allocator budget, instruction hook, the safe
 *                   libraries, the one pcall wrapper and its messages;
 *                   it calls no other lua_*.c file but lua_random.c
 *   lua_random.c    math.random from a generator the states of one
 *                   scenario share
 *   lua_shared.c    `shared`: values the states of one scenario share
 *   lua_steps.c     the step constructors and Lua step -> sim_step
 *   lua_json.c      Lua tables <-> JSON text
 *   lua_scenario.c  scenario{...}, loading, the sim__scenario_* functions
 *   lua_where.c     error positions: the line of the key a message is about
 */
#ifndef FUSEBOX_SIM_LUA_INT_H
#define FUSEBOX_SIM_LUA_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/sim_int.h"

struct lua_State;

/* Memory one scenario's Lua state may hold. */
#ifndef FUSEBOX_LUA_MEM_MAX
#define FUSEBOX_LUA_MEM_MAX ((size_t)64 << 20)
#endif
/* Lua VM instructions one call into a scenario may run. */
#ifndef FUSEBOX_LUA_INSN_MAX
#define FUSEBOX_LUA_INSN_MAX 10000000L
#endif
/* CPU time one call into a scenario may use, in milliseconds (the thread's
   CPU clock, checked by the count hook every few hundred instructions and
   by every library call charged by the size of its input). */
#ifndef FUSEBOX_LUA_CPU_MAX_MS
#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer makes every allocation several times slower: the memory
   limit must still be reached before the CPU limit in the sanitizer build. */
#define FUSEBOX_LUA_CPU_MAX_MS 8000L
#else
#define FUSEBOX_LUA_CPU_MAX_MS 1000L
#endif
#endif
/* Largest scenario file read. */
#define FUSEBOX_LUA_FILE_MAX ((size_t)1 << 20)
/* Deepest request body turned into `req.body`; deeper bodies give nil. */
#define FUSEBOX_LUA_BODY_DEPTH 64
/* Largest request body turned into `req.body`; larger bodies give nil. */
#define FUSEBOX_LUA_BODY_MAX ((size_t)8 << 20)
/* Largest JSON text made of a `client`, `expect` or `ratelimit` table. */
#define FUSEBOX_LUA_JSON_MAX ((size_t)256 << 10)
/* Deepest table turned into JSON. */
#define FUSEBOX_LUA_JSON_DEPTH 32

/* Registry names of the engine's private userdata types. */
#define SIM_LUA_STEP_MT "fusebox.step"
#define SIM_LUA_SCENARIO_MT "fusebox.scenario"
#define SIM_LUA_REQ_MT "fusebox.req"

/* The state of a math.random generator (Lua 5.4's xoshiro256**). */
typedef struct sim_lua_rng {
  uint64_t s[4];
} sim_lua_rng;

/* Seeds g as math.randomseed(seed) does. */
void sim__lua_rng_seed(sim_lua_rng *g, int64_t seed);
/* Replaces random and randomseed in the math table on top of the stack by
   the ones drawing from the sandbox's `rng` (lua_random.c). */
void sim__lua_open_random(struct lua_State *L);

/* The values behind `shared`, one store per scenario (lua_shared.c).
   Thread-safe. */
typedef struct sim_lua_shared sim_lua_shared;
/* An empty store, owned by the caller; NULL when out of memory. */
sim_lua_shared *sim__lua_shared_new(void);
/* Releases a store; NULL is a no-op. No state may use it any more. */
void sim__lua_shared_free(sim_lua_shared *sh);
/* Defines the global `shared` over sh (borrowed: it must outlive L). */
void sim__lua_open_shared(struct lua_State *L, sim_lua_shared *sh);

/*
 * One sandboxed Lua state and its accounting. The allocator and the hook
 * find it through the allocator's user data. Not thread-safe: the owner
 * serialises every use.
 */
/*
 * The clocks the calling thread's sandboxes read (each in ms; NULL: the
 * real one, CLOCK_THREAD_CPUTIME_ID and CLOCK_MONOTONIC). For tests: the
 * CPU limit is then decided by the given clock, not by the machine's load.
 * Thread-local; the caller keeps the functions valid while set.
 */
void sim__lua_clocks(double (*cpu_ms)(void), double (*wall_ms)(void));

/* Size classes of 16 bytes up to 512 whose freed blocks a state keeps,
   and how many bytes of them at most (the rest go back to malloc): a
   decision's garbage is a few small tables and userdata, freed and made
   again request after request, and one collection frees hundreds of
   requests' worth at once, so 32 blocks a class were not enough (5 mallocs
   a request; issue 30). */
#define SIM_LUA_SPARE_CLASSES 32
#define SIM_LUA_SPARE_BYTES (512 * 1024)

/*
 * Values a request's path needs from its state, found without a registry
 * lookup (issue 30: a lua_rawgetp on the registry was ~140 instructions,
 * four a request): the step and req metatables, by address to tell a step
 * from another userdata and by registry reference to push them. Set by
 * the scenario loader (lua_steps.c, lua_scenario.c); every state's extra
 * space points at its own (sim__lua_fast).
 */
typedef struct sim_lua_fast {
  const void *step_mt; /* the step metatable, for lua_topointer compares */
  int step_mt_ref;     /* its registry reference */
  int req_mt_ref;      /* req's metatable's registry reference */
} sim_lua_fast;

typedef struct sim_lua_sandbox {
  struct lua_State *L;
  const char *path;     /* the scenario file, as messages name it (borrowed) */
  char short_src[64];   /* how Lua abbreviates path in its own messages */
  size_t mem_used;      /* bytes the state holds now */
  size_t mem_max;
  int mem_denied;       /* 1: the allocator refused a request in this call */
  long insn_used;       /* instructions run by the current call, in hook steps */
  long insn_max;
  int insn_exceeded;    /* 1: the current call ran out; every hook raises */
  long cpu_max_ms;      /* CPU time per call; 0 = FUSEBOX_LUA_CPU_MAX_MS */
  double cpu_deadline;  /* thread CPU ms at which the current call stops */
  int cpu_exceeded;     /* 1: the current call ran out of CPU time */
  int line;             /* last scenario line the hook saw in this call; 0 = none */
  sim_lua_rng rng_own;  /* the state's own generator, used while it loads */
  sim_lua_rng *rng;     /* what math.random draws from: rng_own, or the
                           scenario's shared one (borrowed) */
  pthread_mutex_t *rng_mu; /* guards *rng when shared; NULL = not shared */
  void *spare[SIM_LUA_SPARE_CLASSES]; /* freed small blocks kept for reuse, a
                                         list a size class (lua_sandbox.c) */
  size_t spare_bytes;   /* their bytes, at most SIM_LUA_SPARE_BYTES */
  sim_lua_fast fast;    /* the state's extra space points here */
} sim_lua_sandbox;

/* The sim_lua_fast of L's state (a coroutine's too: Lua copies the extra
   space into every thread it makes). */
#define sim__lua_fast(L) (*(sim_lua_fast **)lua_getextraspace(L))

/*
 * Opens a sandboxed state for the file at `path` (borrowed; must outlive
 * the sandbox): the allocator budget, the safe libraries and math.random
 * seeded with `seed`. The step constructors and scenario{} are the
 * scenario loader's to add (lua_scenario.c). Returns 0, or SIM_ENOMEM with
 * a message in err.
 */
int sim__lua_open(sim_lua_sandbox *sb, const char *path, uint64_t seed,
                  char err[SIM_ERRLEN]);
/* Closes the state; scenario finalizers cannot run long. Safe twice. */
void sim__lua_close(sim_lua_sandbox *sb);
/*
 * The one way into Lua: calls the function below `nargs` arguments on the
 * stack in protected mode, with a fresh instruction and CPU-time budget and
 * a traceback handler. Returns 0 with `nresults` results pushed, or `code` with
 * "file:line: message" in err and nothing pushed.
 */
int sim__lua_call(sim_lua_sandbox *sb, int nargs, int nresults, int code,
                  char err[SIM_ERRLEN]);
/* Reseeds the generator math.random draws from (any time). */
void sim__lua_seed(struct lua_State *L, int64_t seed);

/* Defines the step constructors and their metatables as globals. */
void sim__lua_open_steps(struct lua_State *L);
/* 1 if the value at idx is a step made by a constructor. */
int sim__lua_is_step(struct lua_State *L, int idx);
/* The kind of the step at idx (which must be a step). */
sim_step_kind sim__lua_step_kind(struct lua_State *L, int idx);
/* 1 if the step at idx is or wraps an effect{} step. */
int sim__lua_step_has_effect(struct lua_State *L, int idx);
/* -1 when the value at idx is not a step, 1 when it is one that is or wraps
   an effect{}, 0 for another step. */
int sim__lua_step_check(struct lua_State *L, int idx);
/*
 * Converts the step at idx into a heap sim_step at *slot (NULL before).
 * Raises a Lua error on failure, so call it inside a protected call; *slot
 * holds the step from its allocation on, and the caller frees it whether
 * the call raised or not, so an error never leaks (and no box is made).
 */
void sim__lua_step_convert(struct lua_State *L, int idx, sim_step **slot);

/* The name in the NULL-terminated `known` closest to `key` when `key` looks
   like a typo of it (the rule of common/suggest.h), else NULL. */
const char *sim__lua_suggest(const char *key, const char *const *known);
/* The step constructor (or scenario) a misspelt global name most likely
   meant ("fial" -> "fail"), else NULL; a static string. */
const char *sim__lua_step_suggest(const char *name);

/*
 * Registers the scenario file's source map, so that messages about a key of
 * the table passed to scenario{} name the key's line; NULL clears it. The
 * map is borrowed: it must outlive the registration.
 */
void sim__lua_set_srcmap(struct lua_State *L, const sim_srcmap *m);
/* The current line of the Lua function calling the running C function, or 0. */
int sim__lua_call_line(struct lua_State *L);
/*
 * Raises "file:line: message" where line is the line of `path` ("client",
 * "providers[2].name", "expect.backoff.min_gap") in the table passed to the
 * scenario{} call being run, or of its nearest enclosing key that is written
 * out, or the call's own line. Never returns.
 */
void sim__lua_error_at(struct lua_State *L, const char *path, const char *fmt, ...);

/* Defines scenario{} as a global. */
void sim__lua_open_scenario(struct lua_State *L);

/*
 * Pushes the JSON text of the table at idx; `what` names it in errors
 * ("client"). Raises a Lua error for functions, mixed or sparse tables,
 * non-finite numbers, too deep or too large tables.
 */
void sim__lua_push_json_text(struct lua_State *L, int idx, const char *what);
/*
 * Pushes the JSON text `text` as a Lua value (objects as tables, arrays as
 * lists from 1, null as nil); pushes nil when it is not JSON or nests deeper
 * than max_depth.
 */
void sim__lua_push_json_value(struct lua_State *L, const char *text,
                              size_t len, int max_depth);

/*
 * Test hooks of the scenario engine (lua_scenario.c): what tests and the
 * benchmarks observe of the per-loop Lua states.
 */
typedef struct sim_scenario_stats {
  int loops;              /* Lua states open (one per thread that asked) */
  long waits;             /* decisions that found their state's lock taken */
  long body_conversions;  /* req.body tables made (only when read) */
} sim_scenario_stats;
void sim__scenario_stats(const sim_scenario *sc, sim_scenario_stats *out);
/* Called on the deciding thread, with its state locked, right before each
   provider function or list is consulted; `loop` is the state's index. */
typedef void (*sim_lua_call_hook)(void *arg, int loop);
/* Sets the hook (NULL: none). Set it before any decision. */
void sim__scenario_set_hook(sim_scenario *sc, sim_lua_call_hook fn, void *arg);
/* Caps the Lua states at n (1..16; default 16): 1 gives the single shared,
   locked state of old, for comparison (bench/lua_loops.c). Set it before
   any decision. */
void sim__scenario_set_max_loops(sim_scenario *sc, int n);

#endif
