package pysupport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
)

// Park has eng start store's python3 from parked interpreters whose
// start-up sees layer (LayerWith's, with bytecode or not) and nothing
// else.
func Park(ctx context.Context, eng *wasm.Engine, store *software.Store, layer vfs.FileSystem, bytecode bool) error {
	cmd, ok := store.Command(software.PythonPin.Commands[0])
	if !ok {
		return fmt.Errorf("pysupport: park: %w: python3", software.ErrNotFound)
	}
	dirs := []string{software.PythonSupportDir}
	if bytecode {
		dirs = append(dirs, StdlibDir)
	}
	return eng.SetParked(ctx, wasm.ParkSpec{
		Module: cmd.Fingerprint, Layers: []vfs.FileSystem{layer}, Argv: ParkArgv(), Env: ParkEnv(),
		Dirs: dirs, Eligible: ParkEligible, Payload: ParkPayload, Key: parkKey(cmd.Fingerprint, bytecode),
	})
}

// parkKey is the fingerprint of what a parked instance's start-up
// depends on: the module, the support sources and secexec's version
// (BytecodeFingerprint, which covers them), whether the layer has the
// standard library's bytecode, and the command line and environment.
func parkKey(module software.Fingerprint, bytecode bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%t\n%q\n%q\n", BytecodeFingerprint(module), bytecode, ParkArgv(), ParkEnv())
	return hex.EncodeToString(h.Sum(nil))
}

// python3 starts from a parked interpreter (internal/wasm parked.go) when
// its command line and environment cannot change what CPython's start-up
// did: the instance ran ParkArgv under ParkEnv, and _secexec_park.py
// applies the rest (arguments, environment, directory, standard streams,
// sys.path[0], the time zone, the user's site directory) when a process
// claims it.

// ParkLauncher is the -c program of a parked instance; sitecustomize.py
// knows it.
const ParkLauncher = "__import__('_secexec_park')._run()"

// ParkArgv is a parked instance's command line.
func ParkArgv() []string { return []string{"python3", "-c", ParkLauncher} }

// ParkEnv is a parked instance's environment at start-up: the command's
// defaults (software.PythonPin.Env), the locale of secexec's VMs, and the
// marker that tells sitecustomize.py to leave the process's part for the
// claim.
func ParkEnv() []string {
	env := append([]string(nil), software.PythonPin.Env...)
	return append(env, "LANG=C.UTF-8", "HOME=/", "PWD=/", "SECEXEC_PYPARK=1")
}

// startupVar reports whether CPython's start-up reads the variable: the
// PYTHON* ones and the locale's, whose values a process must share with
// ParkEnv to be started from a parked instance.
func startupVar(name string) bool {
	return strings.HasPrefix(name, "PYTHON") || name == "LC_ALL" || name == "LC_CTYPE" || name == "LANG" ||
		name == "SECEXEC_PYPARK"
}

// ParkEligible reports whether python3 with argv and env may start from
// a parked instance: `python3 -c CODE ...`, `python3 -m MODULE ...` or
// `python3 SCRIPT ...` with no other interpreter option, and the same
// start-up variables as ParkEnv (the interactive interpreter, a program
// on stdin and any option CPython's start-up reads start cold).
func ParkEligible(argv, env []string) bool {
	if len(argv) < 2 {
		return false
	}
	switch a := argv[1]; {
	case a == "-c" || a == "-m":
		if len(argv) < 3 || argv[2] == "" && a == "-m" {
			return false
		}
	case a == "" || a == "-" || strings.HasPrefix(a, "-"):
		return false
	}
	for _, s := range argv {
		if strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
	want := map[string]string{}
	for _, kv := range ParkEnv() {
		k, v, _ := strings.Cut(kv, "=")
		if startupVar(k) && k != "SECEXEC_PYPARK" {
			want[k] = v
		}
	}
	seen := 0
	got := map[string]bool{}
	for _, kv := range env {
		if strings.IndexByte(kv, 0) >= 0 {
			return false
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !startupVar(k) {
			continue
		}
		if got[k] {
			// getenv and os.environ take the first; a second one is
			// harmless to them but not worth reasoning about.
			return false
		}
		got[k] = true
		if w, ok := want[k]; !ok || w != v {
			return false
		}
		seen++
	}
	return seen == len(want)
}

// ParkPayload is what a parked instance reads at claim (_claim in
// _secexec_park.py): "<size>\n", then the directory, argc, the arguments
// and the environment, NUL-separated.
func ParkPayload(argv, env []string, cwd string) []byte {
	var b bytes.Buffer
	b.WriteString(cwd)
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(len(argv)))
	for _, s := range argv {
		b.WriteByte(0)
		b.WriteString(s)
	}
	for _, s := range env {
		b.WriteByte(0)
		b.WriteString(s)
	}
	return append([]byte(strconv.Itoa(b.Len())+"\n"), b.Bytes()...)
}
