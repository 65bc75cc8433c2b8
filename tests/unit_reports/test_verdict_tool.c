/*
 * test_verdict_tool.c - `tool_integrity` on hand-written traces
 * (tests/data/traces/tool_*.jsonl): whole calls run once pass, a replay by
 * the call id passes; cut or invalid arguments, an unoffered tool and a
 * call run again after a retried turn fail; no tool call is n/a.
 */
#include <CUnit/CUnit.h>

#include "rpt_test.h"

static void test_tool_data(void) { rt_check_prefix("tool_"); }

int suite_verdict_tool(void) {
  CU_pSuite s = CU_add_suite("verdict_tool", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (CU_add_test(s, "data: tool_*.jsonl", test_tool_data) == NULL) return CU_get_error();
  return 0;
}
