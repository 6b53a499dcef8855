package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

// newPortCmd is `secexec port`: preview URLs of a server VM's ports. A
// local VM's port reaches the host with --publish instead.
func newPortCmd() *cobra.Command {
	var ttl time.Duration
	var revoke string
	var asJSON bool
	c := &cobra.Command{
		Use:   "port VM-ID PORT",
		Short: "Open a server VM's TCP port in a browser: print a signed, expiring preview URL (--server)",
		Long: `Print a preview URL of a guest's TCP port in a VM of a secexec server
(--server URL or $SECEXEC_SERVER): anyone with the URL reaches the
port, with no token, until it expires (--ttl, capped by the server) or is
revoked (--revoke PREVIEW-ID). Something in the VM must listen on the port.
For a local VM use --publish on exec, node or shell.`,
		Example: `  secexec --server http://127.0.0.1:8080 exec --vm "$id" 'node server.js &'
  secexec --server http://127.0.0.1:8080 port "$id" 3000 --ttl 30m
  secexec --server http://127.0.0.1:8080 port "$id" --revoke pv-0123456789abcdef`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := needRemote(cmd)
			if err != nil {
				return err
			}
			vm := c.VM(args[0])
			if revoke != "" {
				if len(args) != 1 {
					return &usageError{err: errors.New("--revoke takes the VM id only")}
				}
				return vm.RevokePreview(cmd.Context(), revoke)
			}
			if len(args) != 2 {
				return &usageError{err: errors.New("want VM-ID PORT")}
			}
			port, err := strconv.Atoi(args[1])
			if err != nil || port < 1 || port > 65535 {
				return &usageError{err: fmt.Errorf("port %q: want 1-65535", args[1])}
			}
			if ttl < 0 {
				return &usageError{err: fmt.Errorf("--ttl %s: want a positive duration", ttl)}
			}
			pv, err := vm.Preview(cmd.Context(), port, ttl)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(pv)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", pv.URL)
			if err == nil {
				_, err = fmt.Fprintf(cmd.ErrOrStderr(), "secexec: preview %s of port %d, until %s\n", pv.ID, pv.Port, pv.ExpiresAt.Format(time.RFC3339))
			}
			return err
		},
	}
	c.Flags().DurationVar(&ttl, "ttl", 0, "how long the URL works (default and maximum: the server's)")
	c.Flags().StringVar(&revoke, "revoke", "", "revoke the preview PREVIEW-ID instead of making one")
	c.Flags().BoolVar(&asJSON, "json", false, "print the preview as JSON: {id, url, port, expires_at}")
	return c
}
