// Command wget is secexec's wget: the same program as userland/curl (a
// multi-call module that acts as the one its argv[0] names), built under
// the name wget so that it is registered as that command too.
package main

import (
	"os"

	"github.com/secexec/secexec/userland/internal/webget"
)

func main() {
	os.Exit(webget.Main(os.Args, webget.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, "wget"))
}
