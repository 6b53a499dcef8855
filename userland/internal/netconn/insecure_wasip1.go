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

// RestartInsecure makes later TLS connections skip certificate
// verification (curl -k, wget --no-check-certificate). The host decides
// that from the environment the process started with, which the guest
// cannot change, so unless the variable is already set the program is
// replaced by itself (proc_exec: same process, descriptors and directory)
// with NODE_TLS_REJECT_UNAUTHORIZED=0 added. It returns only on failure,
// or at once when there is nothing to do.
func RestartInsecure() error {
	if os.Getenv(insecureEnv) == "0" {
		return nil
	}
	env := append(os.Environ(), insecureEnv+"=0")
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

func nulJoin(list []string) []byte {
	var b strings.Builder
	for _, s := range list {
		b.WriteString(s)
		b.WriteByte(0)
	}
	return []byte(b.String())
}
