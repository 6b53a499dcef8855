package secexec_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/engine/proto"
)

// waitEvents reads events from w until want has been seen in order;
// events between them (attribute changes of a write) are passed over.
func waitEvents(t *testing.T, ctx context.Context, w *secexec.Watcher, want ...secexec.WatchEvent) {
	t.Helper()
	var seen []secexec.WatchEvent
	for len(want) > 0 {
		ev, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("after %+v, waiting for %+v: %v", seen, want, err)
		}
		seen = append(seen, ev)
		if ev == want[0] {
			want = want[1:]
		}
	}
}

// FS.Watch reports changes made by the embedder and by guest programs,
// in order, in every engine mode; the watch ends when its path goes.
func TestFSWatch(t *testing.T) {
	for _, mode := range []secexec.EngineMode{secexec.EngineInProcess, secexec.EnginePerVM} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			vm := newVM(t, secexec.Options{Engine: mode, Permissions: secexec.AllowAll()})
			f := vm.FS()
			if _, err := f.Watch(ctx, "/nowhere", nil); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("watching a missing path: %v", err)
			}
			if err := f.MkdirAll(ctx, "/w", 0o755); err != nil {
				t.Fatal(err)
			}
			w, err := f.Watch(ctx, "/w", &secexec.WatchOptions{Recursive: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := f.WriteFile(ctx, "/w/a.txt", []byte("one"), 0o644); err != nil {
				t.Fatal(err)
			}
			waitEvents(t, ctx, w, secexec.WatchEvent{Op: secexec.WatchCreate, Name: "a.txt"}, secexec.WatchEvent{Op: secexec.WatchWrite, Name: "a.txt"})
			res, err := vm.Exec(ctx, "mkdir /w/d && echo x > /w/d/b && rm /w/a.txt", nil)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("exec: %v %s", err, res.Stderr)
			}
			waitEvents(t, ctx, w,
				secexec.WatchEvent{Op: secexec.WatchCreate, Name: "d", IsDir: true},
				secexec.WatchEvent{Op: secexec.WatchCreate, Name: "d/b"},
				secexec.WatchEvent{Op: secexec.WatchWrite, Name: "d/b"},
				secexec.WatchEvent{Op: secexec.WatchRemove, Name: "a.txt"})
			if err := f.RemoveAll(ctx, "/w"); err != nil {
				t.Fatal(err)
			}
			var last secexec.WatchEvent
			for last.Op != secexec.WatchEnded {
				if last, err = w.Next(ctx); err != nil {
					t.Fatalf("waiting for the end of the watch: %v", err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Next(ctx); err != io.EOF {
				t.Fatalf("Next after Close: %v", err)
			}
		})
	}
}

// A watcher that does not read loses events to the kernel's bounded
// queue, and reads one overflow event in their place; through an engine
// too, where the stream's flow control stops the engine reading the
// queue.
func TestFSWatchOverflow(t *testing.T) {
	for _, tc := range []struct {
		mode  secexec.EngineMode
		files int // each makes a create and a write event
	}{
		{secexec.EngineInProcess, 1500},                        // past the queue of 1024
		{secexec.EnginePerVM, 1024 + proto.Window/16/2 + 1000}, // past the queue and the stream's window
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			vm := newVM(t, secexec.Options{Engine: tc.mode})
			f := vm.FS()
			if err := f.MkdirAll(ctx, "/w", 0o755); err != nil {
				t.Fatal(err)
			}
			w, err := f.Watch(ctx, "/w", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for i := range tc.files {
				if err := f.WriteFile(ctx, fmt.Sprintf("/w/f%d", i), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			n := 0
			for {
				ev, err := w.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				n++
				if ev.Op == secexec.WatchOverflow {
					break
				}
			}
			if n >= 2*tc.files {
				t.Fatalf("read %d events of %d files before the overflow: nothing was dropped", n, tc.files)
			}
			// Once read, the overflow frees the queue: new events come
			// again, after what was queued before it.
			if err := f.WriteFile(ctx, "/w/after", nil, 0o644); err != nil {
				t.Fatal(err)
			}
			waitEvents(t, ctx, w, secexec.WatchEvent{Op: secexec.WatchCreate, Name: "after"})
		})
	}
}

// A watch reports what guests (and the embedder) change under a path.
func ExampleFS_Watch() {
	ctx := context.Background()
	vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll()})
	if err != nil {
		panic(err)
	}
	defer vm.Close()
	if err := vm.FS().MkdirAll(ctx, "/workspace/out", 0o755); err != nil {
		panic(err)
	}
	w, err := vm.FS().Watch(ctx, "/workspace/out", &secexec.WatchOptions{Recursive: true})
	if err != nil {
		panic(err)
	}
	defer w.Close()
	if _, err := vm.Exec(ctx, "mkdir /workspace/out/logs && rm -r /workspace/out/logs", nil); err != nil {
		panic(err)
	}
	for range 2 {
		ev, err := w.Next(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Op, ev.Name, ev.IsDir)
	}
	// Output:
	// create logs true
	// remove logs true
}

// A watch ends (io.EOF) when its VM closes, and a closed VM cannot be
// watched.
func TestFSWatchEndsWithVM(t *testing.T) {
	for _, mode := range []secexec.EngineMode{secexec.EngineInProcess, secexec.EnginePerVM} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			vm := newVM(t, secexec.Options{Engine: mode})
			w, err := vm.FS().Watch(ctx, "/", &secexec.WatchOptions{Recursive: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			done := make(chan error, 1)
			go func() {
				for {
					if _, err := w.Next(ctx); err != nil {
						done <- err
						return
					}
				}
			}()
			if err := vm.Close(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != io.EOF {
				t.Fatalf("Next after the VM closed: %v", err)
			}
			if _, err := vm.FS().Watch(ctx, "/", nil); !errors.Is(err, secexec.ErrClosed) {
				t.Fatalf("Watch on a closed VM: %v", err)
			}
		})
	}
}
