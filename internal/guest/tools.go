package guest

import (
	"context"
	"os"
	"path/filepath"
	"sort"

	"github.com/secexec/secexec/internal/layerfs"
	"github.com/secexec/secexec/internal/setup"
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
	names := make([]string, 0, len(toolBins))
	for name := range toolBins {
		names = append(names, name)
	}
	sort.Strings(names)
	entries := layerfs.Dirs("/usr", "/usr/bin")
	for _, name := range names {
		entries = append(entries, layerfs.Entry{Path: "/usr/bin/" + name, Link: toolBins[name]})
	}
	return layerfs.Build(ctx, entries)
}
