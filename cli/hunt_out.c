/*
 * hunt_out.c - a hunt's findings written out: each as a standard scenario
 * (its doc says what breaks and why), replayed once to keep its trace and
 * to check that it still fails, the one-line commands that replay it, and
 * hunt.json; the report files as every command writes them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/hunt.h"
#include "reports/reports.h"

/* 1 when name is an expect key (it may be the scenario's point). */
static int is_family(const char *name) {
  for (int i = 0; rpt_expect_family(i); i++)
    if (strcmp(rpt_expect_family(i), name) == 0) return 1;
  return 0;
}

/* A shell word: as is when safe, else in single quotes. */
static void add_word(char *out, size_t n, const char *w) {
  size_t at = strlen(out);
  int safe = *w != '\0';
  for (const char *p = w; *p; p++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@+", *p))
      safe = 0;
  if (safe) {
    snprintf(out + at, n - at, "%s%s", at ? " " : "", w);
    return;
  }
  at += (size_t)snprintf(out + at, n - at, "%s'", at ? " " : "");
  for (const char *p = w; *p && at + 5 < n; p++) {
    if (*p == '\'') at += (size_t)snprintf(out + at, n - at, "'\\''");
    else out[at++] = *p, out[at] = '\0';
  }
  if (at + 1 < n) snprintf(out + at, n - at, "'");
}

static void words(char *out, size_t n, int argc, char **argv) {
  for (int i = 0; i < argc && argv[i]; i++) add_word(out, n, argv[i]);
}

/* The client hunted: a built-in one's name, or the command. */
static void client_label(const hunt_ctx *h, char *out, size_t n) {
  out[0] = '\0';
  if (!h->argv) {
    snprintf(out, n, "%s", run_client_name(h->kind));
    return;
  }
  int argc = 0;
  while (h->argv[argc]) argc++;
  words(out, n, argc, h->argv);
}

/* The command that replays the finding's scenario file. */
static void repro(const hunt_ctx *h, const char *file, char *out, size_t n) {
  out[0] = '\0';
  char num[64];
  if (h->argv == NULL) {
    words(out, n, 4, (char *[]){"fusebox", "run", "--client", (char *)run_client_name(h->kind)});
    snprintf(num, sizeof num, "%g", h->scale);
    words(out, n, 3, (char *[]){"--time-scale", num, (char *)file});
    return;
  }
  words(out, n, 2, (char *[]){"fusebox", "exec"});
  if (h->exec.warp > 1) {
    snprintf(num, sizeof num, "%g", h->exec.warp);
    words(out, n, 2, (char *[]){"--warp", num});
  }
  words(out, n, 2, (char *[]){(char *)file, "--"});
  int argc = 0;
  while (h->argv[argc]) argc++;
  words(out, n, argc, h->argv);
}

/* The scenario text of finding k, its doc saying what breaks. */
static char *finding_lua(const hunt_ctx *h, const xpl_hunt_opts *o, const xpl_finding *f, int k) {
  char sched[1024], found[1024], name[1400], doc[4096], who[512];
  client_label(h, who, sizeof who);
  xpl_schedule_text(&f->shrunk, sched, sizeof sched);
  xpl_schedule_text(&f->found, found, sizeof found);
  snprintf(name, sizeof name, "hunt finding %d: %s fails on %s", k, f->verdict, sched);
  snprintf(doc, sizeof doc,
           "Found by fusebox hunt (seed %llu, client %s) after %ld runs as \"%s\", shrunk in %d "
           "step(s) (%ld runs) to the schedule here: %s. The client fails %s (the evidence, "
           "with its measured times, is in the report).%s A bounded search is not a proof: "
           "other schedules may break it too.",
           (unsigned long long)h->seed, who,
           f->found_at, found, f->shrink_steps, f->shrink_runs, sched, f->verdict,
           f->reference ? " The built-in guarded client passes it, so a client can." : "");
  xpl_lua_opts lo = o->lua;
  lo.name = name;
  lo.doc = doc;
  lo.point = is_family(f->verdict) ? f->verdict : NULL;
  return xpl_schedule_lua(&f->shrunk, &lo);
}

static int write_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  if (!fp) return -1;
  int bad = fputs(text, fp) < 0;
  bad |= fclose(fp) != 0;
  return bad ? -1 : 0;
}

/* The replayed finding fails its verdict again: "fails again", or why not. */
static const char *replay_word(const xpl_outcome *oc, const char *verdict) {
  if (oc->error) return "could not be replayed";
  for (int i = 0; i < oc->nv; i++)
    if (strcmp(oc->v[i].name, verdict) == 0)
      return oc->v[i].status == RPT_FAIL ? "fails again" : "did not fail on replay (timing?)";
  return "did not fail on replay";
}

static cJSON *finding_json(const xpl_finding *f, const char *file, const char *trace,
                           const char *cmd, const char *replay) {
  char sched[1024], found[1024];
  xpl_schedule_text(&f->shrunk, sched, sizeof sched);
  xpl_schedule_text(&f->found, found, sizeof found);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "verdict", f->verdict);
  cJSON_AddStringToObject(j, "evidence", f->evidence);
  cJSON_AddStringToObject(j, "schedule", sched);
  cJSON_AddNumberToObject(j, "steps", f->shrunk.n);
  cJSON_AddStringToObject(j, "found_as", found);
  cJSON_AddNumberToObject(j, "found_at_run", (double)f->found_at);
  cJSON_AddNumberToObject(j, "shrink_steps", f->shrink_steps);
  cJSON_AddNumberToObject(j, "shrink_runs", (double)f->shrink_runs);
  cJSON_AddBoolToObject(j, "shrink_cut_short", f->cut_short);
  cJSON_AddStringToObject(j, "reference", f->reference ? "guard passes" : "not checked");
  cJSON_AddStringToObject(j, "replay", replay);
  if (file) cJSON_AddStringToObject(j, "file", file);
  if (trace) cJSON_AddStringToObject(j, "trace", trace);
  cJSON_AddStringToObject(j, "repro", cmd);
  return j;
}

