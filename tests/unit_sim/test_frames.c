/* test_frames.c - the SSE frame splitter of the upstream{} step
   (sim/frames.c): where frames end, fed whole and cut at every byte, and
   what a frame says. Data-driven: the stream and its frames side by side. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

static const struct {
  const char *name;
  const char *stream;
  int nframes;        /* frames that end in it */
  const char *ends[4]; /* each frame's last bytes end here: the stream's prefix up to it */
} CASES[] = {
    {"LF", "data: a\n\ndata: b\n\n", 2, {"data: a\n\n", "data: a\n\ndata: b\n\n"}},
    {"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", 2,
     {"data: a\r\n\r", "data: a\r\n\r\ndata: b\r\n\r"}},
    {"CR", "data: a\r\rdata: b\r\r", 2, {"data: a\r\r", "data: a\r\rdata: b\r\r"}},
    {"event and data lines", "event: message_start\ndata: {}\n\nevent: ping\ndata: {}\n\n", 2,
     {"event: message_start\ndata: {}\n\n",
      "event: message_start\ndata: {}\n\nevent: ping\ndata: {}\n\n"}},
    {"comments only are no frame", ": keep-alive\n\ndata: a\n\n", 1, {": keep-alive\n\ndata: a\n\n"}},
    {"blank lines before", "\n\n\ndata: a\n\n", 1, {"\n\n\ndata: a\n\n"}},
    {"unfinished last frame", "data: a\n\ndata: b\n", 1, {"data: a\n\n"}},
    {"no frame at all", "data: a", 0, {NULL}},
    {"multi-line data", "data: a\ndata: b\n\n", 1, {"data: a\ndata: b\n\n"}},
};

/* Feeds s in pieces of `step` bytes (0: whole); checks where frames end. */
static void run_case(size_t k, size_t step) {
  const char *s = CASES[k].stream;
  size_t n = strlen(s), off = 0;
  sim_frames f;
  memset(&f, 0, sizeof f);
  int seen = 0;
  while (off < n) {
    size_t piece = step == 0 || off + step > n ? n - off : step;
    size_t at = 0;
    while (at < piece) {
      int ended = 0;
      size_t took = sim__frames_feed(&f, s + off + at, piece - at, &ended);
      CU_ASSERT(took > 0 && took <= piece - at);
      at += took;
      if (ended) {
        CU_ASSERT_FATAL(seen < CASES[k].nframes);
        size_t want = strlen(CASES[k].ends[seen]);
        if (off + at != want)
          fprintf(stderr, "\n  %s (step %zu): frame %d ends at %zu, want %zu\n",
                  CASES[k].name, step, seen, off + at, want);
        CU_ASSERT_EQUAL(off + at, want);
        CU_ASSERT(f.len > 0);
        seen++;
      }
    }
    off += piece;
  }
  CU_ASSERT_EQUAL(seen, CASES[k].nframes);
  CU_ASSERT_EQUAL(f.count, CASES[k].nframes);
  sim__frames_clear(&f);
}

static void test_split(void) {
  for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++)
    for (size_t step = 0; step <= 4; step++) run_case(k, step);
}

/* Partial input is a case of its own: the stream cut at every byte, fed
   in two pieces, gives the same frames. */
static void test_cut_everywhere(void) {
  const char *s = "event: a\r\ndata: {\"x\":1}\r\n\r\n: ping\n\ndata: [DONE]\n\n";
  size_t n = strlen(s);
  for (size_t cut = 0; cut <= n; cut++) {
    sim_frames f;
    memset(&f, 0, sizeof f);
    int frames = 0, done_seen = 0;
    size_t pieces[2][2] = {{0, cut}, {cut, n}};
    for (int p = 0; p < 2; p++) {
      size_t at = pieces[p][0];
      while (at < pieces[p][1]) {
        int ended = 0;
        at += sim__frames_feed(&f, s + at, pieces[p][1] - at, &ended);
        if (ended) {
          frames++;
          done_seen |= sim__frame_is_end(f.buf, f.len);
        }
      }
    }
    CU_ASSERT_EQUAL(frames, 2);
    CU_ASSERT_EQUAL(done_seen, 1);
    sim__frames_clear(&f);
  }
}

static const struct {
  const char *frame;
  int end, error, args;
} SAYS[] = {
    {"data: [DONE]\n\n", 1, 0, 0},
    {"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", 1, 0, 0},
    {"event: response.completed\ndata: {}\n\n", 1, 0, 0},
    {"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n", 0, 0, 0},
    {"data: {\"error\":{\"message\":\"overloaded\"}}\n\n", 0, 1, 0},
    {"event: error\ndata: {\"type\":\"error\"}\n\n", 0, 1, 0},
    {"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"f\","
     "\"arguments\":\"\"}}]}}]}\n\n", 0, 0, 0},
    {"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":"
     "\"{\\\"to\\\"\"}}]}}]}\n\n", 0, 0, 1},
    {"event: content_block_delta\ndata: {\"delta\":{\"type\":\"input_json_delta\","
     "\"partial_json\":\"{\\\"a\"}}\n\n", 0, 0, 1},
    {"event: response.function_call_arguments.delta\ndata: {\"delta\":\"{\"}\n\n", 0, 0, 1},
};

static void test_says(void) {
  for (size_t i = 0; i < sizeof SAYS / sizeof SAYS[0]; i++) {
    const char *f = SAYS[i].frame;
    size_t n = strlen(f);
    if (sim__frame_is_end(f, n) != SAYS[i].end || sim__frame_is_error(f, n) != SAYS[i].error ||
        sim__frame_has_arguments(f, n) != SAYS[i].args)
      fprintf(stderr, "\n  frame %zu: %s", i, f);
    CU_ASSERT_EQUAL(sim__frame_is_end(f, n), SAYS[i].end);
    CU_ASSERT_EQUAL(sim__frame_is_error(f, n), SAYS[i].error);
    CU_ASSERT_EQUAL(sim__frame_has_arguments(f, n), SAYS[i].args);
  }
}

/* A frame longer than what is kept is still one frame. */
static void test_long_frame(void) {
  size_t n = SIM_FRAME_KEEP * 2;
  char *s = malloc(n + 16);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  memcpy(s, "data: ", 6);
  memset(s + 6, 'x', n - 6);
  memcpy(s + n, "\n\n", 3);
  sim_frames f;
  memset(&f, 0, sizeof f);
  int ended = 0;
  size_t took = sim__frames_feed(&f, s, n + 2, &ended);
  CU_ASSERT_EQUAL(took, n + 2);
  CU_ASSERT_EQUAL(ended, 1);
  CU_ASSERT_EQUAL(f.len, SIM_FRAME_KEEP);
  sim__frames_clear(&f);
  free(s);
}

int suite_frames(void) {
  CU_pSuite s = CU_add_suite("frames", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "frames end at blank lines (LF, CRLF, CR; pieces of 1-4 bytes)", test_split);
  CU_add_test(s, "a stream cut at every byte gives the same frames", test_cut_everywhere);
  CU_add_test(s, "end marker, error event, tool arguments", test_says);
  CU_add_test(s, "a frame longer than kept is one frame", test_long_frame);
  return CU_get_error();
}
