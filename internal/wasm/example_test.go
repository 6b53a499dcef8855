package wasm_test

import (
	"context"
	"log"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
)

// One engine and one software layer serve every VM of the host process;
// each VM registers the engine's loader with its kernel.
func Example() {
	ctx := context.Background()
	store, err := software.Open(ctx, software.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Ensure(ctx); err != nil {
		log.Fatal(err)
	}
	eng, err := wasm.NewEngine(ctx, wasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close(ctx)

	m, err := vm.New(ctx, vm.Config{
		Policy: policy.AllowAll(),
		Lowers: []vfs.FileSystem{eng.SoftwareLayer(store)},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close(ctx)
	m.Kernel.RegisterLoader(eng.Loader())

	// sh -c as the VM's user, with /dev/null as stdio; the caller kills
	// the process group at its deadline.
	devnull, err := m.VFS.Open(ctx, vfs.Root, "/dev/null", vfs.O_RDWR, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer devnull.DecRef()
	p, err := m.Kernel.SpawnHost(ctx, kernel.SpawnOptions{
		Argv:     []string{"sh", "-c", "echo hi | tr a-z A-Z > /tmp/out"},
		Env:      []string{"PATH=/usr/bin:/bin", "HOME=" + vm.UserHome},
		Cwd:      vm.Workspace,
		Files:    []vfs.File{devnull, devnull, devnull},
		NewGroup: true,
		Creds:    &kernel.Creds{UID: vm.UserUID, GID: vm.UserGID},
	})
	if err != nil {
		log.Fatal(err)
	}
	st, err := p.HostWait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("exit status %d", st.ShellCode())
}
