package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Snapshot describes a saved VM on the server (POST /v1/vms/{id}/snapshots).
type Snapshot struct {
	ID        string
	CreatedAt time.Time
	// Files and Bytes count what the snapshot holds; StoredBytes what
	// storing it added (contents already stored are shared).
	Files       int
	Bytes       int64
	StoredBytes int64
	Labels      map[string]string
	// Restart are the commands started again in a VM restored from it.
	Restart [][]string
}

type snapshotJSON struct {
	ID          string            `json:"id"`
	CreatedAt   time.Time         `json:"created_at"`
	Files       int               `json:"files"`
	Bytes       int64             `json:"bytes"`
	StoredBytes int64             `json:"stored_bytes"`
	Labels      map[string]string `json:"labels,omitempty"`
	Restart     [][]string        `json:"restart,omitempty"`
}

func (j *snapshotJSON) snapshot() Snapshot { return Snapshot(*j) }

// SnapshotOptions configure VM.Snapshot.
type SnapshotOptions struct {
	// Labels are kept with the snapshot.
	Labels map[string]string
	// Restart lists commands (argv) to start again in a VM restored from
	// the snapshot, e.g. a dev server.
	Restart [][]string
}

// Snapshot saves the VM's files and options on the server. Restore it
// with VMOptions.FromSnapshot.
func (v *VM) Snapshot(ctx context.Context, opts SnapshotOptions) (Snapshot, error) {
	cl, err := jsonCall("POST", v.path("/snapshots"), struct {
		Labels  map[string]string `json:"labels,omitempty"`
		Restart [][]string        `json:"restart,omitempty"`
	}{opts.Labels, opts.Restart})
	if err != nil {
		return Snapshot{}, err
	}
	var j snapshotJSON
	if err := v.c.doJSON(ctx, cl, &j); err != nil {
		return Snapshot{}, err
	}
	return j.snapshot(), nil
}

// ListSnapshots lists the tenant's snapshots, oldest first.
func (c *Client) ListSnapshots(ctx context.Context) ([]Snapshot, error) {
	var out struct {
		Snapshots []snapshotJSON `json:"snapshots"`
	}
	if err := c.doJSON(ctx, &call{method: "GET", path: "/v1/snapshots", control: true}, &out); err != nil {
		return nil, err
	}
	snaps := make([]Snapshot, len(out.Snapshots))
	for i := range out.Snapshots {
		snaps[i] = out.Snapshots[i].snapshot()
	}
	return snaps, nil
}

// Snapshot asks the server about one of the tenant's snapshots.
func (c *Client) Snapshot(ctx context.Context, id string) (Snapshot, error) {
	var j snapshotJSON
	if err := c.doJSON(ctx, &call{method: "GET", path: "/v1/snapshots/" + url.PathEscape(id), control: true}, &j); err != nil {
		return Snapshot{}, err
	}
	return j.snapshot(), nil
}

// DeleteSnapshot deletes one of the tenant's snapshots.
func (c *Client) DeleteSnapshot(ctx context.Context, id string) error {
	return c.doJSON(ctx, &call{method: "DELETE", path: "/v1/snapshots/" + url.PathEscape(id), control: true}, nil)
}

// Fork makes a new VM whose files start as this VM's, shared
// copy-on-write: writes on either side are invisible to the other.
func (v *VM) Fork(ctx context.Context) (*VM, error) {
	var j vmJSON
	if err := v.c.doJSON(ctx, &call{method: "POST", path: v.path("/fork")}, &j); err != nil {
		return nil, err
	}
	return v.c.VM(j.ID), nil
}

// PauseOptions configure VM.Pause.
type PauseOptions struct {
	// Restart lists commands (argv) started again in the background
	// when the VM resumes: processes do not survive a pause.
	Restart [][]string
}

// Pause saves the VM on the server and frees it; its next call (or
// Resume) restores it, with its files, env and options. Its processes
// and JS contexts end. A VM another call is using is not paused: the
// error matches ErrConflict.
func (v *VM) Pause(ctx context.Context, opts PauseOptions) (VMInfo, error) {
	cl, err := jsonCall("POST", v.path("/pause"), struct {
		Restart [][]string `json:"restart,omitempty"`
	}{opts.Restart})
	if err != nil {
		return VMInfo{}, err
	}
	return v.callInfo(ctx, cl)
}

// Resume restores a paused VM now rather than on its next call.
func (v *VM) Resume(ctx context.Context) (VMInfo, error) {
	return v.callInfo(ctx, &call{method: "POST", path: v.path("/resume")})
}

// VMPatch is a change to a VM's TTL or labels (VM.Patch).
type VMPatch struct {
	// TTL, when not nil, makes the VM expire this long from now (0: no
	// TTL).
	TTL *time.Duration
	// Labels, when not nil, replace the VM's labels.
	Labels map[string]string
}

