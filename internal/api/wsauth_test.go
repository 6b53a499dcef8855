package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/secexec/secexec/internal/api"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// dialSubprotocol opens a process session the way a browser can: the
// token offered as a subprotocol, no Authorization header.
func dialSubprotocol(ctx context.Context, s *testServer, protos []string, id string, pid int) (*websocket.Conn, *http.Response, error) {
	u := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/vms/" + id + "/processes/" + itoa(pid) + "/ws"
	return websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: protos})
}

func tokenProtocol(tok string) string {
	return api.SubprotocolTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(tok))
}

func TestWebSocketSubprotocolAuth(t *testing.T) {
	var logs syncBuffer
	tok := api.NewToken()
	s := newServer(t, api.Config{
		Tokens: []api.Token{{Tenant: "carol", Hash: api.HashToken(tok)}, {Tenant: "bob", Hash: api.HashToken(bob)}},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	id := s.newVM(tok, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A wrong token is 401, as is a malformed one; another tenant's
	// token finds no such VM.
	pid := spawnAs(t, s, tok, id, map[string]any{"cmd": "cat"})
	for _, protos := range [][]string{
		{api.SubprotocolV1, tokenProtocol("wrong-token")},
		{api.SubprotocolV1, api.SubprotocolTokenPrefix + "not*base64"},
		{api.SubprotocolV1, tokenProtocol(tok), tokenProtocol(tok)},
		{api.SubprotocolV1},
	} {
		_, resp, err := dialSubprotocol(ctx, s, protos, id, pid)
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%v: want 401, got %v %v", protos[1:], resp, err)
		}
	}
	if _, resp, err := dialSubprotocol(ctx, s, []string{api.SubprotocolV1, tokenProtocol(bob)}, id, pid); err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("bob's token: want 404, got %v %v", resp, err)
	}
	// The token without secexec.v1 cannot be answered: 400.
	if _, resp, err := dialSubprotocol(ctx, s, []string{tokenProtocol(tok)}, id, pid); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("no secexec.v1: want 400, got %v %v", resp, err)
	}

	// The right token works, and the answer names secexec.v1 only.
	c, resp, err := dialSubprotocol(ctx, s, []string{api.SubprotocolV1, tokenProtocol(tok)}, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Values("Sec-WebSocket-Protocol"); len(got) != 1 || got[0] != api.SubprotocolV1 {
		t.Fatalf("answered subprotocols %q", got)
	}
	if c.Subprotocol() != api.SubprotocolV1 {
		t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	if err := c.Write(ctx, websocket.MessageBinary, append([]byte{api.TagStdin}, "over the subprotocol\n"...)); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, websocket.MessageBinary, []byte{api.TagStdinEOF}); err != nil {
		t.Fatal(err)
	}
	if out, _, exit := session(t, c); out != "over the subprotocol\n" || exit["exit_code"] != float64(0) {
		t.Fatalf("stdout %q exit %v", out, exit)
	}
	c.Close(websocket.StatusNormalClosure, "")

	// Neither the token nor its encoding is in the logs or the metrics.
	req, _ := http.NewRequest("GET", s.url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	mresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if err := s.api.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString([]byte(tok))
	for name, text := range map[string]string{"logs": logs.String(), "metrics": string(metrics)} {
		if strings.Contains(text, tok) || strings.Contains(text, enc) {
			t.Errorf("the token is in the %s:\n%s", name, text)
		}
	}
}

// A WebSocket to a guest's port, authenticated by the token subprotocol,
// reaches the guest without the token: neither in the subprotocols it is
// offered nor as an Authorization header.
func TestPortsWebSocketSubprotocolAuth(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	startPortServer(t, s, id)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/vms/" + id + "/ports/3000/protocols"
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{api.SubprotocolV1, tokenProtocol(alice)}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	_, got, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "protocols=secexec.v1 auth=none:hi" {
		t.Fatalf("the guest saw %q", got)
	}
	// A plain request is not a WebSocket handshake: the subprotocol
	// header authenticates nothing there.
	req, _ := http.NewRequest("GET", s.url+"/v1/vms/"+id+"/ports/3000/headers", nil)
	req.Header.Set("Sec-WebSocket-Protocol", api.SubprotocolV1+", "+tokenProtocol(alice))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a plain request with a token subprotocol: %d", resp.StatusCode)
	}
}
