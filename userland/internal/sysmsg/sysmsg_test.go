package sysmsg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

func TestText(t *testing.T) {
	_, openErr := os.Open("/definitely/not/here")
	tests := []struct {
		err  error
		want string
	}{
		{openErr, "No such file or directory"},
		{syscall.EACCES, "Permission denied"},
		{fmt.Errorf("wrapped: %w", syscall.EISDIR), "Is a directory"},
		{syscall.EIO, "Input/output error"},
		{fs.ErrNotExist, "No such file or directory"},
		{fs.ErrPermission, "Permission denied"},
		{errors.New("host detail /secret/path"), "Input/output error"},
	}
	for _, tc := range tests {
		if got := Text(tc.err); got != tc.want {
			t.Errorf("Text(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
