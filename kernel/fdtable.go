package kernel

import (
	"sync"
	"sync/atomic"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// FD flags, as fcntl(F_GETFD) reports them.
const FDCloexec = 1

type fdEntry struct {
	file    vfs.File
	cloexec bool
}

// FDTable is a process's file descriptor table: small integers pointing at
// shared open file descriptions. It is safe for concurrent use.
type FDTable struct {
	mu    sync.Mutex
	fds   []fdEntry // index = fd; nil file = free
	n     int       // descriptors in use
	limit int
	vm    *atomic.Int64 // descriptors in use across the VM
	vmMax int64
}

func newFDTable(limit int, vm *atomic.Int64, vmMax int) *FDTable {
	return &FDTable{limit: limit, vm: vm, vmMax: int64(vmMax)}
}

// reserveVM takes one VM-wide descriptor slot or fails with ENFILE.
func (t *FDTable) reserveVM() error {
	for {
		cur := t.vm.Load()
		if t.vmMax > 0 && cur >= t.vmMax {
			return errno.ENFILE
		}
		if t.vm.CompareAndSwap(cur, cur+1) {
			return nil
		}
	}
}

// Install stores f at the lowest free descriptor >= min and returns it.
// The table takes over the caller's reference to f on success only.
func (t *FDTable) Install(f vfs.File, min int, cloexec bool) (int, error) {
	if min < 0 {
		return -1, errno.EINVAL
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if min >= t.limit {
		return -1, errno.EMFILE
	}
	fd := -1
	for i := min; i < len(t.fds); i++ {
		if t.fds[i].file == nil {
			fd = i
			break
		}
	}
	if fd < 0 {
		fd = max(len(t.fds), min)
	}
	if fd >= t.limit {
		return -1, errno.EMFILE
	}
	if _, err := t.installAtLocked(fd, f, cloexec); err != nil {
		return -1, err
	}
	return fd, nil
}

// installAt stores f at fd, closing what was there, as dup2(2) does for
// an open file, and takes over the caller's reference on success.
func (t *FDTable) installAt(fd int, f vfs.File, cloexec bool) error {
	t.mu.Lock()
	old, err := t.installAtLocked(fd, f, cloexec)
	t.mu.Unlock()
	if old != nil {
		old.DecRef()
	}
	return err
}

// installAtLocked is the one place a descriptor enters a table: it checks
// the number against RLIMIT_NOFILE, takes a VM-wide slot when fd was free
// and returns the file fd held, whose reference the caller drops after
// unlocking (a last DecRef may block, e.g. flushing a pipe end).
func (t *FDTable) installAtLocked(fd int, f vfs.File, cloexec bool) (old vfs.File, err error) {
	if fd < 0 || fd >= t.limit {
		return nil, errno.EBADF
	}
	if fd < len(t.fds) && t.fds[fd].file != nil {
		old = t.fds[fd].file
	} else {
		if t.n >= t.limit {
			return nil, errno.EMFILE
		}
		if err := t.reserveVM(); err != nil {
			return nil, err
		}
		t.n++
		for len(t.fds) <= fd {
			t.fds = append(t.fds, fdEntry{})
		}
	}
	t.fds[fd] = fdEntry{file: f, cloexec: cloexec}
	return old, nil
}

// Get returns the file at fd with a new reference the caller must drop
// with DecRef, so a concurrent close cannot release it mid-call.
func (t *FDTable) Get(fd int) (vfs.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fd < 0 || fd >= len(t.fds) || t.fds[fd].file == nil {
		return nil, errno.EBADF
	}
	f := t.fds[fd].file
	f.IncRef()
	return f, nil
}

// Close frees fd and drops its reference.
func (t *FDTable) Close(fd int) error {
	t.mu.Lock()
	if fd < 0 || fd >= len(t.fds) || t.fds[fd].file == nil {
		t.mu.Unlock()
		return errno.EBADF
	}
	f := t.fds[fd].file
	t.fds[fd] = fdEntry{}
	t.n--
	t.mu.Unlock()
	t.vm.Add(-1)
	f.DecRef()
	return nil
}

// Dup installs a new descriptor >= min for the file at fd.
func (t *FDTable) Dup(fd, min int, cloexec bool) (int, error) {
	f, err := t.Get(fd)
	if err != nil {
		return -1, err
	}
	nfd, err := t.Install(f, min, cloexec)
	if err != nil {
		f.DecRef()
	}
	return nfd, err
}

// Dup2 makes newfd refer to the file at oldfd, closing what newfd held,
// atomically as dup2(2) does. Equal descriptors are a no-op.
func (t *FDTable) Dup2(oldfd, newfd int, cloexec bool) error {
	if newfd < 0 || newfd >= t.limit {
		return errno.EBADF
	}
	t.mu.Lock()
	if oldfd < 0 || oldfd >= len(t.fds) || t.fds[oldfd].file == nil {
		t.mu.Unlock()
		return errno.EBADF
	}
	f := t.fds[oldfd].file
	if oldfd == newfd {
		t.mu.Unlock()
		return nil
	}
	old, err := t.installAtLocked(newfd, f, cloexec)
	if err == nil {
		f.IncRef()
	}
	t.mu.Unlock()
	if old != nil {
		old.DecRef()
	}
	return err
}

// Cloexec reports the close-on-exec flag of fd.
func (t *FDTable) Cloexec(fd int) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fd < 0 || fd >= len(t.fds) || t.fds[fd].file == nil {
		return false, errno.EBADF
	}
	return t.fds[fd].cloexec, nil
}

// SetCloexec sets or clears the close-on-exec flag of fd.
func (t *FDTable) SetCloexec(fd int, on bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fd < 0 || fd >= len(t.fds) || t.fds[fd].file == nil {
		return errno.EBADF
	}
	t.fds[fd].cloexec = on
	return nil
}

// FDs returns the open descriptors in increasing order.
func (t *FDTable) FDs() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]int, 0, t.n)
	for i, e := range t.fds {
		if e.file != nil {
			out = append(out, i)
		}
	}
	return out
}

