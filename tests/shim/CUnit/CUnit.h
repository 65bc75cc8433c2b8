/*
 * tests/shim/CUnit/CUnit.h - CUnit as every test sees it: the real header,
 * then tests/test_check.h, whose string assertions fail on NULL instead of
 * crashing the runner. tests/CMakeLists.txt puts tests/shim first on the
 * include path of every runner, so `#include <CUnit/CUnit.h>` lands here.
 */
#ifndef FUSEBOX_TEST_SHIM_CUNIT_H
#define FUSEBOX_TEST_SHIM_CUNIT_H
#include_next <CUnit/CUnit.h>
#include "../../test_check.h"
#endif
