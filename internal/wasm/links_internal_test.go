package wasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/secexec/secexec/software"
)

// Every module of the installed userland compiles and links against the
// host modules (agentOS ABI §14: no missing import, whatever the tier).
func TestEveryModuleLinks(t *testing.T) {
	ctx := context.Background()
	store, err := software.Open(ctx, software.Options{Dir: filepath.Join(os.TempDir(), "secexec-test-software")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(ctx, Config{CacheDir: filepath.Join(os.TempDir(), "secexec-test-wasm-cache"), ModuleCacheSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	seen := map[software.Fingerprint]bool{}
	for _, c := range store.Commands() {
		if c.Package == "" || seen[c.Fingerprint] {
			continue
		}
		seen[c.Fingerprint] = true
		ent, err := e.mods.get(ctx, c.Fingerprint, c.Module)
		if err != nil {
			t.Errorf("%s (%s): %v", c.Name, c.Package, err)
			continue
		}
		e.mods.release(ent)
	}
	if len(seen) < 100 {
		t.Errorf("only %d distinct modules installed", len(seen))
	}
}
