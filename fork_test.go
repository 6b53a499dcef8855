package secexec_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/secexec/secexec"
)

// TestForkWatchesStayOnTheirSide: a watch on the parent reports only the
// parent's changes and a watch on the fork only the fork's, though both
// sides share every inode until they change it. Each side writes in turn,
// so a leaked event would come before the side's own.
func TestForkWatchesStayOnTheirSide(t *testing.T) {
	ctx := context.Background()
	for _, mode := range engineModes {
		t.Run(mode.String(), func(t *testing.T) {
			parent := newVM(t, secexec.Options{Engine: mode, Permissions: secexec.AllowAll()})
			if err := parent.FS().MkdirAll(ctx, "/workspace/w", 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				if err := parent.FS().WriteFile(ctx, fmt.Sprintf("/workspace/w/f%d", i), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			child, err := parent.Fork(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = child.Close() })
			pw, err := parent.FS().Watch(ctx, "/workspace/w", &secexec.WatchOptions{Recursive: true})
			if err != nil {
				t.Fatal(err)
			}
			defer pw.Close()
			cw, err := child.FS().Watch(ctx, "/workspace/w", &secexec.WatchOptions{Recursive: true})
			if err != nil {
				t.Fatal(err)
			}
			defer cw.Close()
			// Changes to shared files first: the child rewrites one, the
			// parent another, then each makes a name.
			steps := []struct {
				vm   *secexec.VM
				path string
			}{{child, "f1"}, {parent, "f2"}, {child, "c"}, {parent, "p"}}
			for _, s := range steps {
				if err := s.vm.FS().WriteFile(ctx, "/workspace/w/"+s.path, []byte("changed"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, w := range []struct {
				name        string
				w           *secexec.Watcher
				own, others []string
			}{{"parent", pw, []string{"f2", "p"}, []string{"f1", "c"}}, {"child", cw, []string{"f1", "c"}, []string{"f2", "p"}}} {
				for _, want := range w.own {
					for {
						ev, err := w.w.Next(ctx)
						if err != nil {
							t.Fatal(err)
						}
						if ev.Name == w.others[0] || ev.Name == w.others[1] {
							t.Fatalf("%s's watch reports the other side's %s of %q", w.name, ev.Op, ev.Name)
						}
						if ev.Name == want {
							break
						}
					}
				}
			}
			if got := readString(t, parent, "/workspace/w/f1"); got != "x" {
				t.Fatalf("parent f1 = %q", got)
			}
		})
	}
}