// Len returns the number of open descriptors.
func (t *FDTable) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// clone returns a copy of the table for a child process under limit,
// sharing every open file description. With cloexec false the
// close-on-exec descriptors stay behind (fork+exec in one step); with
// true they are copied with their flag, for file actions that run
// "between fork and exec" and may still dup them (see closeOnExec).
func (t *FDTable) clone(limit int, cloexec bool) (*FDTable, error) {
	c := newFDTable(limit, t.vm, int(t.vmMax))
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, e := range t.fds {
		if e.file == nil || e.cloexec && !cloexec {
			continue
		}
		if _, err := c.installAtLocked(i, e.file, e.cloexec); err != nil {
			c.closeAll()
			return nil, err
		}
		e.file.IncRef()
	}
	return c, nil
}

// closeOnExec closes the descriptors marked close-on-exec, as execve(2)
// does.
func (t *FDTable) closeOnExec() {
	for _, fd := range t.FDs() {
		if c, err := t.Cloexec(fd); err == nil && c {
			_ = t.Close(fd)
		}
	}
}

// closeFrom closes every descriptor >= min, as closefrom(3).
func (t *FDTable) closeFrom(min int) {
	for _, fd := range t.FDs() {
		if fd >= min {
			_ = t.Close(fd)
		}
	}
}

// closeAll closes every descriptor, at process exit.
func (t *FDTable) closeAll() {
	t.mu.Lock()
	fds := t.fds
	t.fds = nil
	n := t.n
	t.n = 0
	t.mu.Unlock()
	t.vm.Add(-int64(n))
	for _, e := range fds {
		if e.file != nil {
			e.file.DecRef()
		}
	}
}
