// Package loadtest drives a secexec API server with concurrent clients:
// each creates a VM and runs execs in it for a bounded time, every exec
// echoing a unique token that must come back, so lost or mixed-up
// outputs are counted rather than assumed away.
package loadtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure a run.
type Options struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:8080.
	URL string
	// Token is the bearer token.
	Token string
	// Clients run concurrently, one VM each (default 4).
	Clients int
	// Duration is how long clients start new execs (default 10 s).
	Duration time.Duration
	// HTTP is the client (default: a dedicated transport with enough idle
	// connections for Clients).
	HTTP *http.Client
}

// Report is the outcome of a run.
type Report struct {
	Clients  int
	Duration time.Duration
	VMs      int
	Execs    int
	// Errors are requests that failed (transport errors, non-2xx, a VM
	// that could not be created).
	Errors int
	// Lost are execs that succeeded but did not return their token
	// exactly.
	Lost int
	// FirstError describes the first error, if any.
	FirstError string
	// ExecsPerSec is Execs over the elapsed time.
	ExecsPerSec float64
	P50, P99    time.Duration
}

// String formats r on one line.
func (r Report) String() string {
	s := fmt.Sprintf("clients=%d duration=%s vms=%d execs=%d execs/s=%.1f p50=%s p99=%s errors=%d lost=%d",
		r.Clients, r.Duration.Round(time.Millisecond), r.VMs, r.Execs, r.ExecsPerSec,
		r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), r.Errors, r.Lost)
	if r.FirstError != "" {
		s += " first_error=" + fmt.Sprintf("%q", r.FirstError)
	}
	return s
}

type result struct {
	lat    []time.Duration
	vms    int
	errors int
	lost   int
	first  string
}

func (r *result) fail(err error) {
	r.errors++
	if r.first == "" {
		r.first = err.Error()
	}
}

// Run drives the server and reports. It fails only on bad options; what
// goes wrong on the server is counted in the Report.
func Run(ctx context.Context, o Options) (Report, error) {
	if o.URL == "" || o.Token == "" {
		return Report{}, fmt.Errorf("loadtest: URL and Token are required")
	}
	if o.Clients <= 0 {
		o.Clients = 4
	}
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.Clients * 2}}
	}
	c := &client{base: strings.TrimSuffix(o.URL, "/"), token: o.Token, http: o.HTTP}
	// The VMs are made first (the first ones may wait for the engine to
	// start), then the timed phase begins for every client at once.
	results := make([]result, o.Clients)
	ids := make([]string, o.Clients)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ids[i] = c.create(ctx, &results[i])
		}(i)
	}
	wg.Wait()
	start := time.Now()
	deadline := start.Add(o.Duration)
	for i := range results {
		if ids[i] == "" {
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c.drive(ctx, ids[i], deadline, &results[i])
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	rep := Report{Clients: o.Clients, Duration: elapsed}
	var lat []time.Duration
	for _, r := range results {
		lat = append(lat, r.lat...)
		rep.VMs += r.vms
		rep.Errors += r.errors
		rep.Lost += r.lost
		if rep.FirstError == "" {
			rep.FirstError = r.first
		}
	}
	rep.Execs = len(lat)
	rep.ExecsPerSec = float64(rep.Execs) / elapsed.Seconds()
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		rep.P50 = lat[n*50/100]
		rep.P99 = lat[min(n-1, n*99/100)]
	}
	return rep, nil
}

type client struct {
	base, token string
	http        *http.Client
}

func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// create makes a client's VM and returns its id ("" on failure).
func (c *client) create(ctx context.Context, r *result) string {
	var vm struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, http.MethodPost, "/v1/vms", map[string]any{}, &vm); err != nil {
		r.fail(err)
		return ""
	}
	r.vms++
	return vm.ID
}

// drive runs execs in VM id until the deadline, then deletes it.
func (c *client) drive(ctx context.Context, id string, deadline time.Time, r *result) {
	defer func() {
		if err := c.do(context.WithoutCancel(ctx), http.MethodDelete, "/v1/vms/"+id, nil, nil); err != nil {
			r.fail(err)
		}
	}()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var b [12]byte
		_, _ = rand.Read(b[:])
		tok := hex.EncodeToString(b[:])
		var res struct {
			ExitCode int    `json:"exit_code"`
			Stdout   string `json:"stdout"`
		}
		t0 := time.Now()
		err := c.do(ctx, http.MethodPost, "/v1/vms/"+id+"/exec", map[string]any{"argv": []string{"echo", tok}}, &res)
		if err != nil {
			r.fail(err)
			continue
		}
		r.lat = append(r.lat, time.Since(t0))
		out, derr := base64.StdEncoding.DecodeString(res.Stdout)
		if derr != nil || res.ExitCode != 0 || string(out) != tok+"\n" {
			r.lost++
		}
	}
}
