package flow

import (
	"context"
	"errors"
	"io"
	"testing"
)

func TestInbox(t *testing.T) {
	granted := 0
	in := NewInbox(10, func(n int) { granted += n })
	if err := in.Push([]byte("hello"), false); err != nil {
		t.Fatal(err)
	}
	if err := in.Push([]byte("world"), false); err != nil {
		t.Fatal(err)
	}
	if err := in.Push([]byte("!"), false); !errors.Is(err, ErrOverflow) {
		t.Fatalf("past the window: %v", err)
	}
	buf := make([]byte, 7)
	if n, err := in.Read(buf); n != 7 || err != nil || string(buf) != "hellowo" || granted != 7 {
		t.Fatalf("read %q %v granted %d", buf[:n], err, granted)
	}
	if err := in.Push([]byte("1234567"), true); err != nil {
		t.Fatalf("within the window again: %v", err)
	}
	rest, err := io.ReadAll(in)
	if err != nil || string(rest) != "rld1234567" {
		t.Fatalf("rest %q %v", rest, err)
	}
	// After the end, no credit is granted (the sender is done).
	if granted != 7 {
		t.Fatalf("granted %d", granted)
	}
}

func TestInboxFailAndClose(t *testing.T) {
	in := NewInbox(100, nil)
	_ = in.Push([]byte("queued"), false)
	boom := errors.New("boom")
	in.Fail(boom)
	b, err := io.ReadAll(in)
	if string(b) != "queued" || !errors.Is(err, boom) {
		t.Fatalf("after Fail: %q %v", b, err)
	}
	in = NewInbox(100, nil)
	_ = in.Push([]byte("dropped"), false)
	in.Close()
	if n, err := in.Read(make([]byte, 10)); n != 0 || !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %d %v", n, err)
	}
	if err := in.Push([]byte("more"), false); err != nil {
		t.Fatalf("push after Close: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewInbox(1, nil).ReadContext(ctx, make([]byte, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: %v", err)
	}
}

func TestCredit(t *testing.T) {
	c := NewCredit(10)
	ctx := context.Background()
	if n, err := c.Take(ctx, 4); n != 4 || err != nil {
		t.Fatal(n, err)
	}
	if n, _ := c.Take(ctx, 100); n != 6 {
		t.Fatalf("took %d", n)
	}
	c.Add(1000) // clipped to the window
	if n, _ := c.Take(ctx, 100); n != 10 {
		t.Fatalf("after a large grant took %d", n)
	}
	done := make(chan error)
	go func() {
		_, err := c.Take(ctx, 1)
		done <- err
	}()
	c.Close(io.ErrClosedPipe)
	if err := <-done; !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("blocked Take after Close: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := NewCredit(0).Take(cctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
