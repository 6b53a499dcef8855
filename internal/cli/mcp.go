package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/mcpserver"
)

// MCPTokenEnv holds the bearer token `secexec mcp --http` requires when
// --token-env is not given another name.
const MCPTokenEnv = "SECEXEC_MCP_TOKEN"

func newMCPCmd() *cobra.Command {
	var (
		vf                 vmFlags
		cfg                mcpserver.Config
		httpAddr, tokenEnv string
		idle               time.Duration
	)
	c := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve VMs to AI agents over the Model Context Protocol",
		Long: `Serve the Model Context Protocol on stdin/stdout (the default: add this
command to an agent's MCP configuration) or, with --http, on streamable HTTP.

Tools: vm_create, vm_close, vm_list, exec (output streamed as progress
notifications), file_read, file_write, file_list, js_eval and preview
(publish a guest port on a loopback URL).

The VM flags (--permissions, --allow-*, --mount, --memory, --fs-bytes...)
set the most any VM gets: a client may narrow them in vm_create, never
widen them. Each session has its own VMs, closed when it ends; the --max-*
flags bound VMs, output, files and time. --timeout is the default time
limit of an exec. docs/mcp.md has more.

Over HTTP every request needs "Authorization: Bearer TOKEN" when
$` + MCPTokenEnv + ` (or the variable --token-env names) is set; the address
must be loopback unless --allow-non-loopback is given, and then a token is
required.`,
		Example: `  secexec mcp
  secexec mcp --allow-net registry.npmjs.org --memory 256M
  SECEXEC_MCP_TOKEN=secret secexec mcp --http 127.0.0.1:8765`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := vf.options(cmd)
			if err != nil {
				return err
			}
			if len(vf.publish) > 0 {
				return &usageError{err: errors.New("--publish has no VM to act on here: clients publish ports with the preview tool")}
			}
			cfg.Base, cfg.Logger, cfg.Version = opts, opts.Logger, version()
			if vf.timeout > 0 {
				cfg.DefaultTimeout = vf.timeout
			}
			cfg.Publish = func(ctx context.Context, vm *secexec.VM, guestPort int) (string, func(), error) {
				return publishPreview(ctx, vm, guestPort, opts.Logger)
			}
			srv := mcpserver.New(cfg)
			defer srv.Close()
			if httpAddr == "" {
				return srv.Run(cmd.Context(), srv.IOTransport(io.NopCloser(cmd.InOrStdin()), nopWriteCloser{cmd.OutOrStdout()}))
			}
			token := os.Getenv(tokenEnv)
			addr, err := listenAddr(httpAddr, vf.allowRemote)
			if err != nil {
				return &usageError{err: fmt.Errorf("--http: %w", err)}
			}
			if host, _, _ := net.SplitHostPort(addr); token == "" && !isLoopback(host) {
				return &usageError{err: fmt.Errorf("--http %s is not loopback: set $%s to a bearer token", httpAddr, tokenEnv)}
			}
			return serveMCPHTTP(cmd, srv.HTTPHandler(idle, token), addr, opts.Logger)
		},
	}
	vf.register(c)
	fl := c.Flags()
	fl.StringVar(&httpAddr, "http", "", "serve streamable HTTP on HOST:PORT (path /mcp) instead of stdio")
	fl.StringVar(&tokenEnv, "token-env", MCPTokenEnv, "the environment variable holding the HTTP bearer token")
	fl.DurationVar(&idle, "session-idle", 30*time.Minute, "close an HTTP session, and its VMs, after this long without requests")
	fl.IntVar(&cfg.MaxVMs, "max-vms", mcpserver.DefaultMaxVMs, "VMs open at once, all sessions together")
	fl.IntVar(&cfg.MaxVMsPerSession, "max-vms-per-session", mcpserver.DefaultMaxVMsPerSession, "VMs one session may hold")
	fl.Var(intSizeFlag{&cfg.MaxOutput}, "max-output", "bytes of stdout and of stderr one exec returns; the rest is dropped and reported (default 1M)")
	fl.Var(intSizeFlag{&cfg.MaxFileBytes}, "max-file-bytes", "bytes one file_read or file_write moves (default 1M)")
	fl.Var(intSizeFlag{&cfg.MaxInput}, "max-input", "bytes of command, stdin, expression and env one call may send (default 1M)")
	fl.DurationVar(&cfg.MaxTimeout, "max-timeout", mcpserver.DefaultMaxTimeout, "the longest time limit a client may ask for")
	return c
}

// isLoopback reports whether host (an IP or "localhost") is loopback.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// publishPreview serves the guest's port on a fresh loopback port and
// returns its URL.
func publishPreview(ctx context.Context, vm *secexec.VM, guestPort int, log *slog.Logger) (string, func(), error) {
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	return "http://" + ln.Addr().String() + "/", publishOn(ctx, vm, ln, guestPort, log), nil
}

// serveMCPHTTP serves h at /mcp on addr until the command's context ends.
func serveMCPHTTP(cmd *cobra.Command, h http.Handler, addr string, log *slog.Logger) error {
	ctx := cmd.Context()
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	// The address goes to stderr, stdout being free: with port 0 the
	// caller learns the port from it.
	fmt.Fprintf(cmd.ErrOrStderr(), "secexec mcp: serving http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		return nil
	}
}

// nopWriteCloser lets the command's stdout serve as a transport's writer;
// the process owns it, not the transport.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
