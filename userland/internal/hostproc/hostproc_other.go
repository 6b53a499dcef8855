//go:build !wasip1

package hostproc

// Spawn fails: there is no host_process outside wasip1.
func Spawn(path string, argv []string, attr Attr) (int, error) { return 0, ErrUnsupported }

// Wait fails: there is no host_process outside wasip1.
func Wait(pid int, noHang bool) (int, Status, error) { return 0, Status{}, ErrUnsupported }

// Kill fails: there is no host_process outside wasip1.
func Kill(pid, sig int) error { return ErrUnsupported }

// BlockSignal fails: there is no host_process outside wasip1.
func BlockSignal(sig int) error { return ErrUnsupported }

// UnblockSignal fails: there is no host_process outside wasip1.
func UnblockSignal(sig int) error { return ErrUnsupported }

// Pipe fails: there is no host_process outside wasip1.
func Pipe() (r, w int, err error) { return 0, 0, ErrUnsupported }

// SetCloexec fails: there is no host_process outside wasip1.
func SetCloexec(fd int, on bool) error { return ErrUnsupported }

// Dup fails: there is no host_process outside wasip1.
func Dup(fd int) (int, error) { return 0, ErrUnsupported }

// Umask fails: there is no host_process outside wasip1.
func Umask(mask int, set bool) (int, error) { return 0, ErrUnsupported }

// Exec fails: there is no host_process outside wasip1.
func Exec(path string, argv, env []string) error { return ErrUnsupported }

// IsTerminal reports false: there is no host_user outside wasip1.
func IsTerminal(fd int) bool { return false }

// Getpid returns 0: there is no host_process outside wasip1.
func Getpid() int { return 0 }

// Getppid returns 0: there is no host_process outside wasip1.
func Getppid() int { return 0 }
