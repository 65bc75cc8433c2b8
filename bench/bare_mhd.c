/*
 * bare_mhd.c - the bare libmicrohttpd reference for bench/throughput.sh:
 * answers every request with the same bytes (a body file and its
 * Content-Type), read the request body and dropped it, no Lua, no trace.
 * libmicrohttpd's own thread pool (internal polling, epoll, one loop per
 * core up to 8) with fusebox's per-connection pool, 16 KiB
 * (SIM_CONN_POOL in sim/server_int.h; BARE_POOL_KB=32 for the 32 KiB it
 * had until issue 30: libmicrohttpd zeroes the whole pool after every
 * request, so a bigger pool is a dearer reference). The difference to
 * `fusebox serve` is fusebox's own work per request, and its own loops
 * (sim/loops.c) against libmicrohttpd's pool.
 *
 *   bare_mhd BODY_FILE CONTENT_TYPE REQUEST_ID
 *
 * Listens on 127.0.0.1, an ephemeral port; prints "port N" and serves
 * until SIGTERM/SIGINT.
 */
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

static char *g_body;
static size_t g_len;
static const char *g_ctype, *g_reqid;
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **ctx) {
  (void)cls; (void)url; (void)method; (void)version; (void)upload;
  if (*ctx == NULL) { *ctx = (void *)1; return MHD_YES; } /* headers only */
  if (*upload_size) { *upload_size = 0; return MHD_YES; }  /* drop the body */
  struct MHD_Response *r =
      MHD_create_response_from_buffer(g_len, g_body, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(r, "content-type", g_ctype);
  MHD_add_response_header(r, "x-request-id", g_reqid);
  enum MHD_Result ret = MHD_queue_response(c, 200, r);
  MHD_destroy_response(r);
  return ret;
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: bare_mhd BODY_FILE CONTENT_TYPE REQUEST_ID\n"); return 2; }
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  g_body = malloc(1 << 20);
  g_len = fread(g_body, 1, 1 << 20, f);
  fclose(f);
  g_ctype = argv[2];
  g_reqid = argv[3];
  /* SIGTERM and SIGINT blocked in every thread (libmicrohttpd's inherit the
     mask) and taken by sigwait: delivered to a pool thread they were lost
     under valgrind, and bench/serve_cost.sh waited for ever. */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const char *kb = getenv("BARE_POOL_KB");
  size_t pool = (size_t)(kb && atoi(kb) > 0 ? atoi(kb) : 16) * 1024;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned threads = cores > 1 ? (unsigned)(cores > 8 ? 8 : cores) : 1;
  struct MHD_Daemon *d = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL,
      on_request, NULL, MHD_OPTION_SOCK_ADDR, &a, MHD_OPTION_THREAD_POOL_SIZE, threads,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)20000, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)300,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool,
      MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)4096, MHD_OPTION_END);
  if (!d) { fprintf(stderr, "bare_mhd: cannot start\n"); return 1; }
  const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  printf("port %u\n", (unsigned)i->port);
  fflush(stdout);
  int sig;
  sigwait(&stop, &sig);
  MHD_stop_daemon(d);
  free(g_body);
  return 0;
}
