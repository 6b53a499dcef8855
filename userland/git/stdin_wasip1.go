//go:build wasip1

package main

import "github.com/secexec/secexec/userland/internal/hostproc"

func stdinIsTerminal() bool { return hostproc.IsTerminal(0) }
