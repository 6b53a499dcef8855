package wasm

import "time"

// SetParkedIdle sets how long an instance stays parked unclaimed, for a
// test, and returns the function that puts it back.
func SetParkedIdle(d time.Duration) (restore func()) {
	old := parkedIdle
	parkedIdle = d
	return func() { parkedIdle = old }
}

// StopParking makes e's prestart pool park no more instances: every
// later start of a reactor misses the pool (and restores from the
// module's snapshot in the process, when it has one).
func StopParking(e *Engine) {
	e.pool.mu.Lock()
	e.pool.closed = true
	e.pool.mu.Unlock()
}

// TrustAllReactors makes e recycle the instances of every reactor with a
// snapshot, not only the software store's: the test reactor is a guest
// file.
func TrustAllReactors(e *Engine) {
	e.pool.mu.Lock()
	e.trustAll = true
	e.pool.mu.Unlock()
}
