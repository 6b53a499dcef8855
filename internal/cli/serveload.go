package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/api/loadtest"
)

func newServeLoadCmd() *cobra.Command {
	var o loadtest.Options
	c := &cobra.Command{
		Use:   "serve-load [flags]",
		Short: "Load-test a secexec API server",
		Long: `Run --clients concurrent clients against a secexec API server for
--duration: each creates a VM and runs execs of 'echo TOKEN' with a unique
token, checking each token comes back. Prints execs/s, p50/p99 latency,
errors and lost outputs; exits 1 if there were any errors or lost outputs.

Without --url it starts a server in this process on a loopback port.`,
		Example: `  secexec serve-load --clients 8 --duration 10s
  SECEXEC_API_TOKEN=secret secexec serve-load --url http://127.0.0.1:8080`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if o.URL == "" {
				stop, url, tok, err := startLocalServer(ctx, o.Clients)
				if err != nil {
					return err
				}
				defer stop()
				o.URL, o.Token = url, tok
			} else if o.Token = os.Getenv(TokenEnv); o.Token == "" {
				return &usageError{err: fmt.Errorf("set $%s to the server's token", TokenEnv)}
			}
			rep, err := loadtest.Run(ctx, o)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), rep)
			if rep.Errors > 0 || rep.Lost > 0 {
				return &exitError{code: ExitError}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&o.URL, "url", "", "the server's base URL (default: start one here); the token comes from $"+TokenEnv)
	fl.IntVar(&o.Clients, "clients", 4, "concurrent clients, one VM each")
	fl.DurationVar(&o.Duration, "duration", 10*time.Second, "how long to keep starting execs")
	return c
}

// startLocalServer serves the API on a loopback port in this process,
// with quotas large enough for the load.
func startLocalServer(ctx context.Context, clients int) (stop func(), url, token string, err error) {
	token = api.NewToken()
	srv, err := api.New(api.Config{
		Tokens: []api.Token{{Tenant: "load", Hash: api.HashToken(token)}},
		MaxVMs: clients, MaxConcurrent: clients,
	})
	if err != nil {
		return nil, "", "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", "", err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- api.Serve(sctx, ln, srv, api.ServeOptions{DrainTimeout: 5 * time.Second}) }()
	return func() { cancel(); <-done }, "http://" + ln.Addr().String(), token, nil
}
