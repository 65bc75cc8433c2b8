/*
 * stages.h - per-stage times of a delayed request, for bench/delay.sh only.
 * Compiled in with -DFUSEBOX_STAGES=1 (bench/delay.sh STAGES=1 builds such
 * a binary); otherwise every mark is an empty macro and nothing is kept.
 *
 * The stages of one wait: suspend (the player asks to wait) -> due (the
 * timer's due time) -> fire (the timer's callback runs) -> handler (the
 * event loop calls the access handler again; the time MHD_resume_connection
 * itself took is kept apart, as "resume call") -> queued (the answer is
 * queued) -> done (MHD reports the request complete: every byte handed to
 * the kernel).
 * At process exit the distribution of each step is appended to the file
 * named by FUSEBOX_STAGES_OUT (one line per step: p50 p90 p99 max in ms).
 */
#ifndef FUSEBOX_STAGES_H
#define FUSEBOX_STAGES_H

typedef struct sim_stamps {
  double arrive, suspend, due, fire, handler, queued; /* ms, 0 = not reached */
} sim_stamps;

#ifdef FUSEBOX_STAGES
double sim__stages_now(void);
/* Records one finished request's stamps (done = now). Thread-safe. */
void sim__stages_done(const sim_stamps *s);
/* Records how long one MHD_resume_connection call took. */
void sim__stages_resume_call(double ms);
#define SIM_STAGE_CALL(call)                                      \
  do {                                                            \
    double t_ = sim__stages_now();                                \
    call;                                                         \
    sim__stages_resume_call(sim__stages_now() - t_);              \
  } while (0)
#define SIM_STAGE(c, field) ((c)->stamps.field = sim__stages_now())
#define SIM_STAGE_SET(c, field, v) ((c)->stamps.field = (v))
#define SIM_STAGES_DONE(c) sim__stages_done(&(c)->stamps)
#else
#define SIM_STAGE(c, field) ((void)0)
#define SIM_STAGE_SET(c, field, v) ((void)0)
#define SIM_STAGES_DONE(c) ((void)0)
#define SIM_STAGE_CALL(call) call
#endif

#endif
