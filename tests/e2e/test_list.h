#define TEST_SUITES(X) X(steps) X(providers) X(effects) X(trace) X(guard) X(ratelimit) X(bad_input) X(stream_scale) X(limits) X(dialects) X(states)