static int write_reports(const rpt_run *run, const cli_common *c) {
  char err[RPT_ERRLEN];
  int rc = 0;
  if (c->json && rpt_run_write_json(run, c->json, err) != RPT_OK) rc = -1;
  else if (c->junit && rpt_run_write_junit(run, c->junit, err) != RPT_OK) rc = -1;
  else if (c->html && rpt_run_write_html(run, c->html, err) != RPT_OK) rc = -1;
  if (rc) fprintf(stderr, "fusebox hunt: %s\n", err);
  return rc;
}

int hunt_write(const hunt_ctx *h, const xpl_hunt_opts *o, const cli_common *c,
               const xpl_hunt_result *res, int argc, char **argv) {
  const char *dir = h->out_dir ? h->out_dir : h->tmp;
  if (h->out_dir && cli_make_dirs(h->out_dir) != 0) {
    fprintf(stderr, "fusebox hunt: cannot create %s: %s\n", h->out_dir, strerror(errno));
    return -1;
  }
  char who[512];
  client_label(h, who, sizeof who);
  long budget = o->budget > 0 ? o->budget : 200;
  if (!h->quiet)
    printf("fusebox hunt: %d finding%s in %ld runs (%ld schedules tried, seed %llu, client %s, "
           "budget %ld%s)\n", res->nfindings, res->nfindings == 1 ? "" : "s", res->runs,
           res->schedules, (unsigned long long)h->seed, who, budget,
           res->stopped ? ", ran out" : "");
  if (!h->quiet && res->rejected)
    printf("  %d failing schedule%s not reported: the guarded client fails %s too\n",
           res->rejected, res->rejected == 1 ? "" : "s", res->rejected == 1 ? "it" : "them");
  rpt_run *run = rpt_run_new();
  cJSON *doc = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(doc, "findings");
  char again[4096] = "fusebox";
  words(again, sizeof again, argc, argv);
  cJSON_AddStringToObject(doc, "command", again);
  cJSON_AddNumberToObject(doc, "seed", (double)h->seed);
  cJSON_AddStringToObject(doc, "client", who);
  cJSON_AddNumberToObject(doc, "runs", (double)res->runs);
  cJSON_AddNumberToObject(doc, "schedules", (double)res->schedules);
  cJSON_AddNumberToObject(doc, "budget", (double)budget);
  cJSON_AddBoolToObject(doc, "ran_out", res->stopped);
  cJSON_AddNumberToObject(doc, "rejected", res->rejected);
  int rc = run && doc ? 0 : -1;
  for (int k = 0; rc == 0 && k < res->nfindings; k++) {
    const xpl_finding *f = &res->findings[k];
    char *lua = finding_lua(h, o, f, k + 1);
    char base[4200], file[4300], trace[4300], cmd[8192];
    snprintf(base, sizeof base, "%.4096s/finding-%d", dir, k + 1);
    snprintf(file, sizeof file, "%s.lua", base);
    snprintf(trace, sizeof trace, "%s.jsonl", base);
    if (!lua || write_file(file, lua) != 0) {
      fprintf(stderr, "fusebox hunt: cannot write %s: %s\n", file, strerror(errno));
      free(lua);
      rc = -1;
      break;
    }
    xpl_outcome *oc = calloc(1, sizeof *oc);
    if (oc && hunt_play_one(h, 0, lua, 1000000 + k, base, oc) == 0 && !oc->error) {
      char err[RPT_ERRLEN];
      rpt_input in = {.trace_path = trace, .client = who};
      if (rpt_run_add(run, &in, err) != RPT_OK) rpt_run_add_error(run, file, file, err);
    }
    const char *replay = oc ? replay_word(oc, f->verdict) : "out of memory";
    repro(h, h->out_dir ? file : "FILE.lua", cmd, sizeof cmd);
    char sched[1024];
    xpl_schedule_text(&f->shrunk, sched, sizeof sched);
    if (!h->quiet) {
      printf("\nfinding %d: %s fails\n  schedule: %s (%d step%s; found at run %ld, shrunk in %d "
             "step%s, %ld runs%s)\n  evidence: %s\n  %s; the scenario %s\n  replay: %s\n", k + 1,
             f->verdict, sched, f->shrunk.n, f->shrunk.n == 1 ? "" : "s", f->found_at,
             f->shrink_steps, f->shrink_steps == 1 ? "" : "s", f->shrink_runs,
             f->cut_short ? "; the budget ended the shrinking: it may shrink further" : "",
             f->evidence,
             f->reference ? "the guarded client passes it" : "not checked against the guard",
             replay, cmd);
      if (!h->out_dir && k == 0) printf("\n%s", lua);
    }
    cJSON_AddItemToArray(list, finding_json(f, h->out_dir ? file : NULL,
                                            h->out_dir ? trace : NULL, cmd, replay));
    free(oc);
    free(lua);
  }
  if (rc == 0 && !h->quiet) printf("\nhunt again: %s\n", again);
  if (rc == 0 && h->out_dir) {
    char path[4200], *text = cJSON_Print(doc);
    snprintf(path, sizeof path, "%s/hunt.json", h->out_dir);
    if (!text || write_file(path, text) != 0) {
      fprintf(stderr, "fusebox hunt: cannot write %s\n", path);
      rc = -1;
    }
    free(text);
  }
  if (rc == 0 && run) rc = write_reports(run, c);
  cJSON_Delete(doc);
  rpt_run_free(run);
  return rc;
}
