/*
 * classify.c - every failure gets exactly one kind, from the transport
 * outcome, the HTTP status, the provider's structured error type/code and
 * the headers; never from message text. The table (issue 3):
 *
 *   transient  connect failure, closed/reset before a response, timeout,
 *              408, 409, 429 rate limit, 500, 502, 503, 504, 529   retried
 *   permanent  400, 401, 402, 403, 404, 413, 422, 429 quota/billing,
 *              content refusal                                      never
 *   shape      2xx truncated / not JSON / missing fields, stream cut
 *              before its end marker                                retried
 *   unknown    anything not recognised                              never
 *
 * x-should-retry: true|false overrides the table for a failed response.
 * Bedrock names its errors (x-amzn-errortype, and the :exception-type of an
 * event stream's exception message); the names below place them in the
 * table: throttling, unavailability, timeouts and internal or model-stream
 * errors are transient, validation and access errors permanent. Ollama and
 * Cohere name none: their errors go by status, and a stream they end with
 * an error (Ollama's error line, Cohere's message-end with an error) is
 * "stream_error", a failure while generating, retried as a 5xx is.
 */
#include "guard/guard_int.h"

#include <stdio.h>
#include <string.h>

static const char *const QUOTA[] = {
    "insufficient_quota", "billing_hard_limit_reached", "billing_not_active",
    "billing_error", "quota_exceeded", "ServiceQuotaExceededException", NULL};
static const char *const RATE[] = {"rate_limit_exceeded", "rate_limit_error",
                                   "tokens", "requests",
                                   "RESOURCE_EXHAUSTED", /* Google */
                                   "ThrottlingException", /* Bedrock */ NULL};
/* Error types/codes that say by themselves what they are (stream events and
 * errors carried in a 200). */
static const char *const TRANSIENT_TYPES[] = {
    "rate_limit_exceeded", "rate_limit_error", "overloaded_error",
    "api_error", "server_error", "timeout_error", "service_unavailable",
    /* Google's status names */
    "RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED", "ABORTED",
    /* Bedrock's error names, and its stream exceptions (lower camel case) */
    "ThrottlingException", "ServiceUnavailableException", "ModelTimeoutException",
    "InternalServerException", "ModelNotReadyException", "throttlingException",
    "serviceUnavailableException", "modelStreamErrorException", "internalServerException",
    /* Ollama's and Cohere's in-stream errors (see above) */
    "stream_error", NULL};
static const char *const PERMANENT_TYPES[] = {
    "insufficient_quota", "billing_hard_limit_reached", "billing_not_active",
    "billing_error", "invalid_request_error", "authentication_error",
    "permission_error", "not_found_error", "request_too_large",
    "context_length_exceeded", "invalid_api_key", "model_not_found",
    "content_filter", "INVALID_ARGUMENT", "PERMISSION_DENIED", "UNAUTHENTICATED",
    "NOT_FOUND", "FAILED_PRECONDITION",
    "ValidationException", "AccessDeniedException", "ResourceNotFoundException",
    "ServiceQuotaExceededException", "ModelErrorException", "validationException", NULL};

static int in(const char *s, const char *const *set) {
  if (s == NULL) return 0;
  for (int i = 0; set[i]; i++)
    if (strcmp(s, set[i]) == 0) return 1;
  return 0;
}

/* A short name for a transport outcome. */
const char *guard__tx_name(guard_tx tx) {
  switch (tx) {
  case GUARD_TX_OK: return "ok";
  case GUARD_TX_CONNECT: return "connect_failed";
  case GUARD_TX_CLOSED: return "closed_before_response";
  case GUARD_TX_TIMEOUT: return "timeout";
  case GUARD_TX_IDLE: return "idle_timeout";
  case GUARD_TX_CUT: return "closed_mid_body";
  case GUARD_TX_TOOBIG: return "too_large";
  case GUARD_TX_OTHER: return "transport_error";
  }
  return "transport_error";
}

/* The kind a structured error type or code names by itself. */
guard_kind guard__classify_type(const char *t) {
  if (in(t, TRANSIENT_TYPES)) return GUARD_KIND_TRANSIENT;
  if (in(t, PERMANENT_TYPES)) return GUARD_KIND_PERMANENT;
  return GUARD_KIND_UNKNOWN;
}

static const char *body_name(guard__body b) {
  switch (b) {
  case GUARD__BODY_OK: return "";
  case GUARD__BODY_NOT_JSON: return "not_json";
  case GUARD__BODY_MISSING: return "missing_fields";
  case GUARD__BODY_TRUNCATED: return "truncated";
  case GUARD__BODY_NO_END: return "no_end_marker";
  case GUARD__BODY_BAD_CHUNK: return "bad_chunk";
  case GUARD__BODY_TOO_LARGE: return "too_large";
  case GUARD__BODY_REFUSAL: return "content_refusal";
  case GUARD__BODY_ERROR: return "error";
  }
  return "";
}

/* The error summary: code, else type, else fallback. */
static void name_error(const guard__facts *f, const char *fallback, char *out,
                       size_t n) {
  if (f->err_code && f->err_code[0])
    guard__strlcpy(out, f->err_code, n);
  else if (f->err_type && f->err_type[0])
    guard__strlcpy(out, f->err_type, n);
  else
    guard__strlcpy(out, fallback, n);
}

