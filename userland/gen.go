// Package userland holds secexec's own guest programs: bash, grep, jq, git,
// curl and the tools module (xxd, file, zip, patch, ...), written in Go and
// compiled to WASI so they run inside the sandbox like the rest of the
// command set. The modules are built from this source at set-up and
// cached (userland/wasm.Ensure), never committed; to build them into a
// directory of your choice (a deployment image's, named to secexec by
// $SECEXEC_USERLAND_DIR), run
//
//	go run ./userland/internal/cmd/buildwasm -out DIR
package userland
