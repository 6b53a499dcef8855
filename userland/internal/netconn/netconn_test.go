package netconn

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err    error
		stage  Stage
		denied bool
	}{
		{syscall.ENOENT, Resolve, false},
		{syscall.EAGAIN, Resolve, false},
		{syscall.ETIMEDOUT, Timeout, false},
		{syscall.EACCES, Connect, true},
		{syscall.ECONNREFUSED, Connect, false},
		{syscall.EHOSTUNREACH, Connect, false},
	} {
		e := classify(c.err)
		if e.Stage != c.stage || e.Denied != c.denied {
			t.Errorf("%v: %+v", c.err, e)
		}
	}
}

// Outside the sandbox Dial uses the net package, with the same error
// stages.
func TestDialHost(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(l.Addr().String())
	c, err := Dial(context.Background(), host, port, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	l.Close()
	_, err = Dial(context.Background(), host, port, Options{})
	var ne *Error
	if !errors.As(err, &ne) || ne.Stage != Connect || ne.Timeout() {
		t.Errorf("refused: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	_, err = Dial(ctx, host, port, Options{})
	if !errors.As(err, &ne) || ne.Stage != Timeout || !ne.Timeout() {
		t.Errorf("expired: %v", err)
	}
}
