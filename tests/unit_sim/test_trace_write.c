/* test_trace_write.c - trace lines: one JSON object a line, flushed. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/sim_int.h"

static void test_lines_parse_and_flush(void) {
  char path[] = "/tmp/fbx-trace-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  sim_trace *tr = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__trace_open(path, NULL, &tr, err), 0);
  cJSON *ev = sim__trace_event("arrive", 12.3456789);
  cJSON_AddStringToObject(ev, "text", "line one\nline two \"quoted\"");
  sim__trace_emit(tr, ev);
  sim__trace_emit(tr, sim__trace_event("end", 13));
  /* Flushed as written: readable before close. */
  FILE *f = fopen(path, "r");
  char line[512];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    cJSON *j = cJSON_Parse(line);
    CU_ASSERT_PTR_NOT_NULL(j);
    if (n == 0) {
      CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "ev")->valuestring, "arrive");
      CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(j, "t")->valuedouble, 12.345, 0.001);
      CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "text")->valuestring, "line one\nline two \"quoted\"");
    }
    cJSON_Delete(j);
    n++;
  }
  fclose(f);
  CU_ASSERT_EQUAL(n, 2);
  sim__trace_close(tr);
  unlink(path);
}

static void test_unwritable_path(void) {
  sim_trace *tr = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL(sim__trace_open("/no/such/dir/t.jsonl", NULL, &tr, err), SIM_EIO);
  CU_ASSERT(strstr(err, "/no/such/dir/t.jsonl") != NULL);
}

static void test_no_trace_is_fine(void) {
  sim_trace *tr = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL(sim__trace_open(NULL, NULL, &tr, err), 0);
  sim__trace_emit(tr, sim__trace_event("x", 0));
  sim__trace_emit(NULL, sim__trace_event("x", 0));
  sim__trace_close(tr);
  sim__trace_close(NULL);
}

int suite_trace_write(void) {
  CU_pSuite s = CU_add_suite("trace_write", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "lines parse and are flushed", test_lines_parse_and_flush);
  CU_add_test(s, "unwritable path is an error", test_unwritable_path);
  CU_add_test(s, "no trace", test_no_trace_is_fine);
  return CU_get_error();
}
