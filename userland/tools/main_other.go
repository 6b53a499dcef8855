//go:build !wasip1

package main

import (
	"os"
)

func main() { os.Exit(dispatch(os.Args, os.Stdin, os.Stdout, os.Stderr)) }
