/* The guard unit suites, one per feature file (tests/unit_guard/test_NAME.c). */
#define TEST_SUITES(X)                                                         \
  X(classify)                                                                  \
  X(retry_after)                                                               \
  X(backoff)                                                                   \
  X(deadline)                                                                  \
  X(retry)                                                                     \
  X(budget)                                                                    \
  X(fallback)                                                                  \
  X(breaker)                                                                   \
  X(retry_budget)                                                              \
  X(effect)                                                                    \
  X(sse)                                                                       \
  X(stream)                                                                    \
  X(wire)                                                                      \
  X(wire_apis)                                                                 \
  X(eventstream)                                                               \
  X(wire_providers)                                                            \
  X(result_json)                                                               \
  X(limits)                                                                    \
  X(transport_curl)                                                            \
  X(sdk_flags)                                                                 \
  X(alloc_fail)
