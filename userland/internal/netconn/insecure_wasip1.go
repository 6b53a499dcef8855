//go:build wasip1

package netconn

import (
	"os"
	"runtime"
	"strings"
	"syscall"
)

//go:wasmimport host_process proc_exec
func procExec(path, pathLen, argv, argvLen, envp, envpLen, cloexec, cloexecN uint32) uint32

// insecureEnv is how a guest asks the host to accept a server certificate
// that does not verify (agentOS ABI §11.2): the host reads it from the
// environment the program was started with.
const insecureEnv = "NODE_TLS_REJECT_UNAUTHORIZED"

// Restart makes later TLS connections verify the server's certificate,
// or not when insecure is set (curl -k, wget --no-check-certificate). The
// host decides that from NODE_TLS_REJECT_UNAUTHORIZED in the environment
// the process started with, which the guest cannot change, so when the
// environment says otherwise the program is replaced by itself
// (proc_exec: same process, descriptors and directory) with the variable
// set to 0 or removed: curl and wget ignore a setting meant for node. It
// returns only on failure, or at once when there is nothing to do.
func Restart(insecure bool) error {
	if (os.Getenv(insecureEnv) == "0") == insecure && !dupEnv() {
		return nil
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, insecureEnv+"=") {
			env = append(env, kv)
		}
	}
	if insecure {
		env = append(env, insecureEnv+"=0")
	}
	path := os.Args[0]
	argv := nulJoin(os.Args)
	envp := nulJoin(env)
	p := []byte(path)
	e := procExec(bytesPtr(p), uint32(len(p)), bytesPtr(argv), uint32(len(argv)), bytesPtr(envp), uint32(len(envp)), 0, 0)
	runtime.KeepAlive(p)
	runtime.KeepAlive(argv)
	runtime.KeepAlive(envp)
	return syscall.Errno(e)
}

// dupEnv reports whether the variable is set more than once, when the
// host and os.Getenv might read different ones.
func dupEnv() bool {
	n := 0
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, insecureEnv+"=") {
			n++
		}
	}
	return n > 1
}

func nulJoin(list []string) []byte {
	var b strings.Builder
	for _, s := range list {
		b.WriteString(s)
		b.WriteByte(0)
	}
	return []byte(b.String())
}
