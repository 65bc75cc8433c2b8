/*
 * play_int.h - the player (play.c), as the arrival side (server.c) calls
 * it. play.c itself calls only conn.c, never server.c.
 */
#ifndef FUSEBOX_PLAY_INT_H
#define FUSEBOX_PLAY_INT_H

#include "sim/server_int.h"

/* play.c: plays c->cur; returns what the access handler returns. */
enum MHD_Result sim__play(sim_conn *c);
/* Releases a stream player; NULL is a no-op. */
void sim__player_free(sim_player *p);

/* play_upstream.c: plays an upstream{} step (c->cur): forwards the
   attempt to the server's upstream and passes its answer on, with the
   step's faults. */
enum MHD_Result sim__play_upstream(sim_conn *c, const sim_step *s);
/* Releases what sim__play_upstream keeps on a connection; NULL is a no-op.
   Never blocks (the forwarding worker ends on its own). */
void sim__upplay_free(struct sim_upplay *u);

/* play.c, for play_upstream.c: a response header, sent and noted for the
   trace through the redaction rule; a whole JSON body with the request id
   header; how the player ended the attempt; a TCP reset of its socket. */
void sim__play_header(struct MHD_Response *r, sim_conn *c, const char *name, const char *value);
enum MHD_Result sim__play_body(sim_conn *c, int status, const char *body, size_t len);
void sim__play_end(sim_conn *c, const char *how, sim_end_how e);
void sim__play_reset(sim_conn *c);

#endif
