/*
 * test_shard.c - the suite planner of cli/shard.c with injected durations:
 * --shard K/N parsing, a split that places every scenario exactly once,
 * balanced by expected duration, the same whatever the order of the items,
 * the set identifier, and the default number of workers.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/shard.h"

static void test_parse(void) {
  char err[160];
  int k = 0, n = 0;
  CU_ASSERT_EQUAL(cli_shard_parse("1/2", &k, &n, err, sizeof err), 0);
  CU_ASSERT_EQUAL(k, 1);
  CU_ASSERT_EQUAL(n, 2);
  CU_ASSERT_EQUAL(cli_shard_parse("7/7", &k, &n, err, sizeof err), 0);
  CU_ASSERT_EQUAL(k, 7);
  CU_ASSERT_EQUAL(cli_shard_parse("1/1", &k, &n, err, sizeof err), 0);
  const char *bad[] = {"0/2", "3/2", "x", "", "1/", "/2", "1/2x", "1/0", "-1/2", "1/-2",
                       "2", " 1/2", "1/ 2", "1/1001", "1//2", NULL};
  for (int i = 0; bad[i]; i++) {
    err[0] = '\0';
    CU_ASSERT_EQUAL(cli_shard_parse(bad[i], &k, &n, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--shard"));
  }
  CU_ASSERT_EQUAL(cli_shard_parse(NULL, &k, &n, err, sizeof err), -1);
}

/* n items "sNN.lua" with costs from a fixed pattern (some equal, some 0). */
static void make_items(cli_shard_item *it, char (*names)[16], int n) {
  for (int i = 0; i < n; i++) {
    snprintf(names[i], sizeof names[i], "s%02d.lua", i);
    it[i].key = names[i];
    it[i].cost = (double)((i * 37) % 11) * 0.5; /* 0 .. 5 s, repeats */
  }
}

static void test_every_item_once_and_balanced(void) {
  enum { N = 40 };
  cli_shard_item it[N];
  char names[N][16];
  make_items(it, names, N);
  for (int bins = 1; bins <= 6; bins++) {
    int bin[N];
    for (int i = 0; i < N; i++) bin[i] = -1;
    long long worst = cli_shard_assign(it, N, bins, bin);
    CU_ASSERT(worst >= 0);
    long long load[6] = {0}, total = 0, biggest = 0;
    for (int i = 0; i < N; i++) {
      CU_ASSERT(bin[i] >= 0 && bin[i] < bins); /* placed, and exactly once */
      if (bin[i] < 0 || bin[i] >= bins) continue;
      long long ms = (long long)(it[i].cost * 1000 + 0.5);
      load[bin[i]] += ms;
      total += ms;
      if (ms > biggest) biggest = ms;
    }
    long long hi = 0, lo = total;
    for (int b = 0; b < bins; b++) {
      if (load[b] > hi) hi = load[b];
      if (load[b] < lo) lo = load[b];
    }
    CU_ASSERT_EQUAL(hi, worst);
    /* Longest first, to the lightest bin: no bin exceeds another by more
       than one item. */
    CU_ASSERT(hi - lo <= biggest);
  }
}

static void test_same_split_in_any_order(void) {
  enum { N = 30 };
  cli_shard_item it[N], shuf[N];
  char names[N][16];
  make_items(it, names, N);
  int bin[N], bin2[N];
  CU_ASSERT(cli_shard_assign(it, N, 3, bin) >= 0);
  /* Reversed, then a fixed shuffle: each key lands in the same bin. */
  for (int round = 0; round < 2; round++) {
    int pos[N];
    for (int i = 0; i < N; i++) pos[i] = round == 0 ? N - 1 - i : (i * 7) % N;
    for (int i = 0; i < N; i++) shuf[pos[i]] = it[i];
    CU_ASSERT(cli_shard_assign(shuf, N, 3, bin2) >= 0);
    for (int i = 0; i < N; i++) CU_ASSERT_EQUAL(bin2[pos[i]], bin[i]);
  }
  /* The set id does not depend on the order either; another set differs. */
  uint64_t id = cli_shard_set_id(it, N);
  CU_ASSERT_EQUAL(cli_shard_set_id(shuf, N), id);
  CU_ASSERT_NOT_EQUAL(cli_shard_set_id(it, N - 1), id);
  CU_ASSERT_NOT_EQUAL(id, 0);
}

