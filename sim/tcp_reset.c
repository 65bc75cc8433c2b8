/*
 * tcp_reset.c - ending a connection with a TCP reset, for the `reset` step
 * (play.c) and for the recorder mirroring an upstream that reset (import/record.c).
 */
#include <sys/socket.h>

#include "sim/sim_int.h"

/* Makes the socket fd send RST now instead of a FIN. Linger on with a zero
   timeout makes close() send RST, but libmicrohttpd sends a FIN (shutdown)
   before it closes; disconnecting the socket (connect to AF_UNSPEC) makes
   Linux send the RST right away. */
void sim_tcp_reset(int fd) {
  struct linger lg = {.l_onoff = 1, .l_linger = 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  struct sockaddr unspec = {.sa_family = AF_UNSPEC};
  connect(fd, &unspec, sizeof unspec);
}
