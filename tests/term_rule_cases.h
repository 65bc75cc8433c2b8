/*
 * term_rule_cases.h - the cases of the one terminal-safe rule
 * (common/term_rule.h), shared by unit_sim (sim_term_safe, which keeps '\n'
 * and '\t') and unit_reports (rpt__put_term, one line: '\n' and '\t' too
 * become '?'), so both modules are held to the same rule.
 */
#ifndef FUSEBOX_TERM_RULE_CASES_H
#define FUSEBOX_TERM_RULE_CASES_H

static const struct {
  const char *in;
  const char *safe;    /* sim_term_safe: keeps '\n' and '\t' */
  const char *oneline; /* rpt__put_term */
} TERM_RULE_CASES[] = {
    {"a\x1b[31mb", "a?[31mb", "a?[31mb"},                 /* ESC (C0) */
    {"bell\x07.", "bell?.", "bell?."},                    /* BEL */
    {"del\x7f", "del?", "del?"},                          /* DEL */
    {"\xc2\x9b" "2J", "?2J", "?2J"},                      /* U+009B CSI (C1) */
    {"\xc2\x9d" "0;x\xc2\x9c", "?0;x?", "?0;x?"},         /* OSC ... ST */
    {"\xc2\x85" "nel", "?nel", "?nel"},                   /* U+0085 NEL */
    {"raw\x9b" "2J", "raw?2J", "raw?2J"},                 /* a lone C1 byte */
    {"\x80\x9f", "??", "??"},                             /* stray continuation bytes */
    {"\xc0\x80", "??", "??"},                             /* overlong NUL */
    {"\xed\xa0\x80", "???", "???"},                       /* a surrogate */
    {"cut\xe2\x80", "cut??", "cut??"},                    /* a cut sequence */
    {"\xc2\xa0nbsp \xc3\xa9t\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x99\x82",
     "\xc2\xa0nbsp \xc3\xa9t\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x99\x82",
     "\xc2\xa0nbsp \xc3\xa9t\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x99\x82"}, /* printable: kept */
    {"tab\there\nline", "tab\there\nline", "tab?here?line"},
};
#define TERM_RULE_NCASES ((int)(sizeof TERM_RULE_CASES / sizeof TERM_RULE_CASES[0]))

#endif
