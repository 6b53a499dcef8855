package soak

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// steadyWorker is one goroutine of tenant B: a VM of its own, recycled
// every recycleAfter operations, every operation of which must succeed.
type steadyWorker struct {
	c    *apiClient
	mods []byte // tar of the node_modules the npm operation needs
	vm   string
	ops  int
	n    int // blobs written, for unique names
	// blob is the last file written and its bytes, which archive-down
	// must find.
	blob     string
	blobData []byte
}

// steadyOp is one kind of tenant B operation.
type steadyOp struct {
	name string
	run  func(ctx context.Context, w *steadyWorker) error
}

// steadyOps are tenant B's operations, in the order a worker runs them.
var steadyOps = []steadyOp{
	{"exec-pipeline", func(ctx context.Context, w *steadyWorker) error {
		return w.exec(ctx, map[string]any{"cmd": "echo hello | wc -c"}, 0, "6")
	}},
	{"node-npm", func(ctx context.Context, w *steadyWorker) error {
		return w.exec(ctx, map[string]any{"cwd": "/workspace", "argv": []string{"node", "-e",
			`const qs = require('qs'); console.log(JSON.stringify(qs.parse(qs.stringify({ a: { b: 'c' } }))))`}}, 0, `{"a":{"b":"c"}}`)
	}},
	{"file-write-read", func(ctx context.Context, w *steadyWorker) error {
		w.n++
		name := fmt.Sprintf("/workspace/data/blob-%d", w.n)
		data := make([]byte, 64<<10)
		_, _ = rand.Read(data)
		if _, _, err := w.c.do(ctx, http.MethodPut, "/v1/vms/"+w.vm+"/files"+name, data); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		got, _, err := w.c.do(ctx, http.MethodGet, "/v1/vms/"+w.vm+"/files"+name, nil)
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if !bytes.Equal(got, data) {
			return fmt.Errorf("read back %d bytes, not the %d written", len(got), len(data))
		}
		if w.blob != "" { // keep one blob: the VM's storage is bounded
			if _, _, err := w.c.do(ctx, http.MethodDelete, "/v1/vms/"+w.vm+"/files"+w.blob, nil); err != nil {
				return fmt.Errorf("delete: %w", err)
			}
		}
		w.blob, w.blobData = name, data
		return nil
	}},
	{"archive-down", func(ctx context.Context, w *steadyWorker) error {
		if w.blob == "" {
			return nil
		}
		body, _, err := w.c.do(ctx, http.MethodGet, "/v1/vms/"+w.vm+"/archive?path=/workspace/data", nil)
		if err != nil {
			return err
		}
		tr := tar.NewReader(bytes.NewReader(body))
		want := strings.TrimPrefix(w.blob, "/workspace/data/")
		for {
			h, err := tr.Next()
			if err != nil {
				return fmt.Errorf("no %s in the archive (%v)", want, err)
			}
			if h.Name == want {
				got, err := io.ReadAll(tr)
				if err != nil || !bytes.Equal(got, w.blobData) {
					return fmt.Errorf("%s in the archive differs from what was written (%v)", want, err)
				}
				return nil
			}
		}
	}},
	{"archive-up", func(ctx context.Context, w *steadyWorker) error {
		tag := fmt.Sprint(w.n)
		tb, err := tarOf(map[string]string{"up/a.txt": "alpha " + tag + "\n", "up/sub/b.txt": "beta\n"})
		if err != nil {
			return err
		}
		if _, _, err := w.c.do(ctx, http.MethodPut, "/v1/vms/"+w.vm+"/archive?path=/workspace", tb, "Content-Type", "application/x-tar"); err != nil {
			return err
		}
		return w.exec(ctx, map[string]any{"cmd": "cat /workspace/up/a.txt /workspace/up/sub/b.txt"}, 0, "alpha "+tag+"\nbeta\n")
	}},
	{"js-evaluate", func(ctx context.Context, w *steadyWorker) error {
		var v struct{ Value json.RawMessage }
		if err := w.c.json(ctx, http.MethodPost, "/v1/vms/"+w.vm+"/js/evaluate", map[string]any{"code": "[1, 2, 3].map(x => x * 2)"}, &v); err != nil {
			return err
		}
		if string(v.Value) != "[2,4,6]" {
			return fmt.Errorf("value %s, want [2,4,6]", v.Value)
		}
		return nil
	}},
	{"js-context", func(ctx context.Context, w *steadyWorker) error {
		var jc struct{ ID string }
		if err := w.c.json(ctx, http.MethodPost, "/v1/vms/"+w.vm+"/contexts", map[string]any{}, &jc); err != nil {
			return err
		}
		for i := 1; i <= 2; i++ {
			var v struct{ Value json.RawMessage }
			if err := w.c.json(ctx, http.MethodPost, "/v1/vms/"+w.vm+"/contexts/"+jc.ID+"/evaluate",
				map[string]any{"code": "globalThis.n = (globalThis.n || 0) + 1"}, &v); err != nil {
				return err
			}
			if string(v.Value) != fmt.Sprint(i) {
				return fmt.Errorf("evaluation %d gave %s: the context did not keep its state", i, v.Value)
			}
		}
		_, _, err := w.c.do(ctx, http.MethodDelete, "/v1/vms/"+w.vm+"/contexts/"+jc.ID, nil)
		return err
	}},
	{"ws-process", func(ctx context.Context, w *steadyWorker) error {
		var p struct{ Pid int }
		if err := w.c.json(ctx, http.MethodPost, "/v1/vms/"+w.vm+"/processes", map[string]any{"argv": []string{"cat"}}, &p); err != nil {
			return err
		}
		out, errOut, exit, err := w.c.session(ctx, w.vm, p.Pid, []byte("ping\n"))
		if err != nil {
			return err
		}
		if string(out) != "ping\n" || len(errOut) != 0 || fmt.Sprint(exit["exit_code"]) != "0" {
			return fmt.Errorf("stdout %q stderr %q exit %v, want ping and 0", out, errOut, exit)
		}
		return nil
	}},
	{"exec-pipeline-sort", func(ctx context.Context, w *steadyWorker) error {
		return w.exec(ctx, map[string]any{"cmd": "seq 1 300 | grep 7 | sort -rn | head -n 2"}, 0, "297\n287\n")
	}},
}

