package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/secexec/secexec/internal/api"
)

// apiClient talks to the server under test as one tenant, over HTTP only:
// the server is a black box.
type apiClient struct {
	base, token, tenant string
	http                *http.Client
}

func newAPIClient(base, tenant, token string) *apiClient {
	return &apiClient{base: strings.TrimSuffix(base, "/"), tenant: tenant, token: token,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
}

// closeIdle drops the client's idle connections, so that the server's
// descriptor count holds no connection of ours.
func (c *apiClient) closeIdle() { c.http.CloseIdleConnections() }

// APIError is an answer other than 2xx, as the soak reports it.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, clip(e.Message, 300))
}

// clip shortens s for a report line.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// maxAnswer bounds how much of an answer the client keeps: above the
// largest legitimate one (an exec's two 16 MiB streams in base64).
const maxAnswer = 64 << 20

// do sends a request and returns the answer's body for a 2xx status, an
// *APIError otherwise. A body that is not nil, []byte or io.Reader is
// sent as JSON.
func (c *apiClient) do(ctx context.Context, method, path string, body any, hdr ...string) ([]byte, http.Header, error) {
	resp, err := c.send(ctx, method, path, body, hdr...)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, resp.Header, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if len(data) > maxAnswer {
		return nil, resp.Header, fmt.Errorf("%s %s: the answer is over %d bytes", method, path, maxAnswer)
	}
	if resp.StatusCode/100 != 2 {
		return data, resp.Header, answerError(resp.StatusCode, data)
	}
	return data, resp.Header, nil
}

// send sends a request and returns the response, whatever its status.
func (c *apiClient) send(ctx context.Context, method, path string, body any, hdr ...string) (*http.Response, error) {
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd, ct = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp, nil
}

func answerError(status int, data []byte) *APIError {
	var e struct {
		Error struct{ Code, Message string }
	}
	if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
		return &APIError{Status: status, Code: "?", Message: string(data)}
	}
	return &APIError{Status: status, Code: e.Error.Code, Message: e.Error.Message}
}

func (c *apiClient) json(ctx context.Context, method, path string, in, out any) error {
	data, _, err := c.do(ctx, method, path, in)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decoding %q: %w", method, path, clip(string(data), 200), err)
	}
	return nil
}

func (c *apiClient) createVM(ctx context.Context, body any) (string, error) {
	if body == nil {
		body = map[string]any{}
	}
	var vm struct{ ID string }
	if err := c.json(ctx, http.MethodPost, "/v1/vms", body, &vm); err != nil {
		return "", err
	}
	if vm.ID == "" {
		return "", errors.New("POST /v1/vms: no id in the answer")
	}
	return vm.ID, nil
}

func (c *apiClient) deleteVM(ctx context.Context, id string) error {
	_, _, err := c.do(ctx, http.MethodDelete, "/v1/vms/"+id, nil)
	return err
}

// vmCount returns the tenant's VMs as the server lists them, and their
// spawned processes.
func (c *apiClient) vmCount(ctx context.Context) (vms, procs int, err error) {
	var list struct {
		VMs []struct{ Processes int } `json:"vms"`
	}
	if err := c.json(ctx, http.MethodGet, "/v1/vms", nil, &list); err != nil {
		return 0, 0, err
	}
	for _, v := range list.VMs {
		procs += v.Processes
	}
	return len(list.VMs), procs, nil
}

// execResult is an exec answer, the streams decoded.
type execResult struct {
	ExitCode   int    `json:"exit_code"`
	Outcome    string `json:"outcome"`
	Signal     string `json:"signal"`
	Stdout     []byte `json:"stdout"`
	Stderr     []byte `json:"stderr"`
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
}

func (r *execResult) String() string {
	s := fmt.Sprintf("exit %d %s in %.1fs", r.ExitCode, r.Outcome, float64(r.DurationMS)/1000)
	if r.Truncated {
		s += " (truncated)"
	}
	return s
}

func (c *apiClient) exec(ctx context.Context, id string, req map[string]any) (*execResult, error) {
	var res execResult
	if err := c.json(ctx, http.MethodPost, "/v1/vms/"+id+"/exec", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// check returns an error unless the exec exited with code and its output
// holds want.
func (r *execResult) check(code int, want string) error {
	if r.ExitCode != code || !bytes.Contains(append(r.Stdout, r.Stderr...), []byte(want)) {
		return fmt.Errorf("exit %d (want %d), want %q; stdout %.200q stderr %.200q", r.ExitCode, code, want, r.Stdout, r.Stderr)
	}
	return nil
}

// session runs a spawned process over its WebSocket: it sends stdin,
// closes it, and returns stdout, stderr and the exit frame.
func (c *apiClient) session(ctx context.Context, id string, pid int, stdin []byte) (stdout, stderr []byte, exit map[string]any, err error) {
	u := "ws" + strings.TrimPrefix(c.base, "http") + "/v1/vms/" + id + "/processes/" + fmt.Sprint(pid) + "/ws"
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.http,
		HTTPHeader: http.Header{"Authorization": {"Bearer " + c.token}}})
	if err != nil {
		if resp != nil {
			return nil, nil, nil, fmt.Errorf("attaching: %d: %w", resp.StatusCode, err)
		}
		return nil, nil, nil, fmt.Errorf("attaching: %w", err)
	}
	defer conn.CloseNow()
	if err := conn.Write(ctx, websocket.MessageBinary, append([]byte{api.TagStdin}, stdin...)); err != nil {
		return nil, nil, nil, err
	}
	if err := conn.Write(ctx, websocket.MessageBinary, []byte{api.TagStdinEOF}); err != nil {
		return nil, nil, nil, err
	}
	for {
		typ, msg, err := conn.Read(ctx)
		if err != nil {
			return stdout, stderr, nil, fmt.Errorf("the session ended without an exit frame: %w", err)
		}
		if typ != websocket.MessageBinary || len(msg) == 0 {
			return stdout, stderr, nil, fmt.Errorf("unexpected frame %v %q", typ, clip(string(msg), 100))
		}
		switch msg[0] {
		case api.TagStdout:
			stdout = append(stdout, msg[1:]...)
		case api.TagStderr:
			stderr = append(stderr, msg[1:]...)
		case api.TagExit:
			if err := json.Unmarshal(msg[1:], &exit); err != nil {
				return stdout, stderr, nil, err
			}
			// The exit frame is the last one (the server closes after it).
			_ = conn.Close(websocket.StatusNormalClosure, "")
			return stdout, stderr, exit, nil
		default:
			return stdout, stderr, nil, fmt.Errorf("unknown tag %d", msg[0])
		}
	}
}

// since formats how long ago t was.
func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }
