/* The unit_explore runner: the suites listed in test_list.h. */
#include "test_list.h"
#include "cunit_main.h"
