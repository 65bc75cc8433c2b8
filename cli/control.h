/*
 * control.h - the control API of `fusebox serve --control` (docs/control.md):
 * the hook sim calls for every request under /__fusebox/.
 */
#ifndef FUSEBOX_CLI_CONTROL_H
#define FUSEBOX_CLI_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

typedef struct cli_control {
  const char *token; /* every request needs "Authorization: Bearer token"; NULL = none */
  uint64_t seed;     /* the seed scenarios PUT are loaded with */
} cli_control;

/* The control hook (a sim_control_fn; arg is a cli_control that outlives
   the server). Answers health, scenario, reset, requests, report, trace. */
void cli_control_handle(void *arg, sim_server *srv, const sim_control_req *req,
                        sim_control_resp *resp);

/*
 * The journal of a session from its trace lines (len bytes of JSON Lines):
 * {"session":name,"requests":[{n,id,attempt,key,method,path,provider,
 * dialect,step,how,status,t_arrive,t_end}, ...]}, in arrival order, a
 * request still in flight with null step, how, status and t_end. Returns
 * the document (the caller frees it), NULL when out of memory.
 */
char *cli_control_journal(const char *session, const char *text, size_t len);

#endif