func (w *steadyWorker) exec(ctx context.Context, req map[string]any, code int, want string) error {
	res, err := w.c.exec(ctx, w.vm, req)
	if err != nil {
		return err
	}
	return res.check(code, want)
}

// open creates the worker's VM and installs the npm packages in it.
func (w *steadyWorker) open(ctx context.Context) error {
	id, err := w.c.createVM(ctx, nil)
	if err != nil {
		return err
	}
	w.vm, w.ops, w.blob, w.blobData = id, 0, "", nil
	if _, _, err := w.c.do(ctx, http.MethodPut, "/v1/vms/"+id+"/archive?path=/workspace/node_modules", w.mods, "Content-Type", "application/x-tar"); err != nil {
		return fmt.Errorf("uploading node_modules: %w", err)
	}
	return nil
}

// close deletes the worker's VM, if it has one.
func (w *steadyWorker) close(ctx context.Context) error {
	if w.vm == "" {
		return nil
	}
	id := w.vm
	w.vm = ""
	return w.c.deleteVM(ctx, id)
}

// runSteady is one tenant B worker until ctx ends; then it deletes its
// VM. record gets every operation's result.
func runSteady(ctx context.Context, w *steadyWorker, start int, record func(op string, err error)) {
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
		defer cancel()
		if err := w.close(cctx); err != nil {
			record("vm-delete", err)
		}
	}()
	for i := start; ctx.Err() == nil; i++ {
		if w.vm == "" || w.ops >= recycleAfter {
			if w.vm != "" {
				err := w.closeOp(ctx)
				if ctx.Err() != nil {
					return
				}
				record("vm-delete", err)
			}
			err := w.openOp(ctx)
			if ctx.Err() != nil {
				return
			}
			record("vm-create", err)
			if err != nil {
				w.discard(ctx)
				pause(ctx, time.Second) // failing fast would only load the machine
				continue
			}
		}
		o := steadyOps[i%len(steadyOps)]
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		err := o.run(octx, w)
		cancel()
		if ctx.Err() != nil {
			return // the end of the run cut the operation short
		}
		w.ops++
		record(o.name, err)
		var ae *APIError
		if errors.As(err, &ae) && (ae.Code == "engine_lost" || ae.Code == "not_found" && strings.Contains(ae.Message, "VM")) {
			// The VM is gone: a new one, as a client would make.
			w.discard(ctx)
		}
	}
}

func (w *steadyWorker) openOp(ctx context.Context) error {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return w.open(octx)
}

func (w *steadyWorker) closeOp(ctx context.Context) error {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return w.close(octx)
}

// discard deletes a VM that failed, ignoring the answer (the failure
// was recorded already).
func (w *steadyWorker) discard(ctx context.Context) {
	_ = w.closeOp(context.WithoutCancel(ctx))
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// tarOf returns a tar of the files (name → content).
func tarOf(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// npmTar returns a tar of the npm package qs and its dependencies, taken
// from the host node_modules dir: the code files of each package (no
// tests, docs or maps), names relative to node_modules.
func npmTar(dir string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	todo := []string{"qs"}
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[name] {
			continue
		}
		seen[name] = true
		root := filepath.Join(dir, name)
		var pkg struct{ Dependencies map[string]string }
		data, err := os.ReadFile(filepath.Join(root, "package.json"))
		if err != nil {
			return nil, fmt.Errorf("soak: npm package %s: %w", name, err)
		}
		if err := json.Unmarshal(data, &pkg); err != nil {
			return nil, fmt.Errorf("soak: npm package %s: %w", name, err)
		}
		for d := range pkg.Dependencies {
			todo = append(todo, d)
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != root && (d.Name() == "test" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if ext := filepath.Ext(p); ext != ".js" && ext != ".json" && ext != ".cjs" && ext != ".mjs" || !d.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b))}); err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("soak: npm package %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
