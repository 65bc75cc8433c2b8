/*
 * shard.h - planning which scenarios go where, from their expected
 * durations: the K-th of N shards of a suite (`fusebox run --shard K/N`),
 * and how many scenarios `fusebox run` plays at once by default. Pure
 * functions: durations are passed in, nothing is read or timed here.
 */
#ifndef FUSEBOX_CLI_SHARD_H
#define FUSEBOX_CLI_SHARD_H

#include <stddef.h>
#include <stdint.h>

#define CLI_SHARD_MAX 1000   /* N of --shard K/N */
#define CLI_SHARD_BASE_S 0.2 /* scenario seconds every session costs on top of its
                                waits (start, connections, judging) */

/* One scenario to place: a key that names it the same on every machine
   (its path below the folder it was found in) and its expected cost. */
typedef struct cli_shard_item {
  const char *key;
  double cost; /* expected duration, scenario seconds */
} cli_shard_item;

/*
 * Parses "K/N" (1 <= K <= N <= CLI_SHARD_MAX). Returns 0, or -1 with the
 * reason in err (cap bytes).
 */
int cli_shard_parse(const char *spec, int *k, int *n, char *err, size_t cap);

/*
 * Puts each of the n items in one of nbins bins, balanced by cost: the
 * items longest first (equal costs by key, then by position) each go to
 * the bin with the least cost so far (then the fewest items, then the
 * lowest index). Costs are rounded to whole milliseconds first, so the
 * plan depends only on the set of (key, cost) pairs: never on the order
 * of items, the machine or its floating point. bin[i] receives item i's
 * bin, 0-based. Returns the largest bin's cost in ms (the plan's
 * makespan), or -1 when out of memory or nbins < 1.
 */
long long cli_shard_assign(const cli_shard_item *items, size_t n, int nbins, int *bin);

/*
 * How many scenarios to play at once when -j is not given: scenarios mostly
 * wait on timers (the standard library uses 0.6 s of CPU in 27 s of
 * scenario time), so the fewest workers, from lo to hi, whose plan ends
 * when the longest item does; hi when none does. Never more than n, never
 * less than 1.
 */
int cli_shard_workers(const cli_shard_item *items, size_t n, int lo, int hi);

/*
 * An identifier of the set of keys (FNV-1a over the sorted keys), the same
 * whatever their order: shards of one suite carry it, so their reports can
 * be checked to belong together. 0 when out of memory.
 */
uint64_t cli_shard_set_id(const cli_shard_item *items, size_t n);

#endif
