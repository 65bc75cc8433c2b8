/*
 * policy_facts.h - a client profile as a list of named facts, and the
 * difference between two of them (`fusebox diff-policy`, docs/learn.md).
 */
#ifndef FUSEBOX_POLICY_FACTS_H
#define FUSEBOX_POLICY_FACTS_H

#define POLICY_FACTS_MAX 96
#define POLICY_KEY_LEN 160
#define POLICY_LABEL_LEN 176
#define POLICY_VALUE_LEN 256

typedef struct policy_fact {
  char key[POLICY_KEY_LEN];     /* "backoff.cap", "retries[409]", "retries[connection]" */
  char label[POLICY_LABEL_LEN]; /* "backoff cap (s)", "status 409" */
  char value[POLICY_VALUE_LEN]; /* "8", "none", "retried" */
} policy_fact;

typedef struct policy_facts {
  policy_fact fact[POLICY_FACTS_MAX];
  int n;
  double ra_cap;  /* Retry-After cap in s; -1 none; -2 Retry-After not honoured */
  char ra_over[16]; /* retry_after.over_cap ("backoff" when absent) */
  double wait_lo, wait_hi; /* the first backoff wait's window (s); -1 no backoff */
} policy_facts;

/* Reads the facts of a profile (sim_profile_load's JSON). Returns 0, or -1
   when the text is not JSON. Defaults stand for keys left out. */
int policy_facts_read(const char *profile_json, policy_facts *f);

/*
 * Compares old a with new b: calls emit with one line per changed fact
 * ("LABEL: OLD → NEW"); numbers within tol (relative) of each other are
 * equal. Returns how many facts changed.
 */
int policy_facts_diff(const policy_facts *a, const policy_facts *b, double tol,
                      void (*emit)(void *ctx, const char *line), void *ctx);

#endif
