/* The unit_sim suites: one X(name) per feature file (int suite_name(void)). */
#define TEST_SUITES(X) \
  X(step)              \
  X(lua_load)          \
  X(srcmap)            \
  X(lua_steps)         \
  X(lua_sandbox)       \
  X(lua_decide)        \
  X(lua_loops)         \
  X(lua_json)          \
  X(lua_examples)      \
  X(keying)            \
  X(trace_write)       \
  X(json_write)        \
  X(dialect_bytes)     \
  X(dialect_apis)      \
  X(session_tap)       \
  X(wire_format)       \
  X(ledger)            \
  X(state)             \
  X(waiter)            \
  X(ratelimit)         \
  X(redact)            \
  X(alloc_fail)        \
  X(end_state)         \
  X(suggest)           \
  X(frames)            \
  X(upstream_step)      \
  X(h2_bridge)          \
  X(h2c)                \
  X(body_scan)
