/* The unit_cli suites: one X(name) per feature (int suite_name(void)).
   They test the program's pure planning code, linked from cli/. */
#define TEST_SUITES(X) \
  X(shard)
