/*
 * errors.c - error strings and one-time process set-up for sim/.
 */
#include <sys/resource.h>

#include "sim/sim_int.h"

/* A static description of a sim_ error code. */
const char *sim_strerror(int code) {
  switch (code) {
  case SIM_OK: return "ok";
  case SIM_ENOMEM: return "out of memory";
  case SIM_EIO: return "input/output error";
  case SIM_ELOAD: return "scenario did not load";
  case SIM_ELUA: return "scenario failed at run time";
  case SIM_ELISTEN: return "server could not start";
  case SIM_EINVAL: return "invalid argument";
  case SIM_ESTATE: return "shared state unavailable";
  case SIM_ENOENT: return "no such session";
  case SIM_EFULL: return "limit reached";
  default: return "unknown error";
  }
}

/*
 * Raises the soft open-file limit to the hard limit: a retry storm is
 * thousands of sockets at once. Returns 0, or SIM_EIO if it cannot.
 */
int sim_global_init(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return SIM_EIO;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return SIM_EIO;
  }
  return SIM_OK;
}
