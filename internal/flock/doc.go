// Package flock serialises work on host cache directories across
// processes (several CLIs, test binaries and SDK programs may fill the
// same cache at once) with advisory flock(2) locks.
package flock