// Patch changes the VM's TTL or labels; a paused VM stays paused.
func (v *VM) Patch(ctx context.Context, p VMPatch) (VMInfo, error) {
	var body struct {
		TTLMS *int64 `json:"ttl_ms,omitempty"`
		// A pointer, so that an empty map is sent (clearing the labels)
		// and only nil is left out.
		Labels *map[string]string `json:"labels,omitempty"`
	}
	if p.TTL != nil {
		ms := p.TTL.Milliseconds()
		body.TTLMS = &ms
	}
	if p.Labels != nil {
		body.Labels = &p.Labels
	}
	cl, err := jsonCall("PATCH", v.path(""), body)
	if err != nil {
		return VMInfo{}, err
	}
	return v.callInfo(ctx, cl)
}

// SetTTL makes the VM expire ttl from now (0: never).
func (v *VM) SetTTL(ctx context.Context, ttl time.Duration) (VMInfo, error) {
	return v.Patch(ctx, VMPatch{TTL: &ttl})
}

// SetLabels replaces the VM's labels.
func (v *VM) SetLabels(ctx context.Context, labels map[string]string) (VMInfo, error) {
	return v.Patch(ctx, VMPatch{Labels: labels})
}

func (v *VM) callInfo(ctx context.Context, cl *call) (VMInfo, error) {
	var j vmJSON
	if err := v.c.doJSON(ctx, cl, &j); err != nil {
		return VMInfo{}, err
	}
	return j.info(), nil
}

// Preview is a URL that opens a guest's port in a browser with no
// credentials, until it expires or is revoked.
type Preview struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Port      int       `json:"port"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Preview makes a preview URL of the guest's TCP port; ttl zero takes
// the server's default (the server caps it). Something in the VM must
// listen on the port (else ErrNotFound).
func (v *VM) Preview(ctx context.Context, port int, ttl time.Duration) (Preview, error) {
	cl, err := jsonCall("POST", v.path("/previews"), struct {
		Port       int `json:"port"`
		TTLSeconds int `json:"ttl_seconds,omitempty"`
	}{port, int(ttl / time.Second)})
	if err != nil {
		return Preview{}, err
	}
	var p Preview
	if err := v.c.doJSON(ctx, cl, &p); err != nil {
		return Preview{}, err
	}
	return p, nil
}

// RevokePreview ends a preview before it expires.
func (v *VM) RevokePreview(ctx context.Context, id string) error {
	return v.c.doJSON(ctx, &call{method: "DELETE", path: v.path("/previews/" + url.PathEscape(id))}, nil)
}

// WatchEvent is one change under a watched path.
type WatchEvent struct {
	// Op is create, write, attrib, remove, rename_from, rename_to,
	// move_self, overflow (events were lost: rescan) or ended.
	Op string `json:"op"`
	// Name is the entry's path relative to the watched path.
	Name   string `json:"name,omitempty"`
	IsDir  bool   `json:"is_dir,omitempty"`
	Cookie uint32 `json:"cookie,omitempty"`
}

// Watcher streams the changes under a path (FS.Watch).
type Watcher struct {
	events chan WatchEvent
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

// Watch streams the changes under path in the VM (recursive: the whole
// tree below a directory) until ctx ends, Close is called or the VM
// closes (Next then returns io.EOF).
func (f *FS) Watch(ctx context.Context, path string, recursive bool) (*Watcher, error) {
	q := url.Values{"path": {path}, "recursive": {strconv.FormatBool(recursive)}}
	ctx, cancel := context.WithCancel(ctx)
	resp, err := f.vm.c.send(ctx, &call{method: "GET", path: f.vm.path("/watch"), query: q, accept: "text/event-stream"})
	if err != nil {
		cancel()
		return nil, err
	}
	w := &Watcher{events: make(chan WatchEvent), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer resp.Body.Close()
		err := readSSE(resp.Body, func(name string, data []byte) (bool, error) {
			if name != "change" {
				return false, nil
			}
			var ev WatchEvent
			if err := decode(data, &ev, "a watch event"); err != nil {
				return true, err
			}
			select {
			case w.events <- ev:
				return false, nil
			case <-ctx.Done():
				return true, nil
			}
		})
		if err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
			w.mu.Lock()
			w.err = fmt.Errorf("client: watch: %w", err)
			w.mu.Unlock()
		}
	}()
	return w, nil
}

// Next returns the next change. It returns io.EOF when the stream has
// ended (Close, the VM closed, or the watch's context ended).
func (w *Watcher) Next(ctx context.Context) (WatchEvent, error) {
	select {
	case ev := <-w.events:
		return ev, nil
	case <-w.done:
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.err != nil {
			return WatchEvent{}, w.err
		}
		return WatchEvent{}, io.EOF
	case <-ctx.Done():
		return WatchEvent{}, ctx.Err()
	}
}

// Close ends the watch.
func (w *Watcher) Close() error {
	w.cancel()
	<-w.done
	return nil
}
