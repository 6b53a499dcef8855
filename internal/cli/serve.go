package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/setup"
	"github.com/secexec/secexec/internal/termpage"
)

// TokenEnv holds a single bearer token for `secexec serve` (tenant
// "default") when no --tokens-file is given.
const TokenEnv = "SECEXEC_API_TOKEN"

func newServeCmd() *cobra.Command {
	var (
		listen, tokensFile, certFile, keyFile, replica, peerTmpl string
		previewSecretFile, storeCredsFile                        string
		allowRemote, guestNet, terminal                          bool
		toolNets                                                 []string
		cfg                                                      api.Config
		drain                                                    time.Duration
	)
	c := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve the secexec HTTP API",
		Long: `Serve the versioned HTTP/JSON API (/v1/...) for VMs, exec (JSON or
server-sent events), spawned processes (WebSocket), files, tar archives and
JavaScript, with /healthz, /readyz, /metrics and /openapi.json.

Clients authenticate with a bearer token: --tokens-file holds lines
"TENANT sha256:HEX" (make one with 'secexec serve token TENANT'), or
$` + TokenEnv + ` holds a single token of tenant "default". Each tenant sees
only its own VMs. On SIGTERM the server stops accepting, drains running
requests for --drain-timeout and closes every VM. docs/api.md has more.`,
		Example: `  SECEXEC_API_TOKEN=secret secexec serve --listen 127.0.0.1:8080
  secexec serve --tokens-file tokens.txt --tls-cert cert.pem --tls-key key.pem`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := logger(cmd)
			if err != nil {
				return err
			}
			addr, err := listenAddr(listen, allowRemote)
			if err != nil {
				return &usageError{err: err}
			}
			if (certFile == "") != (keyFile == "") {
				return &usageError{err: errors.New("--tls-cert and --tls-key go together")}
			}
			switch {
			case tokensFile != "":
				data, err := os.ReadFile(tokensFile)
				if err != nil {
					return &usageError{err: fmt.Errorf("--tokens-file: %w", err)}
				}
				if cfg.Tokens, err = api.ParseTokens(data); err != nil {
					return &usageError{err: err}
				}
			case os.Getenv(TokenEnv) != "":
				cfg.Tokens = []api.Token{{Tenant: "default", Hash: api.HashToken(os.Getenv(TokenEnv))}}
			default:
				return &usageError{err: errors.New("no tokens: give --tokens-file or set $" + TokenEnv)}
			}
			cfg.Replica = api.ReplicaName(replica)
			cfg.PeerURL = api.PeerTemplate(peerTmpl)
			if peerTmpl != "" && cfg.PeerURL == nil {
				return &usageError{err: errors.New("--peer-url-template must contain {replica}")}
			}
			if previewSecretFile != "" {
				if cfg.PreviewSecret, err = os.ReadFile(previewSecretFile); err != nil {
					return &usageError{err: fmt.Errorf("--preview-secret-file: %w", err)}
				}
			}
			if cfg.SnapshotStore != "" {
				if cfg.SnapshotCredentials, err = storeCredentials(storeCredsFile); err != nil {
					return &usageError{err: err}
				}
			}
			cfg.AllowGuestNetwork = guestNet
			if cfg.AllowToolNetworks, err = api.ParseToolNetworks(toolNets); err != nil {
				return &usageError{err: err}
			}
			cfg.Logger = log
			srv, err := api.New(cfg)
			if err != nil {
				return &usageError{err: err}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			scheme := "http"
			if certFile != "" {
				scheme = "https"
			}
			var term http.Handler
			if terminal {
				term = terminalPage(cmd.Context(), log)
			}
			return api.Serve(cmd.Context(), ln, srv, api.ServeOptions{
				CertFile: certFile, KeyFile: keyFile, DrainTimeout: drain, Terminal: term,
				Ready: func() {
					fmt.Fprintf(cmd.ErrOrStderr(), "secexec: serving the API on %s://%s\n", scheme, ln.Addr())
				},
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:8080", "host:port to serve on (loopback only unless --allow-non-loopback)")
	fl.BoolVar(&allowRemote, "allow-non-loopback", false, "let --listen bind an address other than loopback")
	fl.StringVar(&tokensFile, "tokens-file", "", "file of accepted tokens, lines of 'TENANT sha256:HEX'")
	fl.StringVar(&certFile, "tls-cert", "", "serve HTTPS with this PEM certificate (chain)")
	fl.StringVar(&keyFile, "tls-key", "", "the PEM private key of --tls-cert")
	fl.StringVar(&replica, "replica", os.Getenv("SECEXEC_REPLICA"), "this replica's name in VM ids (a pod IP works: dots become dashes; default $SECEXEC_REPLICA or 'local')")
	fl.StringVar(&peerTmpl, "peer-url-template", "", "forward requests for other replicas' VMs to this URL, {replica} replaced, e.g. http://{replica}.secexec-peers.NS.svc.cluster.local:8080")
	fl.StringVar(&previewSecretFile, "preview-secret-file", "", "file whose bytes (32 or more) sign preview URLs; every replica of a fleet needs the same (default: random per server)")
	fl.StringVar(&cfg.PublicURL, "preview-url", "", "scheme://host[:port] that preview URLs start with, ideally an origin of their own (default: the host the client used)")
	fl.IntVar(&cfg.MaxPortConns, "max-port-conns", 32, "requests and WebSockets proxied to one VM's ports at once")
	fl.IntVar(&cfg.MaxPreviews, "max-previews", 16, "live preview URLs per VM")
	fl.DurationVar(&cfg.MaxPreviewTTL, "max-preview-ttl", 24*time.Hour, "longest a preview URL works")
	fl.IntVar(&cfg.MaxWatches, "max-watches", 8, "file watch streams open on one VM at once")
	fl.IntVar(&cfg.MaxVMs, "max-vms", 16, "VMs per tenant")
	fl.IntVar(&cfg.MaxConcurrent, "max-concurrent", 8, "execs, evaluations and attached processes running at once per tenant")
	fl.IntVar(&cfg.MaxTenantProcesses, "max-processes", 64, "spawned processes and JS contexts alive at once per tenant")
	fl.DurationVar(&cfg.MaxProcessLifetime, "max-process-lifetime", time.Hour, "longest a spawned process or JS context lives before it is killed or closed")
	cfg.MaxBodyBytes, cfg.MaxFileBytes, cfg.MaxOutputBytes = 1<<20, 64<<20, 16<<20
	fl.Var(sizeFlag{&cfg.MaxBodyBytes}, "max-request-bytes", "largest JSON request body, e.g. 1M")
	fl.Var(sizeFlag{&cfg.MaxFileBytes}, "max-file-bytes", "largest file or tar archive, either way, e.g. 64M")
	fl.Var(intSizeFlag{&cfg.MaxOutputBytes}, "max-output-bytes", "stdout and stderr bytes an exec returns, each, e.g. 16M")
	fl.DurationVar(&cfg.MaxExecTimeout, "max-exec-timeout", 5*time.Minute, "longest (and default) exec timeout")
	fl.Var(sizeFlag{&cfg.MaxLimits.MemoryBytes, &cfg.MaxLimits.VMMemoryBytes}, "max-memory", "largest memory a VM may ask for, per process and for all its processes together, e.g. 2G; also a VM's default VM-wide memory (default 1G)")
	fl.Var(durationsFlag{&cfg.MaxLimits.CPUTime, &cfg.MaxLimits.VMCPUTime}, "max-cpu-time", "largest CPU time a VM may ask for, per process and for all its processes together; also a VM's default VM-wide CPU budget (default: no cap)")
	fl.DurationVar(&cfg.IdleTimeout, "vm-idle-timeout", 15*time.Minute, "close VMs unused for this long")
	fl.DurationVar(&drain, "drain-timeout", 30*time.Second, "on SIGTERM, how long running requests may finish")
	fl.BoolVar(&guestNet, "allow-guest-network", false, "accept VM permissions that connect out (net connect/dns rules)")
	fl.StringArrayVar(&toolNets, "allow-tool-network", nil, "let HTTP tool callbacks reach this loopback/private/link-local CIDR or address (repeatable; public addresses need none)")
	fl.StringVar(&cfg.SnapshotDir, "snapshot-dir", "", "keep tenants' VM snapshots in this directory (each tenant in its own subdirectory); empty disables the snapshot routes")
	fl.StringVar(&cfg.SnapshotStore, "snapshot-store", "", "instead of --snapshot-dir, a store every replica of a fleet shares: s3://BUCKET/PREFIX?endpoint=http(s)://HOST:PORT&region=REGION (AWS S3 without endpoint), credentials from $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY or --snapshot-store-credentials")
	fl.StringVar(&storeCredsFile, "snapshot-store-credentials", "", "file of the S3 store's credentials: lines AWS_ACCESS_KEY_ID=..., AWS_SECRET_ACCESS_KEY=... (and AWS_SESSION_TOKEN=...)")
	fl.IntVar(&cfg.MaxSnapshots, "max-snapshots", 64, "snapshots stored per tenant")
	fl.StringVar(&cfg.OnIdle, "on-idle", api.OnIdleClose, "what happens to a VM idle for its idle timeout: close, or pause (saved to --snapshot-dir, resumed by its next request)")
	fl.IntVar(&cfg.MaxPausedVMs, "max-paused-vms", 64, "paused VMs per tenant")
	fl.DurationVar(&cfg.SnapshotEvery, "snapshot-every", 0, "save running VMs this often (those used since their last save) to the snapshot store, so that a replica that dies loses only what changed since; 0: never")
	fl.DurationVar(&cfg.MaxTTL, "max-ttl", 7*24*time.Hour, "longest TTL a VM may ask for (ttl_ms on create or PATCH)")
	fl.StringVar(&cfg.Engine, "engine", api.EnginePerTenant, "where VMs run unless their create request says: per-tenant (an engine process per tenant) or per-vm (one per VM)")
	fl.BoolVar(&terminal, "terminal", false, "serve a browser terminal at /terminal/ (xterm.js, fetched with npm and cached at the first start)")
	c.AddCommand(newServeTokenCmd())
	return c
}

// storeCredentials reads the S3 store's credentials from file, or from
// the standard AWS variables when file is "".
func storeCredentials(file string) (secexec.StoreCredentials, error) {
	if file == "" {
		return secexec.StoreCredentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"),
			SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: os.Getenv("AWS_SESSION_TOKEN")}, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return secexec.StoreCredentials{}, fmt.Errorf("--snapshot-store-credentials: %w", err)
	}
	if len(data) > 64<<10 {
		return secexec.StoreCredentials{}, errors.New("--snapshot-store-credentials: the file is over 64 KiB")
	}
	var c secexec.StoreCredentials
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		switch k = strings.TrimSpace(k); {
		case !ok:
			return c, fmt.Errorf("--snapshot-store-credentials: line %d is not KEY=VALUE", i+1)
		case k == "AWS_ACCESS_KEY_ID":
			c.AccessKeyID = strings.TrimSpace(v)
		case k == "AWS_SECRET_ACCESS_KEY":
			c.SecretAccessKey = strings.TrimSpace(v)
		case k == "AWS_SESSION_TOKEN":
			c.SessionToken = strings.TrimSpace(v)
		default:
			// The key only: the line may hold a secret.
			return c, fmt.Errorf("--snapshot-store-credentials: line %d: unknown key %.40q", i+1, k)
		}
	}
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return c, errors.New("--snapshot-store-credentials: want AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	return c, nil
}

// terminalPage builds (or finds cached) the browser terminal's assets
// in the cache directory. When they cannot be built the server still
// serves the API, and the page says it is not set up.
func terminalPage(ctx context.Context, log *slog.Logger) http.Handler {
	dirs, err := setup.DefaultDirs()
	dir := ""
	if err == nil {
		bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		dir, err = termpage.Build(bctx, termpage.Options{CacheDir: filepath.Join(dirs.Cache, "terminal")})
		cancel()
	}
	if err != nil {
		log.Warn("the terminal page is not set up", "err", err)
		dir = ""
	}
	return termpage.Handler("/terminal/", dir)
}

func newServeTokenCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "token TENANT [TOKEN]",
		Short: "Print a tokens-file line for TENANT (and a new random token on stderr)",
		Args:  usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			tok := ""
			if len(args) == 2 {
				tok = args[1]
			} else {
				tok = api.NewToken()
				fmt.Fprintln(cmd.ErrOrStderr(), "token:", tok)
			}
			line := api.TokenLine(args[0], tok)
			if _, err := api.ParseTokens([]byte(line)); err != nil {
				return &usageError{err: err}
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), line)
			return err
		},
	}
}