static void test_longest_alone(void) {
  /* One 10 s item and eight of 1 s over 2 bins: the long one alone. */
  cli_shard_item it[9];
  char names[9][16];
  for (int i = 0; i < 9; i++) {
    snprintf(names[i], sizeof names[i], "%c.lua", 'a' + i);
    it[i] = (cli_shard_item){names[i], i == 4 ? 10.0 : 1.0};
  }
  int bin[9];
  CU_ASSERT_EQUAL(cli_shard_assign(it, 9, 2, bin), 10000);
  for (int i = 0; i < 9; i++)
    if (i != 4) CU_ASSERT_NOT_EQUAL(bin[i], bin[4]);
}

static void test_equal_costs_spread_by_count(void) {
  /* Ten items that cost nothing still split 5 / 5, by count. */
  cli_shard_item it[10];
  char names[10][16];
  for (int i = 0; i < 10; i++) {
    snprintf(names[i], sizeof names[i], "z%d", i);
    it[i] = (cli_shard_item){names[i], 0};
  }
  int bin[10], count[2] = {0, 0};
  CU_ASSERT_EQUAL(cli_shard_assign(it, 10, 2, bin), 0);
  for (int i = 0; i < 10; i++) count[bin[i]]++;
  CU_ASSERT_EQUAL(count[0], 5);
  CU_ASSERT_EQUAL(count[1], 5);
  /* More bins than items: the extra bins stay empty, nothing is lost. */
  int bin3[3];
  CU_ASSERT_EQUAL(cli_shard_assign(it, 3, 5, bin3), 0);
  CU_ASSERT(bin3[0] != bin3[1] && bin3[1] != bin3[2] && bin3[0] != bin3[2]);
  CU_ASSERT_EQUAL(cli_shard_assign(it, 3, 0, bin3), -1);
}

static void test_workers(void) {
  /* 6 s + twelve of 2 s (30 s in all): 4 workers need 6 s for the rest
     (24 s / 4); 5 fit the rest beside the longest. */
  cli_shard_item it[13];
  char names[13][16];
  for (int i = 0; i < 13; i++) {
    snprintf(names[i], sizeof names[i], "w%02d", i);
    it[i] = (cli_shard_item){names[i], i == 0 ? 6.0 : 2.0};
  }
  CU_ASSERT_EQUAL(cli_shard_workers(it, 13, 1, 16), 5);
  CU_ASSERT_EQUAL(cli_shard_workers(it, 13, 8, 16), 8);  /* never below lo */
  CU_ASSERT_EQUAL(cli_shard_workers(it, 13, 1, 3), 3);   /* never above hi */
  CU_ASSERT_EQUAL(cli_shard_workers(it, 2, 8, 16), 2);   /* never above n */
  CU_ASSERT_EQUAL(cli_shard_workers(it, 0, 8, 16), 1);
}

#define ADD(s, name, fn) \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_shard(void) {
  CU_pSuite s = CU_add_suite("shard", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "K/N: good and bad specs", test_parse);
  ADD(s, "every item in one bin, balanced", test_every_item_once_and_balanced);
  ADD(s, "the same split in any order", test_same_split_in_any_order);
  ADD(s, "the longest alone when it outweighs the rest", test_longest_alone);
  ADD(s, "equal costs spread by count", test_equal_costs_spread_by_count);
  ADD(s, "default workers from the plan", test_workers);
  return 0;
}
