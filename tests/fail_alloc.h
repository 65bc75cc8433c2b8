/*
 * fail_alloc.h - a failing allocator for allocation-failure tests. It
 * replaces malloc, calloc, realloc and free for the whole test program
 * (glibc's strdup and strndup, cJSON and libcurl call them): they count,
 * refuse the Nth allocation (or every one from the Nth on) when armed, and
 * otherwise forward to glibc's own allocator. Include it in exactly one file
 * of a test program, and only when not built with AddressSanitizer.
 */
#ifndef FUSEBOX_FAIL_ALLOC_H
#define FUSEBOX_FAIL_ALLOC_H

#include <errno.h>
#include <stddef.h>


void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

static long af_count;    /* allocations asked for since af_arm */
static long af_fail_at;  /* the allocation that fails (1-based); 0 = none */
static int af_fail_rest; /* 1: every allocation from af_fail_at on fails */
static int af_armed;
static long af_failed;   /* allocations refused since af_arm */
static long af_live;     /* blocks allocated and not yet freed, all the time */

/* Counts one allocation; 1 when it must fail. */
static int af_refuse(void) {
  if (!af_armed) return 0;
  long n = ++af_count;
  if (af_fail_at > 0 && (n == af_fail_at || (af_fail_rest && n > af_fail_at))) {
    af_failed++;
    errno = ENOMEM;
    return 1;
  }
  return 0;
}

void *malloc(size_t n) {
  if (af_refuse()) return NULL;
  void *p = __libc_malloc(n);
  if (p != NULL) af_live++;
  return p;
}

void *calloc(size_t n, size_t size) {
  if (af_refuse()) return NULL;
  void *p = __libc_calloc(n, size);
  if (p != NULL) af_live++;
  return p;
}

void *realloc(void *p, size_t n) {
  if (p == NULL) return malloc(n);
  if (n == 0) {
    free(p);
    return NULL;
  }
  if (af_refuse()) return NULL;
  return __libc_realloc(p, n);
}

void free(void *p) {
  if (p == NULL) return;
  int e = errno;
  af_live--;
  __libc_free(p);
  errno = e;
}

/* Counts allocations from now on; fail_at 0 fails none. */
static void af_arm(long fail_at, int fail_rest) {
  af_count = 0;
  af_failed = 0;
  af_fail_at = fail_at;
  af_fail_rest = fail_rest;
  af_armed = 1;
}

static void af_disarm(void) { af_armed = 0; }

#endif
