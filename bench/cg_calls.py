#!/usr/bin/env python3
"""bench/cg_calls.py - calls of the heap functions in a callgrind output file
(bench/heap_calls.sh): prints "malloc calloc realloc free" call counts, and
with --by-caller the callers of each. Reads callgrind's compressed names."""
import collections
import re
import sys

FUNCS = ("malloc", "calloc", "realloc", "free")


def main():
    path = sys.argv[1]
    names, calls = {}, collections.Counter()
    by_caller = collections.defaultdict(collections.Counter)
    cur = cfn = None

    def name(s):
        m = re.match(r"\((\d+)\)(?: (.*))?", s)
        if not m:
            return s
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), m.group(1))

    with open(path) as f:
        for line in f:
            if line.startswith("fn="):
                cur = name(line[3:].strip())
            elif line.startswith("cfn="):
                cfn = name(line[4:].strip())
            elif line.startswith("calls=") and cfn in FUNCS:
                n = int(line[6:].split()[0])
                calls[cfn] += n
                by_caller[cfn][cur] += n
    print(" ".join(str(calls[f]) for f in FUNCS))
    if "--by-caller" in sys.argv:
        for f in FUNCS:
            for k, v in by_caller[f].most_common(8):
                print(f"# {f} <- {k}: {v}", file=sys.stderr)


main()