static guard_kind by_table(const guard__facts *f, char *out, size_t n) {
  char http[16];
  snprintf(http, sizeof http, "http_%d", f->status);

  /* Transport outcomes that left no usable response. */
  switch (f->tx) {
  case GUARD_TX_CONNECT:
  case GUARD_TX_CLOSED:
  case GUARD_TX_TIMEOUT:
  case GUARD_TX_IDLE:
    guard__strlcpy(out, guard__tx_name(f->tx), n);
    return GUARD_KIND_TRANSIENT;
  case GUARD_TX_TOOBIG:
    guard__strlcpy(out, "too_large", n);
    return GUARD_KIND_SHAPE;
  case GUARD_TX_OTHER:
    guard__strlcpy(out, guard__tx_name(f->tx), n);
    return GUARD_KIND_UNKNOWN;
  case GUARD_TX_CUT:
  case GUARD_TX_OK:
    break;
  }

  if (f->status >= 200 && f->status <= 299) {
    guard__body b = f->tx == GUARD_TX_CUT ? GUARD__BODY_TRUNCATED : f->body;
    int cut = f->tx == GUARD_TX_CUT;
    /* An error event says what it is, whatever the transport did after. */
    if (f->body == GUARD__BODY_ERROR) b = GUARD__BODY_ERROR;
    switch (b) {
    case GUARD__BODY_OK:
      out[0] = '\0';
      return GUARD_KIND_OK;
    case GUARD__BODY_REFUSAL:
      guard__strlcpy(out, "content_refusal", n);
      return GUARD_KIND_PERMANENT;
    case GUARD__BODY_ERROR: {
      guard_kind k = guard__classify_type(f->err_code);
      if (k == GUARD_KIND_UNKNOWN) k = guard__classify_type(f->err_type);
      name_error(f, "error", out, n);
      return k;
    }
    case GUARD__BODY_TRUNCATED:
      guard__strlcpy(out, cut && f->streaming ? "stream_cut" : "truncated", n);
      return GUARD_KIND_SHAPE;
    default:
      guard__strlcpy(out, body_name(b), n);
      return GUARD_KIND_SHAPE;
    }
  }

  switch (f->status) {
  case 408: case 409: case 500: case 502: case 503: case 504: case 529:
    name_error(f, http, out, n);
    return GUARD_KIND_TRANSIENT;
  case 400: case 401: case 402: case 403: case 404: case 413: case 422:
    name_error(f, http, out, n);
    return GUARD_KIND_PERMANENT;
  case 429:
    name_error(f, http, out, n);
    if (in(f->err_code, QUOTA)) return GUARD_KIND_PERMANENT;
    if (in(f->err_code, RATE)) return GUARD_KIND_TRANSIENT;
    if (in(f->err_type, QUOTA)) return GUARD_KIND_PERMANENT;
    if (in(f->err_type, RATE)) return GUARD_KIND_TRANSIENT;
    /* A bare 429 (no structured error) is a rate limit; a 429 that names
     * something we do not know fails closed. */
    if ((f->err_code == NULL || !f->err_code[0]) &&
        (f->err_type == NULL || !f->err_type[0]))
      return GUARD_KIND_TRANSIENT;
    return GUARD_KIND_UNKNOWN;
  default:
    name_error(f, http, out, n);
    return GUARD_KIND_UNKNOWN;
  }
}

/*
 * What a typical SDK makes of the same facts (GUARD_STATUS_ONLY): it retries
 * connection errors, timeouts and 408/409/429/5xx by status alone, so a quota
 * 429 is retried too; a 4xx, a 200 it cannot parse, or a stream that had
 * started is final. x-should-retry still wins, as SDKs honour it.
 */
guard_kind guard__classify_by_status(const guard__facts *f, guard_kind table) {
  if (table == GUARD_KIND_OK) return table;
  if (f->should_retry != NULL &&
      (guard__streq_ci(f->should_retry, "true") || guard__streq_ci(f->should_retry, "false")))
    return table;
  switch (f->tx) {
  case GUARD_TX_CONNECT:
  case GUARD_TX_CLOSED:
  case GUARD_TX_TIMEOUT:
    return GUARD_KIND_TRANSIENT;
  case GUARD_TX_IDLE:
    return f->streaming ? GUARD_KIND_PERMANENT : GUARD_KIND_TRANSIENT;
  default:
    break;
  }
  int s = f->status;
  if (s == 408 || s == 409 || s == 429 || s >= 500) return GUARD_KIND_TRANSIENT;
  return GUARD_KIND_PERMANENT;
}

/* Gives the facts exactly one kind and a short summary in summary[n]. */
guard_kind guard__classify(const guard__facts *f, char *summary, size_t n) {
  guard_kind k = by_table(f, summary, n);
  if (k != GUARD_KIND_OK && f->should_retry != NULL) {
    if (guard__streq_ci(f->should_retry, "true")) return GUARD_KIND_TRANSIENT;
    if (guard__streq_ci(f->should_retry, "false")) return GUARD_KIND_PERMANENT;
  }
  return k;
}
