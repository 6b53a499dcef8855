#!/usr/bin/env bash
# Runs the http/https differential harness in host node. The npm packages
# it needs (undici-llhttp for llhttp's WebAssembly, readable-stream, events and buffer as pinned in
# bootjs/package.json; express) are installed into a temporary directory
# (or $HTTPJS_DEPS, to reuse one), never into the repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# The pinned versions of the bundled npm packages the harness loads.
pins="$(node -p "const d = require('$here/../../bootjs/package.json').dependencies; ['undici-llhttp', 'readable-stream', 'events', 'buffer'].map((n) => n + '@' + d[n]).join(' ')")"
deps="${HTTPJS_DEPS:-}"
if [ -z "$deps" ]; then
  deps="$(mktemp -d)"
  trap 'rm -rf "$deps"' EXIT
fi
if [ ! -f "$deps/.httpjs-installed" ] || [ "$(cat "$deps/.httpjs-installed")" != "$pins" ]; then
  # shellcheck disable=SC2086 # $pins is a list of name@version
  (cd "$deps" && npm init -y >/dev/null && npm install --ignore-scripts --no-audit --no-fund --silent $pins express@5 >/dev/null)
  echo "$pins" > "$deps/.httpjs-installed"
fi
HTTPJS_DEPS="$deps" node "$here/test.js" "$@"
