#!/usr/bin/env bash
# scripts/smoke-install.sh as a ctest test: the build tree of the binary under
# test installed into a temp prefix (moved once), packaged (.deb, npm, wheel)
# and each install played from outside the checkout with no FUSEBOX_*
# variable. Its own exit status: 0, 1, or 77 when a needed tool is absent
# (a failure instead with FUSEBOX_TEST_STRICT=1).
. "$(dirname "$0")/lib.sh"
need_fusebox
bash "$src/scripts/smoke-install.sh" --build "$(cd "$(dirname "$bin")" && pwd)"
