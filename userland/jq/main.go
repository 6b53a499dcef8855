// Command jq is secexec's jq: jq 1.7's command line, output format and
// exit statuses over the gojq engine, compiled to WASI (GOOS=wasip1) so it
// runs inside the sandbox like every other guest program.
package main
