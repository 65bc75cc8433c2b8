/* test_session_tap.c - a session's trace tap (its lines in memory, marked
   with its name, passed on to the trace file, bounded) and session names. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/sim_int.h"

/* The file's whole text (caller frees). */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return NULL;
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return strdup(buf);
}

static void test_tap_marks_keeps_and_passes_on(void) {
  char path[] = "/tmp/fbx-tap-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  sim_trace *file = NULL, *a = NULL, *def = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__trace_open(path, NULL, &file, err), SIM_OK);
  CU_ASSERT_EQUAL_FATAL(sim__trace_tap_new(file, "a", 1 << 20, &a), SIM_OK);
  CU_ASSERT_EQUAL_FATAL(sim__trace_tap_new(file, NULL, 1 << 20, &def), SIM_OK);
  CU_ASSERT_TRUE(sim__trace_on(a));
  sim__trace_emit(a, sim__trace_event("arrive", 1));
  sim__trace_emit(def, sim__trace_event("arrive", 2));
  cJSON *ev = sim__trace_event("end", 3);
  cJSON_AddStringToObject(ev, "session", "spoofed"); /* the tap's name wins */
  sim__trace_emit(a, ev);

  char *text = NULL;
  size_t len = 0;
  int full = 1;
  CU_ASSERT_EQUAL(sim__trace_tap_copy(a, &text, &len, &full), SIM_OK);
  CU_ASSERT_EQUAL(full, 0);
  CU_ASSERT_EQUAL(len, strlen(text));
  CU_ASSERT_STRING_EQUAL(text, "{\"ev\":\"arrive\",\"t\":1,\"session\":\"a\"}\n"
                               "{\"ev\":\"end\",\"t\":3,\"session\":\"a\"}\n");
  free(text);
  CU_ASSERT_EQUAL(sim__trace_tap_copy(def, &text, &len, &full), SIM_OK);
  CU_ASSERT_STRING_EQUAL(text, "{\"ev\":\"arrive\",\"t\":2}\n");
  free(text);
  CU_ASSERT_EQUAL(sim__trace_tap_copy(file, &text, &len, &full), SIM_EINVAL);

  sim__trace_close(a);
  sim__trace_close(def);
  CU_ASSERT_EQUAL(sim__trace_finish(file, err), SIM_OK);
  char *all = slurp(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(all);
  CU_ASSERT_STRING_EQUAL(all, "{\"ev\":\"arrive\",\"t\":1,\"session\":\"a\"}\n"
                              "{\"ev\":\"arrive\",\"t\":2}\n"
                              "{\"ev\":\"end\",\"t\":3,\"session\":\"a\"}\n");
  free(all);
  unlink(path);
}

static void test_tap_is_bounded(void) {
  sim_trace *t = NULL;
  CU_ASSERT_EQUAL_FATAL(sim__trace_tap_new(NULL, "b", 100, &t), SIM_OK);
  sim__trace_emit(t, sim__trace_event("arrive", 1)); /* 36 bytes with "session":"b" */
  sim__trace_emit(t, sim__trace_event("arrive", 2));
  char *text = NULL;
  size_t len = 0;
  int full = 1;
  CU_ASSERT_EQUAL(sim__trace_tap_copy(t, &text, &len, &full), SIM_OK);
  CU_ASSERT_EQUAL(full, 0);
  CU_ASSERT_EQUAL(len, 72);
  free(text);
  sim__trace_emit(t, sim__trace_event("arrive", 3)); /* would pass 100: the tap stops */
  sim__trace_emit(t, sim__trace_event("arrive", 4));
  CU_ASSERT_EQUAL(sim__trace_tap_copy(t, &text, &len, &full), SIM_OK);
  CU_ASSERT_EQUAL(full, 1);
  CU_ASSERT_EQUAL(len, 72);
  free(text);
  sim__trace_close(t);
}

static void test_session_names(void) {
  static const struct { const char *name; int ok; } cases[] = {
      {"default", 1}, {"a", 1}, {"test_1.case-2", 1}, {"A.B_C-d9", 1},
      {"", 0}, {"a b", 0}, {"a/b", 0}, {"é", 0}, {"a%20", 0}, {"a\n", 0},
      {"1234567890123456789012345678901234567890123456789012345678901234", 1},
      {"12345678901234567890123456789012345678901234567890123456789012345", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    CU_ASSERT_EQUAL(sim_session_name_ok(cases[i].name), cases[i].ok);
  CU_ASSERT_EQUAL(sim_session_name_ok(NULL), 0);
}

int suite_session_tap(void) {
  CU_pSuite s = CU_add_suite("session_tap", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "a tap marks, keeps and passes on its lines", test_tap_marks_keeps_and_passes_on);
  CU_add_test(s, "a tap keeps at most its cap", test_tap_is_bounded);
  CU_add_test(s, "session names", test_session_names);
  return CU_get_error();
}
