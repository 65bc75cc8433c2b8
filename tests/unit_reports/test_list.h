/* The unit_reports suites: one X(name) per feature (int suite_name(void)). */
#define TEST_SUITES(X)       \
  X(trace_read)              \
  X(trace_merge)             \
  X(trace_fold)              \
  X(verdict_attempts)        \
  X(verdict_max_requests)    \
  X(verdict_no_retry_after)  \
  X(verdict_herd)            \
  X(verdict_retry_after)     \
  X(verdict_backoff)         \
  X(verdict_deadline)        \
  X(verdict_outcome)         \
  X(verdict_side_effects)    \
  X(verdict_stream_splice)   \
  X(verdict_answer)          \
  X(verdict_cost)            \
  X(verdict_profile)         \
  X(verdict_scenario)        \
  X(verdict_tool)            \
  X(expect)                  \
  X(families)                \
  X(term_rule)               \
  X(run)                     \
  X(writer_term)             \
  X(writer_json)             \
  X(writer_junit)            \
  X(writer_html)             \
  X(writer_markdown)         \
  X(matrix)                  \
  X(report_merge)            \
  X(alloc_fail)
