package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newVMCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "vm",
		Short: "Create, list and delete the VMs of a server (--server)",
		Long: `Manage VMs that live on a secexec server (secexec serve), given by
--server URL or $SECEXEC_SERVER with --token or $SECEXEC_TOKEN. Run
commands in one with 'secexec exec --vm ID', copy files with 'secexec cp'.
A VM the server has not seen used for its idle timeout is closed.`,
		Example: `  id=$(secexec --server http://127.0.0.1:8080 vm create --memory 64M)
  secexec --server http://127.0.0.1:8080 exec --vm "$id" 'echo hi > /tmp/f'
  secexec --server http://127.0.0.1:8080 vm ls
  secexec --server http://127.0.0.1:8080 vm rm "$id"`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newVMCreateCmd(), newVMListCmd(), newVMRemoveCmd())
	return c
}

func newVMCreateCmd() *cobra.Command {
	var vf vmFlags
	var idle time.Duration
	c := &cobra.Command{
		Use:   "create [flags]",
		Short: "Create a VM on the server and print its id",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := needRemote(cmd)
			if err != nil {
				return err
			}
			if vf.vmID != "" || vf.timeout != 0 {
				return &usageError{err: errors.New("--vm and --timeout are for commands, not for vm create")}
			}
			if idle < 0 {
				return &usageError{err: fmt.Errorf("--idle-timeout %s: want a positive duration", idle)}
			}
			vo, err := remoteVMOptions(cmd, &vf)
			if err != nil {
				return err
			}
			vo.IdleTimeout = idle
			vm, err := c.NewVM(cmd.Context(), vo)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), vm.ID())
			return err
		},
	}
	vf.register(c)
	c.Flags().DurationVar(&idle, "idle-timeout", 0, "close the VM after this long unused (default and maximum: the server's)")
	return c
}

func newVMListCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the server's VMs of this token's tenant",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := needRemote(cmd)
			if err != nil {
				return err
			}
			vms, err := c.ListVMs(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				type vmOut struct {
					ID            string    `json:"id"`
					State         string    `json:"state"`
					LostReason    string    `json:"lost_reason,omitempty"`
					Engine        string    `json:"engine"`
					Processes     int       `json:"processes"`
					CreatedAt     time.Time `json:"created_at"`
					LastUsedAt    time.Time `json:"last_used_at"`
					IdleTimeoutMS int64     `json:"idle_timeout_ms"`
				}
				out := make([]vmOut, len(vms))
				for i, v := range vms {
					out[i] = vmOut{v.ID, v.State, v.LostReason, v.Engine, v.Processes, v.CreatedAt, v.LastUsedAt, v.IdleTimeout.Milliseconds()}
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tENGINE\tPROCESSES\tCREATED\tIDLE TIMEOUT")
			now := time.Now()
			for _, v := range vms {
				state := v.State
				if v.LostReason != "" {
					state += " (" + v.LostReason + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s ago\t%s\n", v.ID, state, v.Engine, v.Processes,
					now.Sub(v.CreatedAt).Round(time.Second), v.IdleTimeout)
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return c
}

func newVMRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "rm ID...",
		Aliases: []string{"delete"},
		Short:   "Delete VMs on the server, ending their processes",
		Args:    usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, ids []string) error {
			c, err := needRemote(cmd)
			if err != nil {
				return err
			}
			var errs []error
			for _, id := range ids {
				if err := c.VM(id).Delete(cmd.Context()); err != nil {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		},
	}
}
