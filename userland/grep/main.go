// Command grep is secexec's grep: GNU grep 3.8's options, output and exit
// statuses, written in Go and compiled to WASI (GOOS=wasip1) so it runs
// inside the sandbox like every other guest program.
package main
