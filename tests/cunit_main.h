/*
 * The one main() of every CUnit runner. A runner's main.c includes its own
 * test_list.h (which defines TEST_SUITES(X), one X(name) per feature file)
 * and then this header. Each feature file defines `int suite_NAME(void)`
 * that adds its suite and tests and returns 0 (or a CUnit error).
 *
 *   runner           every suite, each in a child process of its own: a suite
 *                    that crashes is reported as crashed (with the test it was
 *                    in) and the suites after it still run
 *   runner NAME      only the suite named NAME (what ctest runs: one entry per
 *                    suite, registered from test_list.h by tests/CMakeLists.txt)
 *   runner PART      no suite named so: every suite whose name contains PART
 *   runner --list    the suite names, one a line
 *
 * When a test crashes (a NULL dereference in a helper, say), the runner prints
 * which suite and test it was in before dying, so the report says where.
 * FUSEBOX_TEST_NOFORK=1 runs every suite in one process (for a debugger).
 */
#ifndef FUSEBOX_CUNIT_MAIN_H
#define FUSEBOX_CUNIT_MAIN_H

#include <CUnit/Basic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FUSEBOX_DECLARE_SUITE(name) int suite_##name(void);
TEST_SUITES(FUSEBOX_DECLARE_SUITE)

typedef struct fusebox_suite_entry {
  const char *name;
  int (*add)(void);
} fusebox_suite_entry;

#define FUSEBOX_SUITE_ENTRY(name) {#name, suite_##name},
static const fusebox_suite_entry fusebox_suites[] = {TEST_SUITES(FUSEBOX_SUITE_ENTRY)};
#define FUSEBOX_NSUITES ((int)(sizeof fusebox_suites / sizeof fusebox_suites[0]))

/* Writes s to stderr from a signal handler (no stdio). */
static void fusebox_crash_write(const char *s) {
  if (s == NULL) s = "?";
  ssize_t r = write(2, s, strlen(s));
  (void)r;
}

/* Says which suite and test crashed, then dies of the same signal. */
static void fusebox_on_crash(int sig) {
  CU_pSuite s = CU_get_current_suite();
  CU_pTest t = CU_get_current_test();
  fusebox_crash_write("\nCRASH: ");
  fusebox_crash_write(strsignal(sig));
  fusebox_crash_write(" in suite ");
  fusebox_crash_write(s ? s->pName : "(none)");
  fusebox_crash_write(", test ");
  fusebox_crash_write(t ? t->pName : "(none)");
  fusebox_crash_write("; the rest of this suite did not run\n");
  signal(sig, SIG_DFL);
  raise(sig);
}

/* 1 when suite i is selected by filter (exact name if any suite has it). */
static int fusebox_selected(int i, const char *filter, int exact) {
  if (filter == NULL) return 1;
  if (exact) return strcmp(fusebox_suites[i].name, filter) == 0;
  return strstr(fusebox_suites[i].name, filter) != NULL;
}

/* Registers and runs the selected suites in this process: 0 all passed,
   1 a failure or nothing ran, 2 a registration error. */
static int fusebox_run_here(const char *filter, int exact) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  for (int i = 0; i < FUSEBOX_NSUITES; i++) {
    if (!fusebox_selected(i, filter, exact)) continue;
    if (fusebox_suites[i].add() != 0) {
      fprintf(stderr, "cannot register suite %s: %s\n", fusebox_suites[i].name,
              CU_get_error_msg());
      CU_cleanup_registry();
      return 2;
    }
  }
  signal(SIGSEGV, fusebox_on_crash);
  signal(SIGBUS, fusebox_on_crash);
  signal(SIGFPE, fusebox_on_crash);
  signal(SIGABRT, fusebox_on_crash);
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
  unsigned run = CU_get_number_of_tests_run();
  CU_cleanup_registry();
  if (run == 0) {
    fprintf(stderr, "no test ran\n");
    return 1;
  }
  return failed ? 1 : 0;
}

/* Every suite in a child process of its own; a crash is reported, the rest
   still run. A child returns its suite's result from here (*child = 1), so
   that it leaves through main like `runner NAME` does (the runner's own
   clean-up and the leak checker run). */
static int fusebox_run_isolated(int *child) {
  int failed = 0, crashed = 0;
  for (int i = 0; i < FUSEBOX_NSUITES; i++) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 2;
    }
    if (pid == 0) {
      *child = 1;
      return fusebox_run_here(fusebox_suites[i].name, 1);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
    }
    if (WIFSIGNALED(st)) {
      fprintf(stderr, "suite %s CRASHED (%s); the other suites still run\n",
              fusebox_suites[i].name, strsignal(WTERMSIG(st)));
      crashed++;
    } else if (WEXITSTATUS(st) != 0) {
      fprintf(stderr, "suite %s FAILED (exit %d)\n", fusebox_suites[i].name, WEXITSTATUS(st));
      failed++;
    }
  }
  fprintf(stderr, "%d suites: %d passed, %d failed, %d crashed\n", FUSEBOX_NSUITES,
          FUSEBOX_NSUITES - failed - crashed, failed, crashed);
  return failed || crashed ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  if (filter && strcmp(filter, "--list") == 0) {
    for (int i = 0; i < FUSEBOX_NSUITES; i++) printf("%s\n", fusebox_suites[i].name);
    return 0;
  }
  if (filter == NULL) {
    const char *nofork = getenv("FUSEBOX_TEST_NOFORK");
    int child = 0;
    if (nofork == NULL || strcmp(nofork, "1") != 0) return fusebox_run_isolated(&child);
    return fusebox_run_here(NULL, 0);
  }
  int exact = 0, any = 0;
  for (int i = 0; i < FUSEBOX_NSUITES; i++) {
    if (strcmp(fusebox_suites[i].name, filter) == 0) exact = 1;
    if (strstr(fusebox_suites[i].name, filter) != NULL) any = 1;
  }
  if (!any) {
    fprintf(stderr, "no suite named or containing '%s' (see --list)\n", filter);
    return 1;
  }
  return fusebox_run_here(filter, exact);
}

#endif
