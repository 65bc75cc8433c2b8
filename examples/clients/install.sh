#!/bin/sh
# install.sh - install what the example clients need, for CI and newcomers.
# Idempotent: installs only what is missing.
#
#   Debian packages: python3-httpx python3-tenacity (the Python wrapper, run
#                    with /usr/bin/python3), curl and jq (the curl script)
#   npm packages:    `npm ci` in node/ (pinned openai and @anthropic-ai/sdk),
#                    skipped when node_modules already holds the pinned versions
#
# Node.js 20 or later must already be there (the SDKs need it; Debian 12's own
# nodejs is 18): the script stops with a message otherwise.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

missing=
for pkg in python3-httpx python3-tenacity curl jq; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "install.sh: apt-get install$missing"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086 # $missing is a list of words
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install.sh: node and npm (Node.js 20 or later) are needed for examples/clients/node" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "install.sh: Node.js $(node --version) is too old; the pinned SDKs need 20 or later" >&2
  exit 1
fi

cd "$here/node"
# Already installed at the pinned versions? (package.json pins exact versions.)
if node -e '
  const want = require("./package.json").dependencies;
  for (const [name, v] of Object.entries(want)) {
    // an alias ("openai7": "npm:openai@7.59.0") pins the version after its @
    if (require("./node_modules/" + name + "/package.json").version !== v.replace(/^npm:.*@/, "")) process.exit(1);
  }' >/dev/null 2>&1; then
  echo "install.sh: node clients up to date"
else
  echo "install.sh: npm ci in examples/clients/node"
  npm ci --no-audit --no-fund --loglevel=error
fi
