package flock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func TestLock(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	// A second lock (its own open file, as in another process) waits, and
	// gives up when its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := Lock(ctx, name)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("contended lock = %v, want context.Canceled", err)
	}
	// Once released, it can be taken again.
	got := make(chan func())
	go func() {
		u, err := Lock(context.Background(), name)
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	unlock()
	if u := <-got; u != nil {
		u()
	}
}
