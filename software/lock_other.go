//go:build !unix

package software

import "context"

// lockFile is a no-op where flock(2) does not exist. Installs stay correct
// without it (every file appears by rename, metadata last); two processes
// may merely fetch the same package twice.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	return func() {}, ctx.Err()
}
