/*
 * The one main() of every CUnit runner. A runner's main.c includes its own
 * test_list.h (which defines TEST_SUITES(X), one X(name) per feature file)
 * and then this header. Each feature file defines `int suite_NAME(void)`
 * that adds its suite and tests and returns 0 (or a CUnit error).
 * An optional argument runs only the suites whose names contain it.
 */
#ifndef FUSEBOX_CUNIT_MAIN_H
#define FUSEBOX_CUNIT_MAIN_H

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#define FUSEBOX_DECLARE_SUITE(name) int suite_##name(void);
TEST_SUITES(FUSEBOX_DECLARE_SUITE)

#define FUSEBOX_ADD_SUITE(name)                                            \
  if (filter == NULL || strstr(#name, filter) != NULL) {                   \
    if (suite_##name() != 0) {                                             \
      fprintf(stderr, "cannot register suite %s: %s\n", #name,            \
              CU_get_error_msg());                                         \
      CU_cleanup_registry();                                               \
      return 2;                                                            \
    }                                                                      \
  }

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  TEST_SUITES(FUSEBOX_ADD_SUITE)
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

#endif
