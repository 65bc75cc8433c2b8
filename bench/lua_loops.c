/*
 * lua_loops.c - what one Lua state per event loop buys (issue 13 item 3),
 * measured on the scenario engine alone, without HTTP: two threads (two
 * event loops) ask one scenario for decisions, once with the single locked
 * state of old (sim__scenario_set_max_loops(sc, 1)) and once with a state
 * per thread.
 *
 *   fast: both threads decide N times with a small provider function;
 *         decisions per second and how many found the lock taken (waits).
 *   slow: thread A's calls each run SLOW_INSNS Lua loop iterations (tens of
 *         ms of CPU), thread B decides with the small function meanwhile;
 *         B's latency per decision (p50, p99, max) and its waits.
 *
 *   lua_loops [--n N]      prints one table row per mode and case
 *
 * Wall times are real (not a test): on a loaded machine they stretch, the
 * wait counts do not depend on the load as much.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/lua_int.h"

static const char SCENARIO[] =
    "return scenario { name = 'bench: loops', provider = function(req)\n"
    "  if req.headers['x-slow'] then for i = 1, 3000000 do end end\n"
    "  return chat { content = 'hello' } end }\n";

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct job {
  sim_scenario *sc;
  int n;              /* decisions; 0 = until *stop */
  int slow;
  atomic_int *stop;
  double *lat;        /* per decision, ms (fast thread of the slow case) */
  int nlat;
  int failures;
} job;

static void *run(void *arg) {
  job *j = arg;
  static const char body[] = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  sim_header h[1] = {{"x-slow", "1"}};
  for (int i = 0; j->n == 0 ? !atomic_load(j->stop) : i < j->n; i++) {
    sim_req r = {.attempt = 1, .n = i + 1, .method = "POST", .path = "/v1/chat/completions",
                 .provider = "primary", .dialect = SIM_DIALECT_OPENAI,
                 .headers = j->slow ? h : NULL, .nheaders = j->slow ? 1 : 0,
                 .body = body, .body_len = sizeof body - 1, .key = "k"};
    char err[SIM_ERRLEN];
    sim_step *st = NULL;
    double t = now_ms();
    if (sim__scenario_decide(j->sc, 0, &r, &st, err) != 0) j->failures++;
    if (j->lat != NULL && j->nlat < 1000000) j->lat[j->nlat++] = now_ms() - t;
    sim__step_free(st);
  }
  return NULL;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int n = 20000;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = atoi(argv[++i]);
  char path[] = "/tmp/fusebox_lua_loops_XXXXXX.lua";
  int fd = mkstemps(path, 4);
  if (fd < 0 || write(fd, SCENARIO, sizeof SCENARIO - 1) != (ssize_t)(sizeof SCENARIO - 1)) return 2;
  close(fd);
  printf("| %-20s | %-5s | %6s | %12s | %7s | %9s | %9s | %9s |\n", "mode", "case", "states",
         "decisions/s", "waits", "B p50 ms", "B p99 ms", "B max ms");
  printf("|----------------------|-------|--------|--------------|---------|-----------|-----------|-----------|\n");
  int bad = 0;
  for (int mode = 0; mode < 2; mode++) {
    const char *name = mode == 0 ? "one state, locked" : "a state per loop";
    for (int slow = 0; slow < 2; slow++) {
      sim_scenario *sc = NULL;
      char err[SIM_ERRLEN];
      if (sim__scenario_load(path, 1, &sc, err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
      }
      if (mode == 0) sim__scenario_set_max_loops(sc, 1);
      atomic_int stop = 0;
      double *lat = slow ? calloc(1000000, sizeof *lat) : NULL;
      job a = {sc, slow ? 20 : n, slow, &stop, NULL, 0, 0};
      job b = {sc, slow ? 0 : n, 0, &stop, lat, 0, 0};
      pthread_t ta, tb;
      double t0 = now_ms();
      pthread_create(&ta, NULL, run, &a);
      pthread_create(&tb, NULL, run, &b);
      pthread_join(ta, NULL);
      atomic_store(&stop, 1);
      pthread_join(tb, NULL);
      double el = now_ms() - t0;
      sim_scenario_stats st;
      sim__scenario_stats(sc, &st);
      bad += a.failures + b.failures;
      if (slow) {
        qsort(lat, (size_t)b.nlat, sizeof *lat, cmp);
        printf("| %-20s | %-5s | %6d | %12s | %7ld | %9.3f | %9.3f | %9.3f |\n", name, "slow",
               st.loops, "-", st.waits, lat[b.nlat / 2], lat[(int)(b.nlat * 0.99)], lat[b.nlat - 1]);
      } else {
        printf("| %-20s | %-5s | %6d | %12.0f | %7ld | %9s | %9s | %9s |\n", name, "fast",
               st.loops, 2.0 * n / (el / 1000.0), st.waits, "-", "-", "-");
      }
      free(lat);
      sim__scenario_free(sc);
    }
  }
  unlink(path);
  if (bad) fprintf(stderr, "lua_loops: %d decisions failed\n", bad);
  return bad ? 1 : 0;
}
