/*
 * exec_client.c - plays one scenario against an external command: serve the
 * scenario on a free loopback port, run the command with the provider base
 * URLs and what the scenario asks of it in its environment (docs/exec.md),
 * bounded by a timeout, optionally under libfaketime, keep its exit status
 * and output, and write its account (exit status as the outcome, stdout as
 * the answer text) to the trace as a `client` event.
 */
#define _GNU_SOURCE /* execvpe */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/exec.h"
#include "cli/run.h"

#define MAX_TEXT (64 * 1024) /* stdout kept as the answer text */
#define MAX_ENV 64           /* variables exec sets */

extern char **environ;

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

/* What the client table asks; see exec.h. */
int exec_describe(const char *client_json, exec_call *call, char err[EXEC_ERRLEN]) {
  run_workload w;
  char rerr[RUN_ERRLEN];
  memset(call, 0, sizeof *call);
  if (run_client_describe(client_json, &w, &call->deadline_s, &call->attempt_timeout_s, rerr) != 0) {
    snprintf(err, EXEC_ERRLEN, "%s", rerr);
    return -1;
  }
  call->stream = w.call == RUN_CALL_STREAM || w.call == RUN_CALL_STREAM_TOOLS; /* a tools turn streamed too */
  call->effect = w.call == RUN_CALL_EFFECT;
  call->dialect = w.dialect;
  snprintf(call->effect_name, sizeof call->effect_name, "%s", w.effect);
  snprintf(call->payload, sizeof call->payload, "%s", w.payload);
  call->requests = w.requests;
  call->concurrency = w.concurrency;
  return 0;
}

const char *exec_find_faketime(void) {
  static char found[1024];
  const char *env = getenv("FUSEBOX_LIBFAKETIME");
  if (env && env[0]) return access(env, R_OK) == 0 ? env : NULL;
  static const char *const PATTERNS[] = {"/usr/lib/*/faketime/libfaketime.so.1",
                                         "/usr/lib/faketime/libfaketime.so.1",
                                         "/usr/local/lib/faketime/libfaketime.so.1", NULL};
  for (int i = 0; PATTERNS[i]; i++) {
    glob_t g;
    if (glob(PATTERNS[i], 0, NULL, &g) == 0 && g.gl_pathc > 0) {
      snprintf(found, sizeof found, "%s", g.gl_pathv[0]);
      globfree(&g);
      return found;
    }
    globfree(&g);
  }
  return NULL;
}

/* The command's environment: the caller's, with exec's variables set. */
typedef struct env_list {
  char *v[MAX_ENV];
  int n;
} env_list;

