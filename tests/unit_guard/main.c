#include "test_list.h"
#include "cunit_main.h"
