//go:build unix

package flock

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockPoll is how often a blocked Lock retries. flock(2) cannot wait
// on a context, so a non-blocking attempt is repeated until the holder is
// done or ctx ends.
const lockPoll = 50 * time.Millisecond

// Lock takes an exclusive flock(2) on path, creating it if needed, and
// waits for it until ctx ends. The kernel drops the lock if the process
// dies, so a crashed installer never leaves its lock held.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(fd, syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
