package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/secexec/secexec/client"
)

// A VM on a server: a command with its output kept, a file written, and
// node run with its output streamed here.
func Example() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8080", client.Options{Token: os.Getenv("SECEXEC_TOKEN")})
	if err != nil {
		log.Fatal(err)
	}
	vm, err := c.NewVM(ctx, client.VMOptions{Limits: client.Limits{MemoryBytes: 64 << 20}})
	if err != nil {
		log.Fatal(err)
	}
	defer vm.Close()
	res, err := vm.Exec(ctx, "echo hello | wc -c", &client.ExecOptions{Timeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exit %d: %s", res.ExitCode, res.Stdout)
	if err := vm.FS().WriteFile(ctx, "/workspace/main.js", []byte("console.log(6 * 7)")); err != nil {
		log.Fatal(err)
	}
	if _, err := vm.Run(ctx, []string{"node", "/workspace/main.js"}, &client.ExecOptions{Stdout: os.Stdout, Stderr: os.Stderr}); err != nil {
		log.Fatal(err)
	}
}
