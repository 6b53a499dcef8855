package kernel

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// FileAction is one posix_spawn file action. A spawn runs its actions in
// order, as the child would between fork and exec: on a copy of the
// parent's whole descriptor table (close-on-exec descriptors included, so
// an action may still dup them), each action seeing what the ones before
// it did; the descriptors still marked close-on-exec afterwards are
// closed. The types are FileClose, FileDup2, FileOpen, FileChdir,
// FileFchdir and FileCloseFrom.
type FileAction interface {
	// apply runs the action on the child's table being built.
	apply(ctx context.Context, b *spawnFiles) error
}

// MaxFileActions bounds the actions of one spawn (E2BIG beyond it).
const MaxFileActions = 4096

// FileClose closes FD in the child. Closing a descriptor that is not open
// fails with EBADF, except for 0, 1 and 2, which a caller may close
// without knowing whether they are open.
type FileClose struct{ FD int }

// FileDup2 makes To a copy of From, as dup2(2) in the child: From is read
// from the child's table as the earlier actions left it. From == To
// clears To's close-on-exec flag, so the child keeps it (glibc's reading
// of posix_spawn_file_actions_adddup2).
type FileDup2 struct{ From, To int }

// FileOpen opens Path at FD in the child, closing what FD held. A
// relative Path is resolved against the child's working directory as
// earlier FileChdir and FileFchdir actions left it. O_CLOEXEC in Flags
// marks FD close-on-exec, so it is closed again when the actions end.
type FileOpen struct {
	FD    int
	Path  string
	Flags vfs.OpenFlags
	Mode  uint32
}

// FileChdir changes the child's working directory to Path.
type FileChdir struct{ Path string }

// FileFchdir changes the child's working directory to the directory open
// at FD in the child.
type FileFchdir struct{ FD int }

// FileCloseFrom closes every descriptor >= FD in the child, as
// closefrom(3).
type FileCloseFrom struct{ FD int }

// spawnFiles is the state file actions change: the child's descriptor
// table and working directory.
type spawnFiles struct {
	k      *Kernel
	t      *FDTable
	caller vfs.Caller // Cwd is the child's working directory so far
	cwdSet bool       // a FileChdir or FileFchdir ran
}

func (a FileClose) apply(_ context.Context, b *spawnFiles) error {
	if err := b.t.Close(a.FD); err != nil && (a.FD < 0 || a.FD > 2) {
		return err
	}
	return nil
}

func (a FileDup2) apply(_ context.Context, b *spawnFiles) error {
	if a.From == a.To {
		return b.t.SetCloexec(a.To, false)
	}
	return b.t.Dup2(a.From, a.To, false)
}

func (a FileOpen) apply(ctx context.Context, b *spawnFiles) error {
	if a.FD < 0 || a.FD >= b.t.limit {
		return errno.EBADF
	}
	if err := checkActionPath(a.Path); err != nil {
		return err
	}
	f, err := b.k.vfs.Open(ctx, &b.caller, a.Path, a.Flags, a.Mode)
	if err != nil {
		return err
	}
	if err := b.t.installAt(a.FD, f, a.Flags&vfs.O_CLOEXEC != 0); err != nil {
		f.DecRef()
		return err
	}
	return nil
}

func (a FileChdir) apply(ctx context.Context, b *spawnFiles) error {
	if err := checkActionPath(a.Path); err != nil {
		return err
	}
	real, err := b.k.vfs.Realpath(ctx, &b.caller, a.Path)
	if err != nil {
		return err
	}
	st, err := b.k.vfs.Stat(ctx, &b.caller, real)
	if err != nil {
		return err
	}
	if st.Type() != vfs.TypeDir {
		return errno.ENOTDIR
	}
	b.caller.Cwd, b.cwdSet = real, true
	return nil
}

func (a FileFchdir) apply(ctx context.Context, b *spawnFiles) error {
	f, err := b.t.Get(a.FD)
	if err != nil {
		return err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return err
	}
	if st.Type() != vfs.TypeDir {
		return errno.ENOTDIR
	}
	b.caller.Cwd, b.cwdSet = f.Path(), true
	return nil
}

func (a FileCloseFrom) apply(_ context.Context, b *spawnFiles) error {
	if a.FD < 0 {
		return errno.EBADF
	}
	b.t.closeFrom(a.FD)
	return nil
}

// checkActionPath rejects the paths no file action may name.
func checkActionPath(p string) error {
	if p == "" {
		return errno.ENOENT
	}
	if strings.IndexByte(p, 0) >= 0 {
		return errno.EINVAL
	}
	return nil
}

// childFiles builds the descriptor table and working directory of a child
// of parent: opts.Files or the parent's table, then opts.Actions in order,
// then close-on-exec. caller is the child's identity with the working
// directory it starts from. Nothing outlives a failure: the table built so
// far is closed, so a rejected spawn leaks no descriptor.
func (k *Kernel) childFiles(ctx context.Context, parent *Process, opts SpawnOptions, caller vfs.Caller) (*FDTable, vfs.Caller, bool, error) {
	if len(opts.Actions) > MaxFileActions {
		return nil, caller, false, fmt.Errorf("spawn: %d file actions: %w", len(opts.Actions), errno.E2BIG)
	}
	b := &spawnFiles{k: k, caller: caller}
	if opts.Files != nil {
		b.t = newFDTable(k.limits.FDsPerProcess, &k.fds, k.limits.FDsPerVM)
		for fd, f := range opts.Files {
			if f == nil {
				continue
			}
			if err := b.t.installAt(fd, f, false); err != nil {
				b.t.closeAll()
				return nil, caller, false, err
			}
			f.IncRef()
		}
	} else {
		t, err := parent.fds.clone(k.limits.FDsPerProcess, true)
		if err != nil {
			return nil, caller, false, err
		}
		b.t = t
	}
	for i, a := range opts.Actions {
		if a == nil {
			b.t.closeAll()
			return nil, caller, false, fmt.Errorf("spawn: file action %d is nil: %w", i, errno.EINVAL)
		}
		if err := a.apply(ctx, b); err != nil {
			b.t.closeAll()
			return nil, caller, false, fmt.Errorf("spawn: file action %d (%T): %w", i, a, err)
		}
	}
	b.t.closeOnExec()
	return b.t, b.caller, b.cwdSet, nil
}

// joinCwd makes a working directory the spawn asked for absolute against
// the parent's, lexically, for the file actions; the spawn resolves it
// for real afterwards.
func joinCwd(parentCwd, cwd string) string {
	if cwd == "" {
		return parentCwd
	}
	if !strings.HasPrefix(cwd, "/") {
		cwd = parentCwd + "/" + cwd
	}
	return path.Clean(cwd)
}
