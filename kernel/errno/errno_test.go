package errno_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
)

func TestErrnoMatchesFSSentinels(t *testing.T) {
	for _, tc := range []struct {
		e      errno.Errno
		target error
	}{
		{errno.ENOENT, fs.ErrNotExist},
		{errno.EEXIST, fs.ErrExist},
		{errno.EACCES, fs.ErrPermission},
		{errno.EPERM, fs.ErrPermission},
		{errno.EINVAL, fs.ErrInvalid},
		{errno.EBADF, fs.ErrClosed},
	} {
		err := errno.Path("open", "/x", tc.e)
		if !errors.Is(err, tc.target) || !errors.Is(err, tc.e) {
			t.Errorf("%v does not match %v", err, tc.target)
		}
	}
	if errors.Is(errno.ENOENT, fs.ErrExist) {
		t.Error("ENOENT matches ErrExist")
	}
}

func TestNamesAndMessages(t *testing.T) {
	if errno.ENOENT.Name() != "ENOENT" || errno.ENOENT.Error() != "no such file or directory" || errno.ENOENT != 2 {
		t.Fatal(errno.ENOENT.Name(), errno.ENOENT.Error())
	}
	if got := errno.Errno(999).Error(); got != "errno 999" {
		t.Fatal(got)
	}
	if got := errno.Path("stat", "/a", errno.ENOTDIR).Error(); got != "stat /a: not a directory" {
		t.Fatal(got)
	}
}

func TestPathKeepsSpecificErrorsAndHidesForeignText(t *testing.T) {
	inner := errno.Path("stat", "/inner", errno.ENOENT)
	if got := errno.Path("mount", "/outer", inner); got != inner {
		t.Fatalf("inner context lost: %v", got)
	}
	wrapped := fmt.Errorf("policy says no: %w", errno.EACCES)
	if got := errno.Path("open", "/x", wrapped); got != wrapped {
		t.Fatalf("specific denial replaced: %v", got)
	}
	host := errors.New("open /home/host/secret: permission denied")
	got := errno.Path("open", "/x", host)
	if got.Error() != "open /x: input/output error" || errno.Of(got) != errno.EIO {
		t.Fatalf("foreign error leaked: %v", got)
	}
	if errno.Of(nil) != 0 || errno.Path("x", "y", nil) != nil {
		t.Fatal("nil handling")
	}
}
