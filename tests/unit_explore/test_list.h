/* The unit_explore suites: one X(name) per feature (int suite_name(void)). */
#define TEST_SUITES(X) \
  X(schedule)          \
  X(hunt)              \
  X(learn)
