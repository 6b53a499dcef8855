package guest

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/secexec/secexec/internal/setup"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// ToolsPath is where a VM sees the node tools (npm, typescript): the
// global node_modules directory, mounted read-only from the cache.
const ToolsPath = "/usr/lib/node_modules"

// toolBins are the tool commands: /usr/bin symlinks to scripts that start
// with "#!/usr/bin/env node", as npm's own global install makes them.
var toolBins = map[string]string{
	"npm":      ToolsPath + "/npm/bin/npm-cli.js",
	"npx":      ToolsPath + "/npm/bin/npx-cli.js",
	"tsc":      ToolsPath + "/typescript/bin/tsc",
	"tsserver": ToolsPath + "/typescript/bin/tsserver",
}

// addTools exposes the node tools set-up left in the cache: a mount of
// their directory (Configure) and a layer with their /usr/bin links. A
// cache set up before the tools existed just lacks them. The tree is a
// mount rather than a layer because a host directory's listing cookies
// do not fit the overlay's.
func (r *Runtime) addTools(ctx context.Context, dirs setup.Dirs) error {
	mods := filepath.Join(dirs.Tools(), "usr", "lib", "node_modules")
	if fi, err := os.Stat(mods); err != nil || !fi.IsDir() {
		r.log.Debug("guest: no node tools in the cache", "dir", mods, "err", err)
		return nil
	}
	layer, err := binLayer(ctx)
	if err != nil {
		return err
	}
	r.toolsDir = mods
	r.layers = append(r.layers, layer)
	return nil
}

// binLayer builds the read-only layer of /usr/bin links.
func binLayer(ctx context.Context) (vfs.FileSystem, error) {
	epoch := time.Unix(0, 0).UTC()
	fs := memfs.New(memfs.Options{Now: func() time.Time { return epoch }})
	v, err := vfs.New(ctx, fs, vfs.Options{})
	if err != nil {
		return nil, err
	}
	c := &vfs.Caller{Cwd: "/"}
	for _, d := range []string{"/usr", "/usr/bin"} {
		if err := v.Mkdir(ctx, c, d, 0o755); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(toolBins))
	for name := range toolBins {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := v.Symlink(ctx, c, toolBins[name], "/usr/bin/"+name); err != nil {
			return nil, err
		}
	}
	return fs, nil
}
