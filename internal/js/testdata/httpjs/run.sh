#!/usr/bin/env bash
# Runs the http/https differential harness in host node. The npm packages
# it needs (http-parser-js as pinned in bootjs/package.json, express) are
# installed into a temporary directory, never into the repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pin="$(node -p "require('$here/../../bootjs/package.json').dependencies['http-parser-js']")"
deps="${HTTPJS_DEPS:-}"
if [ -z "$deps" ]; then
  deps="$(mktemp -d)"
  trap 'rm -rf "$deps"' EXIT
fi
if [ ! -d "$deps/node_modules/http-parser-js" ] || [ ! -d "$deps/node_modules/express" ]; then
  (cd "$deps" && npm init -y >/dev/null && npm install --ignore-scripts --no-audit --no-fund --silent "http-parser-js@$pin" express@5 >/dev/null)
fi
HTTPJS_DEPS="$deps" node "$here/test.js" "$@"
