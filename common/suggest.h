/*
 * common/suggest.h - the one "did you mean" rule of fusebox: which known name
 * a mistyped one most likely meant. Pure (no allocation, no I/O, no state),
 * so every module may use it without depending on another: sim/ (step names,
 * scenario keys), reports/ (expectation names) and cli/ (client keys) all
 * link the small fusebox_common library built from this folder.
 */
#ifndef FUSEBOX_COMMON_SUGGEST_H
#define FUSEBOX_COMMON_SUGGEST_H

/* Longest name compared; longer ones are never suggested nor matched. */
#define FB_SUGGEST_MAX 63

/*
 * The edit distance of a and b: insertions, deletions, substitutions and
 * swaps of two neighbouring letters ("fial" for "fail") each cost 1
 * (optimal string alignment). Returns a number >= 0; a string longer than
 * FB_SUGGEST_MAX counts as FB_SUGGEST_MAX + 1 away from anything.
 */
int fb_distance(const char *a, const char *b);

/*
 * The most edits a name of len characters may be from a known one and still
 * be suggested: 1 up to 4 characters ("fial" -> "fail"), 2 beyond
 * ("retry_after_honored" -> "retry_after_honoured").
 */
int fb_suggest_limit(size_t len);

/*
 * The name of the NULL-terminated list `known` nearest to `key` within
 * fb_suggest_limit(strlen(key)) edits (the first of equals), or NULL when
 * none is. When dist is not NULL it receives that name's distance. The
 * result points into `known` (the caller's).
 */
const char *fb_suggest(const char *key, const char *const *known, int *dist);

#endif
