// Package userland holds secexec's own guest programs: bash, grep, jq, git,
// curl and the tools module (xxd, file, zip, patch, ...),
// written in Go and compiled to WASI so they run inside the sandbox like
// the rest of the command set. The compiled modules are committed in
// userland/wasm and embedded by that package; regenerate them with
//
//	go generate ./userland
//
// after changing any userland source (TestWasmUpToDate fails otherwise).
package userland

//go:generate go run ./internal/cmd/buildwasm -out wasm
