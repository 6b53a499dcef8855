package netstack_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"

	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
)

// A guest server on the VM's loopback, reached by the embedder with
// DialGuest: no host port is opened.
func ExampleStack_DialGuest() {
	ch, _ := policy.Compile(policy.DenyAll().AllowNet("*:8080"))
	st := netstack.New(netstack.Config{Authorizer: ch})
	defer st.Close(context.Background())
	ctx := context.Background()

	l, _ := st.NewSocket(netstack.AFInet, netstack.SockStream, 0, false)
	defer l.DecRef()
	_ = l.Bind(netstack.InetAddr(netip.MustParseAddrPort("0.0.0.0:8080")))
	if err := l.Listen(16); err != nil {
		fmt.Println(err)
		return
	}
	go func() { // the guest: upper-case one request
		s, _ := l.Accept(ctx, false)
		defer s.DecRef()
		buf := make([]byte, 64)
		n, _ := s.Read(ctx, buf)
		_, _ = s.Write(ctx, bytes.ToUpper(buf[:n]))
	}()

	c, err := st.DialGuest(ctx, 8080)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, _ = c.Write([]byte("hello"))
	reply, _ := io.ReadAll(c)
	fmt.Printf("%s\n", reply)
	// Output: HELLO
}
