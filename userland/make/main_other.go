//go:build !wasip1

package main

import "os"

func main() {
	os.Exit(run(os.Args, os.Environ(), os.Stdin, os.Stdout, os.Stderr, newRunner()))
}
