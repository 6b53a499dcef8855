//go:build !linux

package server

const hardenTestEnv = "SECEXEC_HARDEN_TEST"

func hardenChild() int { return 0 }
