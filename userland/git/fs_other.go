//go:build !wasip1

package main

import "github.com/go-git/go-billy/v6"

// worktreeFS needs no adjustment outside wasip1 (see fs_wasip1.go).
func worktreeFS(base billy.Filesystem) billy.Filesystem { return base }
