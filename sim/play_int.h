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

#endif