static void env_add(env_list *e, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void env_add(env_list *e, const char *name, const char *fmt, ...) {
  if (e->n >= MAX_ENV) return;
  char val[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(val, sizeof val, fmt, ap);
  va_end(ap);
  size_t len = strlen(name) + strlen(val) + 2;
  char *s = malloc(len);
  if (s == NULL) return;
  snprintf(s, len, "%s=%s", name, val);
  e->v[e->n++] = s;
}

/* 1 if entry ("NAME=value") sets a variable of e. */
static int overridden(const env_list *e, const char *entry) {
  const char *eq = strchr(entry, '=');
  size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
  for (int i = 0; i < e->n; i++)
    if (strncmp(e->v[i], entry, n) == 0 && e->v[i][n] == '=') return 1;
  return 0;
}

/*
 * The API a scenario's client calls, in docs/apis.md's words, with a model
 * of that family and the path to call on the server: indexed by
 * guard_dialect, which client.dialect sets (absent: chat completions, the
 * API every SDK family can reach). Gemini and Bedrock name the model in the
 * path.
 */
static const struct {
  const char *dialect, *model, *path, *stream_path;
} APIS[] = {
    {"openai-chat", "gpt-fusebox", "/v1/chat/completions", "/v1/chat/completions"},
    {"anthropic", "claude-fusebox", "/v1/messages", "/v1/messages"},
    {"openai-responses", "gpt-fusebox", "/v1/responses", "/v1/responses"},
    {"gemini", "gemini-fusebox", "/v1beta/models/gemini-fusebox:generateContent",
     "/v1beta/models/gemini-fusebox:streamGenerateContent?alt=sse"},
    {"bedrock-converse", "bedrock-fusebox", "/model/bedrock-fusebox/converse",
     "/model/bedrock-fusebox/converse-stream"},
    {"ollama-chat", "ollama-fusebox", "/api/chat", "/api/chat"},
    {"cohere", "cohere-fusebox", "/v2/chat", "/v2/chat"},
};

/*
 * Builds the environment (docs/exec.md). Returns a NULL-terminated array
 * (the caller frees it and e's strings), or NULL when out of memory.
 */
static char **build_env(env_list *e, const exec_call *c, int port, const char *scenario,
                        const exec_opts *o) {
  char host[64];
  snprintf(host, sizeof host, "http://127.0.0.1:%d", port);
  env_add(e, "OPENAI_BASE_URL", "%s/v1", host);
  env_add(e, "ANTHROPIC_BASE_URL", "%s", host);
  env_add(e, "GROQ_BASE_URL", "%s", host);          /* groq-sdk adds /openai/v1 */
  env_add(e, "GOOGLE_GEMINI_BASE_URL", "%s", host); /* @google/genai adds /v1beta */
  env_add(e, "FUSEBOX_URL", "%s", host);
  env_add(e, "FUSEBOX_SCENARIO", "%s", scenario);
  env_add(e, "FUSEBOX_STREAM", "%d", c->stream ? 1 : 0);
  int api = c->dialect >= 0 && (size_t)c->dialect < sizeof APIS / sizeof APIS[0] ? c->dialect : 0;
  env_add(e, "FUSEBOX_DIALECT", "%s", APIS[api].dialect);
  env_add(e, "FUSEBOX_PATH", "%s", c->stream ? APIS[api].stream_path : APIS[api].path);
  env_add(e, "FUSEBOX_CALL", "%s", c->effect ? "effect" : "chat");
  env_add(e, "FUSEBOX_EFFECT_URL", "%s/v1/effects/%s", host, c->effect_name);
  if (c->payload[0]) env_add(e, "FUSEBOX_EFFECT_PAYLOAD", "%s", c->payload);
  env_add(e, "FUSEBOX_MODEL", "%s", APIS[api].model);
  if (c->deadline_s > 0) env_add(e, "FUSEBOX_DEADLINE", "%g", c->deadline_s);
  if (c->attempt_timeout_s > 0) env_add(e, "FUSEBOX_ATTEMPT_TIMEOUT", "%g", c->attempt_timeout_s);
  env_add(e, "FUSEBOX_REQUESTS", "%d", c->requests);
  env_add(e, "FUSEBOX_CONCURRENCY", "%d", c->concurrency);
  /* Placeholders only when unset: a real key is never needed here. */
  static const char *const KEYS[][2] = {{"OPENAI_API_KEY", "sk-fusebox-placeholder"},
                                        {"ANTHROPIC_API_KEY", "sk-ant-fusebox-placeholder"},
                                        {"GROQ_API_KEY", "gsk_fusebox_placeholder"},
                                        {"GEMINI_API_KEY", "fusebox-placeholder"}};
  for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
    if (getenv(KEYS[i][0]) == NULL) env_add(e, KEYS[i][0], "%s", KEYS[i][1]);
  if (o->warp > 1) {
    const char *pre = getenv("LD_PRELOAD");
    env_add(e, "LD_PRELOAD", "%s%s%s", o->faketime_lib, pre && pre[0] ? ":" : "", pre ? pre : "");
    env_add(e, "FAKETIME", "+0 x%g", o->warp);
    env_add(e, "FUSEBOX_WARP", "%g", o->warp);
  }
  size_t n = 0;
  while (environ[n]) n++;
  char **envp = calloc(n + (size_t)e->n + 1, sizeof *envp);
  if (envp == NULL) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!overridden(e, environ[i])) envp[k++] = environ[i];
  for (int i = 0; i < e->n; i++) envp[k++] = e->v[i];
  envp[k] = NULL;
  return envp;
}

/* In the child: only async-signal-safe calls (the parent may have threads). */
static void child(char **argv, char **envp, const exec_result *res, int errfd) {
  setpgid(0, 0);
  int o = open(res->stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int e = open(res->stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int in = open("/dev/null", O_RDONLY);
  if (o < 0 || e < 0 || in < 0) {
    int er = errno;
    (void)!write(errfd, &er, sizeof er);
    _exit(126);
  }
  dup2(in, 0);
  dup2(o, 1);
  dup2(e, 2);
  execvpe(argv[0], argv, envp);
  int er = errno;
  (void)!write(errfd, &er, sizeof er);
  _exit(127);
}

/*
 * Runs the command; fills the exit fields of res. -1 with err if it cannot
 * start (fork failed, or the program could not be executed).
 */
/* idle_ms > 0: the command is ended once it has sent a request and then
   none for idle_ms (real ms); srv counts the arrivals. */
static int run_command(char **argv, char **envp, const exec_opts *o, sim_server *srv,
                       double idle_ms, exec_result *res, char err[EXEC_ERRLEN]) {
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0) {
    snprintf(err, EXEC_ERRLEN, "cannot start %s: %s", argv[0], strerror(errno));
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, EXEC_ERRLEN, "cannot start %s: %s", argv[0], strerror(errno));
    close(pfd[0]);
    close(pfd[1]);
    return -1;
  }
  if (pid == 0) child(argv, envp, res, pfd[1]);
  close(pfd[1]);
  setpgid(pid, pid);
  double t0 = mono_ms();
  int child_errno = 0;
  ssize_t got;
  do got = read(pfd[0], &child_errno, sizeof child_errno); /* EOF when exec worked */
  while (got < 0 && errno == EINTR);
  close(pfd[0]);
  /* Real seconds, also under --warp: starting a program costs real time
     (a Node process takes about a second), which a warped clock multiplies. */
  double limit_ms = o->timeout_s * 1000.0;
  int status = 0;
  long seen = 0;
  double last_arrival = t0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    double now = mono_ms();
    long n = sim_server_arrivals(srv);
    if (n != seen) {
      seen = n;
      last_arrival = now;
    }
    int idle = idle_ms > 0 && seen > 0 && now - last_arrival > idle_ms;
    if (now - t0 > limit_ms || idle) {
      res->timed_out = 1;
      if (idle && now - t0 <= limit_ms) res->idle_end_ms = now - last_arrival;
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
  if (got == (ssize_t)sizeof child_errno) {
    snprintf(err, EXEC_ERRLEN, "cannot start %s: %s", argv[0], strerror(child_errno));
    return -1;
  }
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
  cJSON_AddNumberToObject(ev, "started_t", (double)(long long)(res->started_t * 1000.0) / 1000.0);
  char *clean = sim_redact_text(text, n); /* captured output: keys never reach the trace */
  cJSON_AddStringToObject(ev, "text", clean ? clean : "");
  free(clean);
  cJSON_AddBoolToObject(ev, "external", 1);
  cJSON_AddNumberToObject(ev, "exit_code", res->exit_code);
  if (res->timed_out) cJSON_AddBoolToObject(ev, "timed_out", 1);
  if (res->end_reason[0]) cJSON_AddStringToObject(ev, "reason", res->end_reason);
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

/* Under --warp the client reads libfaketime's clock, which starts at the
   real time when the client starts and runs `warp` times faster ("+0 xF").
   The dates fusebox writes (an HTTP-date Retry-After, Anthropic's reset
   times) are written on that clock, so "3 s from now" means 3 s to the
   client too; on the real clock a date falls behind the client's by
   (F-1) x the time elapsed, and a client honouring it looked as if it
   ignored it. The origin is taken just before the client is started. */
typedef struct warp_clock {
  double origin_s, factor;
} warp_clock;

static double real_wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double warped_wall_s(void *ud) {
  warp_clock *w = ud;
  double now = real_wall_s(), origin;
  __atomic_load(&w->origin_s, &origin, __ATOMIC_ACQUIRE); /* set as the client starts */
  return origin <= 0 ? now : origin + (now - origin) * w->factor;
}

/* Plays one scenario against argv; see exec.h. */
int exec_scenario(sim_scenario *sc, const exec_call *call, char **argv, const exec_opts *o,
                  const char *label, const char *base, exec_result *res, char err[EXEC_ERRLEN]) {
  const char *scenario = sim_scenario_path(sc);
  memset(res, 0, sizeof *res);
  snprintf(res->trace_path, sizeof res->trace_path, "%s.jsonl", base);
  snprintf(res->stdout_path, sizeof res->stdout_path, "%s.stdout", base);
  snprintf(res->stderr_path, sizeof res->stderr_path, "%s.stderr", base);
  sim_server_opts so = {.scenario = sc, .trace_path = res->trace_path,
                        .time_scale = o->warp > 1 ? 1.0 / o->warp : 1.0, .seed = o->seed};
  so.upstream = o->upstream;
  warp_clock wclock = {.origin_s = 0, .factor = o->warp};
  if (o->warp > 1) so.env = (sim_env){.wall_s = warped_wall_s, .ud = &wclock};
  sim_server *srv = NULL;
  char serr[SIM_ERRLEN];
  if (sim_server_start(&so, &srv, serr) != SIM_OK) {
    snprintf(err, EXEC_ERRLEN, "%s", serr);
    return -1;
  }
  env_list e = {.n = 0};
  char **envp = build_env(&e, call, sim_server_port(srv), scenario, o);
  int rc = -1;
  /* The command's start on the trace's clock: reports time a deadline from
     its first request and show the start-up before it (docs/trace.md). */
  res->started_t = sim_server_elapsed_ms(srv);
  double origin = real_wall_s();
  __atomic_store(&wclock.origin_s, &origin, __ATOMIC_RELEASE);
  /* A client silent for twice the scenario's deadline and 5 s more has
     given up on time (it sleeps a one-day Retry-After, say): ended then, not
     at --timeout, with that reason. Scenario seconds, on the server's scale. */
  double idle_ms = call->deadline_s > 0 ? (2 * call->deadline_s + 5) * 1000.0 * so.time_scale : 0;
  if (envp == NULL) snprintf(err, EXEC_ERRLEN, "out of memory");
  else rc = run_command(argv, envp, o, srv, idle_ms, res, err);
  if (res->idle_end_ms > 0)
    snprintf(res->end_reason, sizeof res->end_reason,
             "ended early: no request for %.1f s, more than twice the scenario's deadline of %g s",
             res->idle_end_ms / 1000.0 / so.time_scale, call->deadline_s);
  if (rc == 0 && (res->exit_code == 126 || res->exit_code == 127) &&
      sim_server_arrivals(srv) == 0) {
    /* sh -c 'missing-program': the shell started, the client did not. */
    char last[200];
    exec_last_stderr(res, last, sizeof last);
    snprintf(err, EXEC_ERRLEN, "the command could not be started (exit %d%s%s)", res->exit_code,
             last[0] ? ": " : "", last);
    rc = -1;
  }
  if (rc == 0) note_account(srv, res, label);
  if (sim_server_stop(srv, serr) != SIM_OK && rc == 0) { /* a full disk */
    snprintf(err, EXEC_ERRLEN, "%s", serr);
    rc = -1;
  }
  free(envp);
  for (int i = 0; i < e.n; i++) free(e.v[i]);
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
