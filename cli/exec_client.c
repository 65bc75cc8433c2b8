/*
 * exec_client.c - plays one scenario against an external command: serve the
 * scenario on a free loopback port, run the command with the provider base
 * URLs in its environment, bounded by a timeout, keep its exit status and
 * output, and write its account (exit status as the outcome, stdout as the
 * answer text) to the trace as a `client` event.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/exec.h"

#define MAX_TEXT (64 * 1024) /* stdout kept as the answer text */

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Reads at most cap-1 bytes of a file into buf; returns the length. */
static size_t slurp(const char *path, char *buf, size_t cap) {
  buf[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = '\0';
  return n;
}

static void child(char **argv, const char *out, const char *errp, int port,
                  const char *scenario) {
  setpgid(0, 0);
  char v[256];
  snprintf(v, sizeof v, "http://127.0.0.1:%d/v1", port);
  setenv("OPENAI_BASE_URL", v, 1);
  snprintf(v, sizeof v, "http://127.0.0.1:%d", port);
  setenv("ANTHROPIC_BASE_URL", v, 1);
  setenv("FUSEBOX_URL", v, 1);
  setenv("FUSEBOX_SCENARIO", scenario, 1);
  /* Placeholders only when unset: a real key is never needed here. */
  setenv("OPENAI_API_KEY", "sk-fusebox-placeholder", 0);
  setenv("ANTHROPIC_API_KEY", "sk-ant-fusebox-placeholder", 0);
  int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int in = open("/dev/null", O_RDONLY);
  if (o < 0 || e < 0 || in < 0) _exit(126);
  dup2(in, 0);
  dup2(o, 1);
  dup2(e, 2);
  execvp(argv[0], argv);
  fprintf(stderr, "fusebox exec: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

/* Runs the command; fills the exit fields of res. -1 if it cannot start. */
static int run_command(char **argv, const exec_opts *o, int port, const char *scenario,
                       exec_result *res) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) child(argv, res->stdout_path, res->stderr_path, port, scenario);
  setpgid(pid, pid);
  double t0 = mono_ms();
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (mono_ms() - t0 > o->timeout_s * 1000.0) {
      res->timed_out = 1;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    struct timespec ts = {0, 5 * 1000 * 1000}; /* polls a child, not a test clock */
    nanosleep(&ts, NULL);
  }
  kill(-pid, SIGKILL); /* anything the command left running */
  res->wall_ms = mono_ms() - t0;
  if (WIFEXITED(status)) res->exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) res->exit_code = 128 + WTERMSIG(status);
  return 0;
}

/* The command's account of its call, from the outside. */
static void note_account(sim_server *srv, const exec_result *res, const char *label) {
  char *text = malloc(MAX_TEXT);
  if (text == NULL) return;
  size_t n = slurp(res->stdout_path, text, MAX_TEXT);
  while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r')) text[--n] = '\0';
  cJSON *ev = cJSON_CreateObject();
  cJSON_AddStringToObject(ev, "ev", "client");
  cJSON_AddStringToObject(ev, "client", label);
  cJSON_AddNumberToObject(ev, "call", 0);
  cJSON_AddStringToObject(ev, "outcome", res->exit_code == 0 && !res->timed_out ? "ok" : "error");
  cJSON_AddNumberToObject(ev, "total_ms", res->wall_ms);
  char *clean = sim_redact_text(text, n); /* captured output: keys never reach the trace */
  cJSON_AddStringToObject(ev, "text", clean ? clean : "");
  free(clean);
  cJSON_AddBoolToObject(ev, "external", 1);
  cJSON_AddNumberToObject(ev, "exit_code", res->exit_code);
  if (res->timed_out) cJSON_AddBoolToObject(ev, "timed_out", 1);
  char line[200];
  exec_last_stderr(res, line, sizeof line); /* reports show it as the client's error line */
  if (line[0] && res->exit_code != 0) cJSON_AddStringToObject(ev, "error_line", line);
  cJSON_AddArrayToObject(ev, "attempts");
  char *js = cJSON_PrintUnformatted(ev);
  cJSON_Delete(ev);
  if (js) sim_server_note(srv, js);
  free(js);
  free(text);
}

/* Plays one scenario against argv; see exec.h. */
int exec_scenario(sim_scenario *sc, char **argv, const exec_opts *o, const char *label,
                  const char *base, exec_result *res, char err[EXEC_ERRLEN]) {
  const char *scenario = sim_scenario_path(sc);
  memset(res, 0, sizeof *res);
  snprintf(res->trace_path, sizeof res->trace_path, "%s.jsonl", base);
  snprintf(res->stdout_path, sizeof res->stdout_path, "%s.stdout", base);
  snprintf(res->stderr_path, sizeof res->stderr_path, "%s.stderr", base);
  sim_server_opts so = {.scenario = sc, .trace_path = res->trace_path,
                        .time_scale = 1.0, .seed = o->seed};
  sim_server *srv = NULL;
  char serr[SIM_ERRLEN];
  if (sim_server_start(&so, &srv, serr) != SIM_OK) {
    snprintf(err, EXEC_ERRLEN, "%s", serr);
    return -1;
  }
  int rc = run_command(argv, o, sim_server_port(srv), scenario, res);
  if (rc != 0) snprintf(err, EXEC_ERRLEN, "cannot start %s: %s", argv[0], strerror(errno));
  else note_account(srv, res, label);
  sim_server_free(srv);
  return rc;
}

/* The last line of the command's stderr, for evidence. */
void exec_last_stderr(const exec_result *res, char *out, size_t cap) {
  char buf[8192];
  size_t n = slurp(res->stderr_path, buf, sizeof buf);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) buf[--n] = '\0';
  const char *line = strrchr(buf, '\n');
  line = line ? line + 1 : buf;
  char *clean = sim_redact_text(line, strlen(line)); /* it goes into every report */
  snprintf(out, cap, "%.*s", 160, clean ? clean : "");
  free(clean);
  for (char *p = out; *p; p++)
    if ((unsigned char)*p < 0x20) *p = ' ';
}
