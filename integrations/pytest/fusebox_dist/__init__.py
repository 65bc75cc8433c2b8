"""fusebox_dist - the fusebox binary and its library, as the wheel ships them
(``fusebox_dist/bin/fusebox``, ``fusebox_dist/share/fusebox``), and
``main()``, the ``fusebox`` command the wheel installs: it runs that binary
with the same arguments (``$FUSEBOX_BINARY`` names another one)."""

import os
import sys


def binary():
    """The binary: ``$FUSEBOX_BINARY``, else the one shipped here, else None."""
    env = os.environ.get("FUSEBOX_BINARY")
    if env:
        return env
    p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "fusebox")
    return p if os.access(p, os.X_OK) else None


def main():
    """Replaces this process with the binary; exit 2 when there is none."""
    exe = binary()
    if exe is None:
        sys.stderr.write("fusebox: this installation has no binary (fusebox_dist/bin/fusebox); "
                         "set FUSEBOX_BINARY to one\n")
        return 2
    try:
        os.execv(exe, [exe] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("fusebox: cannot run %s: %s\n" % (exe, e.strerror))
        return 2
