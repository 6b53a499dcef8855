// Package syscalls is the system call layer of secexec's WebAssembly
// runtime: the wasi_snapshot_preview1 functions and the agentOS host
// modules (host_process, host_fs, host_user, host_tty, host_net) as wazero
// host functions over the secexec kernel.
//
// Every function is a thin translator in the manner of gVisor's
// syscalls/linux: it bounds-checks and decodes its arguments from guest
// memory, calls one method of *kernel.Process, and encodes the result,
// mapping the kernel's Linux errno to a WASI errno. No permission check,
// limit or POSIX rule lives here; the kernel has them all, once, so a
// WebAssembly guest and a JavaScript guest can never disagree.
//
// The functions find the calling process through the context wazero
// passes them: the runner attaches a *State with [WithState] to the
// context it calls _start with. A State holds what WASI needs beyond the
// kernel process: argv and environ, the preopened directories and their
// tagged aliases (agentOS ABI §4.3), and the one-shot creation mode of
// host_fs.set_open_mode.
package syscalls

import (
	"context"
	"path"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// State is the per-process state of a WebAssembly guest. A process runs
// one guest instance at a time and the instance is single-threaded, so
// host functions of one State are never called concurrently.
type State struct {
	// P is the kernel process the guest runs in.
	P *kernel.Process
	// Argv and Env are what args_get and environ_get return.
	Argv []string
	Env  []string

	preopens []preopen
	// openMode is the creation mode for the next path_open, set by
	// host_fs.set_open_mode; openModeSet says whether it was set.
	openMode    uint32
	openModeSet bool
	// accounts caches the parsed account files, by name.
	accounts map[string]accountCache
	// parked is set while a parked instance waits for, or reads, its
	// claim (park.go).
	parked *Park
}

// preopen is one preopened directory. Its tagged alias 0x40000000|(3+i)
// names path independently of the descriptor table; fd is the visible
// descriptor it was installed at (or -1) and file the description there,
// so the untagged number still names the preopen only while it holds
// that description.
type preopen struct {
	path string
	fd   int
	file vfs.File
}

// Descriptor encodings of the agentOS ABI.
const (
	taggedBit   = 0x40000000
	taggedMask  = 0x3FFFFFFF
	firstPreFD  = 3
	fdCwd       = 0xFFFFFFFF // AT_FDCWD of host_fs
	fdCwdRename = 0xFFFFFFFE // AT_FDCWD of path_renameat2
)

// NewState returns the state of a guest starting in p with argv and env.
// It preopens the working directory (as fd 3) and "/" (agentOS ABI §5.3);
// the preopens are close-on-exec, so children and exec'd images get their
// own.
func NewState(ctx context.Context, p *kernel.Process, argv, env []string) *State {
	s := &State{P: p, Argv: argv, Env: env}
	// SIGCHLD's default action is to do nothing, and no guest of this ABI
	// installs handlers; catching it changes nothing a guest can see but
	// lets a WNOHANG wait sleep until a child exits (see park). An ignored
	// SIGCHLD stays ignored.
	if old, err := p.SetDisposition(kernel.SIGCHLD, kernel.DispositionCatch); err == nil && old != kernel.DispositionDefault {
		_, _ = p.SetDisposition(kernel.SIGCHLD, old)
	}
	cwd := p.Cwd()
	dirs := []string{cwd}
	if cwd != "/" {
		dirs = append(dirs, "/")
	}
	for _, d := range dirs {
		pre := preopen{path: d, fd: -1}
		if fd, err := p.Open(ctx, kernel.AtFDCWD, d, vfs.O_RDONLY|vfs.O_DIRECTORY|vfs.O_CLOEXEC, 0); err == nil {
			pre.fd = fd
		} else if fd, err := p.Open(ctx, kernel.AtFDCWD, d, vfs.O_PATH|vfs.O_DIRECTORY|vfs.O_CLOEXEC, 0); err == nil {
			// A directory the policy lets the guest resolve but not list
			// is still a usable root for path operations.
			pre.fd = fd
		}
		if pre.fd >= 0 {
			if f, err := p.File(pre.fd); err == nil {
				pre.file = f
			}
		}
		s.preopens = append(s.preopens, pre)
	}
	return s
}

// NewPrestartedState returns the state of a process that claims a
// prestarted instance: its only preopen is "/", which must land on
// PrestartRootFD, where the instance's initialisation saw it; ok is false
// (and the state closed) when the process already holds that descriptor.
func NewPrestartedState(ctx context.Context, p *kernel.Process, argv, env []string) (*State, bool) {
	s := &State{P: p, Argv: argv, Env: env}
	if old, err := p.SetDisposition(kernel.SIGCHLD, kernel.DispositionCatch); err == nil && old != kernel.DispositionDefault {
		_, _ = p.SetDisposition(kernel.SIGCHLD, old)
	}
	if f, err := p.File(PrestartRootFD); err == nil {
		f.DecRef()
		return nil, false
	}
	pre := preopen{path: "/", fd: -1}
	fd, err := p.Open(ctx, kernel.AtFDCWD, "/", vfs.O_RDONLY|vfs.O_DIRECTORY|vfs.O_CLOEXEC, 0)
	if err != nil {
		fd, err = p.Open(ctx, kernel.AtFDCWD, "/", vfs.O_PATH|vfs.O_DIRECTORY|vfs.O_CLOEXEC, 0)
	}
	if err != nil || fd != PrestartRootFD {
		if err == nil {
			_ = p.Close(fd)
		}
		return nil, false
	}
	pre.fd = fd
	if f, err := p.File(fd); err == nil {
		pre.file = f
	}
	s.preopens = append(s.preopens, pre)
	return s, true
}

// Close drops the references the state holds. The visible preopen
// descriptors belong to the process and close with it.
func (s *State) Close() {
	for i := range s.preopens {
		if f := s.preopens[i].file; f != nil {
			f.DecRef()
			s.preopens[i].file = nil
		}
	}
}

type stateKey struct{}

// WithState returns ctx carrying s, for the calls of one guest instance.
func WithState(ctx context.Context, s *State) context.Context {
	return context.WithValue(ctx, stateKey{}, s)
}

// StateOf returns the state ctx carries, or nil.
func StateOf(ctx context.Context) *State {
	s, _ := ctx.Value(stateKey{}).(*State)
	return s
}

// preopenOf returns the preopen a tagged or untagged preopen number
// names, or nil.
func (s *State) preopenOf(fd uint32) *preopen {
	if fd&taggedBit != 0 && fd < 0x80000000 {
		i := int(fd&taggedMask) - firstPreFD
		if i >= 0 && i < len(s.preopens) {
			return &s.preopens[i]
		}
		return nil
	}
	for i := range s.preopens {
		pre := &s.preopens[i]
		if pre.fd >= 0 && uint32(pre.fd) == fd && pre.file != nil && s.holds(pre.fd, pre.file) {
			return pre
		}
	}
	return nil
}

// holds reports whether descriptor fd still refers to f.
func (s *State) holds(fd int, f vfs.File) bool {
	g, err := s.P.File(fd)
	if err != nil {
		return false
	}
	g.DecRef()
	return g == f
}

func isTagged(fd uint32) bool { return fd&taggedBit != 0 && fd < 0x80000000 }

// joinGuest joins a path relative to a preopen onto its directory.
// Resolution of "." and ".." is left to the kernel, which clamps at the
// guest root.
func joinGuest(dir, rel string) string {
	if rel == "" {
		return dir
	}
	if dir == "/" {
		return "/" + rel
	}
	return path.Join(dir, "") + "/" + rel
}
