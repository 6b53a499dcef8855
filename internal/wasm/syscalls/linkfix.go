package syscalls

import (
	"context"
	"path"
	"strings"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// linkSource works around a bug of the agentOS userland: the patched
// Rust std's hard_link (used by ln, link and cp -l) hands path_link the
// new link's relative path as both the old and the new path, so the
// source is lost and every hard link fails with ENOENT (agentOS ABI §13.7
// observes it upstream; it is the guest's doing, not the host's).
//
// path_link calls this only when the literal request failed with ENOENT
// and both paths are the same guest bytes, a request no correct program
// makes on purpose. It recovers the source the way ln's operands name it:
// the command's operands (non-option arguments) are resolved against the
// working directory, and an operand is the source when it is an existing
// non-directory and the link name newPath equals the last operand, or the
// last operand (a directory) joined with the operand's base name, or for
// a lone operand the working directory joined with its base name. Exactly
// one operand must qualify. The link is then made by the kernel with all
// its checks, so the workaround can never grant more than the guest could
// do itself.
func (s *State) linkSource(ctx context.Context, newDirfd int, newPath string) (string, bool) {
	cwd := s.P.Cwd()
	abs := func(dir, p string) string {
		if strings.HasPrefix(p, "/") {
			return path.Clean(p)
		}
		return path.Join(dir, p)
	}
	dir := cwd
	if newDirfd != kernel.AtFDCWD {
		f, err := s.P.File(newDirfd)
		if err != nil {
			return "", false
		}
		dir = f.Path()
		f.DecRef()
	}
	target := abs(dir, newPath)
	var ops []string
	opts := true
	for _, a := range s.Argv[min(1, len(s.Argv)):] {
		switch {
		case opts && a == "--":
			opts = false
		case opts && len(a) > 1 && a[0] == '-':
		default:
			ops = append(ops, abs(cwd, a))
		}
	}
	if len(ops) == 0 {
		return "", false
	}
	last := ops[len(ops)-1]
	cands := ops[:len(ops)-1]
	if len(ops) == 1 {
		cands, last = ops, cwd
	}
	found := ""
	for _, c := range cands {
		if c == target {
			continue
		}
		if target != last && target != path.Join(last, path.Base(c)) {
			continue
		}
		st, err := s.P.Stat(ctx, kernel.AtFDCWD, c, false)
		if err != nil || st.Type() == vfs.TypeDir {
			continue
		}
		if found != "" && found != c {
			return "", false
		}
		found = c
	}
	return found, found != ""
}
