package wasm

import "time"

// SetParkedIdle sets how long an instance stays parked unclaimed, for a
// test, and returns the function that puts it back.
func SetParkedIdle(d time.Duration) (restore func()) {
	old := parkedIdle
	parkedIdle = d
	return func() { parkedIdle = old }
}
