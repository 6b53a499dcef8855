// Package clients holds no Go code: its tests run the TypeScript
// (clients/typescript) and Python (clients/python) clients of the secexec
// HTTP API against a real `secexec serve` on 127.0.0.1, and check the
// routes they use against internal/api/openapi.json. The Python client is
// tested as its users get it (its wheel built and pip-installed into a
// venv) and type-checked with a pinned pyright in strict mode.
package clients
