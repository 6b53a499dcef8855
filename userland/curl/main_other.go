//go:build !wasip1

package main

import (
	"os"

	"github.com/secexec/secexec/userland/internal/webget"
)

func main() {
	os.Exit(webget.Main(os.Args, webget.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, "curl"))
}
