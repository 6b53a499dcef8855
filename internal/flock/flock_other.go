//go:build !unix

package flock

import "context"

// Lock is a no-op where flock(2) does not exist. Its users stay correct
// without it (their files appear by rename); two processes may merely do
// the same work twice.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	return func() {}, ctx.Err()
}
