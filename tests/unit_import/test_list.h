/* The unit_import suites: one X(name) per feature file (int suite_name(void)). */
#define TEST_SUITES(X) \
  X(import)            \
  X(import_expect)     \
  X(import_cases)      \
  X(record)
