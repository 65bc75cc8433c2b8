#include <curl/curl.h>
#include <signal.h>

#include "sim/sim.h"

#include "test_list.h"
#define main cunit_main
#include "cunit_main.h"
#undef main

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  curl_global_init(CURL_GLOBAL_ALL);
  sim_global_init();
  int rc = cunit_main(argc, argv);
  curl_global_cleanup();
  return rc;
}
