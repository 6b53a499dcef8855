package js

import (
	"errors"
	"fmt"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
)

// A bridge function receives its JavaScript arguments and returns a value
// for JavaScript, or an error that is thrown there. Errors that carry an
// errno are thrown as the errno's name (a string such as "ENOENT"), which
// the JavaScript side turns into Node's error objects; nothing of the
// host's error text ever reaches the guest.
type bridgeFunc func(r *rt, args []*v8.Value) (*v8.Value, error)

// thrown is a JavaScript value thrown from a bridge call. Embedding
// *v8.Value gives it v8go's Valuer method, so v8go throws the value
// itself instead of a string made from Error().
type thrown struct{ *v8.Value }

func (t thrown) Error() string { return "js: thrown value" }

var errTooMany = errors.New("EAGAIN")

// guestError is an error with a message the guest may see (it carries no
// host detail).
type guestError string

func (g guestError) Error() string { return string(g) }

func (r *rt) installBridge() error {
	tmpl := v8.NewObjectTemplate(r.iso)
	add := func(name string, fn bridgeFunc) error {
		ft := v8.NewFunctionTemplateWithError(r.iso, func(info *v8.FunctionCallbackInfo) (*v8.Value, error) {
			return r.invoke(name, fn, info)
		})
		return tmpl.Set(name, ft, v8.ReadOnly|v8.DontDelete)
	}
	// In the table's order, so that every isolate numbers its callbacks
	// the same way.
	for i := range compiledBridge {
		e := &compiledBridge[i]
		if err := add(e.name, e.call); err != nil {
			return err
		}
	}
	obj, err := tmpl.NewInstance(r.v8c)
	if err != nil {
		return err
	}
	g := r.v8c.Global()
	defer g.Release()
	if err := g.Set("__secexec_bridge", obj); err != nil {
		return err
	}
	if r.e.exposeBridge {
		// Tests call the bridge directly with hostile arguments.
		if err := g.Set("__test_bridge", obj); err != nil {
			return err
		}
	}
	obj.Release()
	return nil
}

// invoke runs one bridge call. It releases the values of the previous
// call's result and this call's arguments, so a guest making millions of
// calls holds no more V8 handles than one call needs.
func (r *rt) invoke(name string, fn bridgeFunc, info *v8.FunctionCallbackInfo) (ret *v8.Value, err error) {
	for _, v := range r.release {
		v.Release()
	}
	r.release = r.release[:0]
	defer info.Release()
	if now := time.Now(); name != "extCheck" && now.Sub(r.lastCheck) >= extCheckEvery {
		r.lastCheck = now
		if !r.checkExternal(0) {
			r.terminate(termExternal)
			return nil, nil
		}
	}
	if r.exited {
		// process.exit() was called: the isolate is being terminated and
		// nothing more may happen on the guest's behalf.
		return nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			r.e.log.Error("js: bridge function panicked", "panic", fmt.Sprint(p))
			ret, err = nil, r.throwString("EIO")
		}
	}()
	v, err := fn(r, info.Args())
	if err != nil {
		return nil, r.toThrown(err)
	}
	if v != nil && !r.isInterned(v) {
		r.release = append(r.release, v)
	}
	return v, nil
}

func (r *rt) toThrown(err error) error {
	var t thrown
	if errors.As(err, &t) {
		r.release = append(r.release, t.Value)
		return t
	}
	var g guestError
	if errors.As(err, &g) {
		return r.throwString(string(g))
	}
	if e := errno.Of(err); e != 0 {
		return r.throwString(e.Name())
	}
	if errors.Is(err, errTooMany) {
		return r.throwString("EAGAIN")
	}
	r.e.log.Debug("js: bridge error without errno", "err", err)
	return r.throwString("EIO")
}

func (r *rt) throwString(s string) error {
	return thrown{r.str(s)}
}

// str returns an interned string value: event kinds and errno names are
// few, so they are made once per isolate and never released.
func (r *rt) str(s string) *v8.Value {
	if v, ok := r.strs[s]; ok {
		return v
	}
	v, err := v8.NewValue(r.iso, s)
	if err != nil {
		return v8.Undefined(r.iso)
	}
	if len(r.strs) < 512 {
		r.strs[s] = v
		r.interned[v] = struct{}{}
	} else {
		r.release = append(r.release, v)
	}
	return v
}

func (r *rt) isInterned(v *v8.Value) bool {
	if v == v8.Undefined(r.iso) || v == v8.Null(r.iso) {
		return true
	}
	_, ok := r.interned[v]
	return ok
}

func (r *rt) num(n int) *v8.Value {
	v, _ := v8.NewValue(r.iso, float64(n))
	return v
}

func (r *rt) float(f float64) *v8.Value {
	v, _ := v8.NewValue(r.iso, f)
	return v
}

func (r *rt) boolean(b bool) *v8.Value {
	v, _ := v8.NewValue(r.iso, b)
	return v
}

func (r *rt) string(s string) (*v8.Value, error) {
	return v8.NewValue(r.iso, s)
}

// --- bytes across the bridge ---

// blob holds bytes larger than the scratch buffer, in either direction.
type blob struct {
	data []byte
	want int // for incoming blobs: the announced size
}

const (
	maxBlobs     = 256
	maxBlobBytes = 1 << 30
)

// bytesArg returns the bytes an argument n designates: scratch[:n] for
// n >= 0, or the blob -n (which is consumed).
func (r *rt) bytesArg(n int) ([]byte, error) {
	if n >= 0 {
		if n > len(r.scratch) {
			return nil, errno.EINVAL
		}
		return r.scratch[:n], nil
	}
	b, ok := r.blobs[-n]
	if !ok {
		return nil, errno.EINVAL
	}
	delete(r.blobs, -n)
	r.blobBytes -= int64(cap(b.data))
	return b.data, nil
}

// bytesResult hands b to JavaScript: copied to the scratch buffer when it
// fits (returning its length), else kept as a blob (returning -id).
func (r *rt) bytesResult(b []byte) (*v8.Value, error) {
	if len(b) <= len(r.scratch) {
		copy(r.scratch, b)
		return r.num(len(b)), nil
	}
	id, err := r.newBlob(b, len(b))
	if err != nil {
		return nil, err
	}
	return r.num(-id), nil
}

func (r *rt) newBlob(data []byte, want int) (int, error) {
	if len(r.blobs) >= maxBlobs || r.blobBytes+int64(cap(data)) > maxBlobBytes {
		return 0, errno.ENOMEM
	}
	r.nextBlob++
	r.blobs[r.nextBlob] = &blob{data: data, want: want}
	r.blobBytes += int64(cap(data))
	return r.nextBlob, nil
}

func bridgeSetScratch(r *rt, a *callArgs) (*v8.Value, error) {
	buf := a.value(0)
	if buf == nil || r.scratch != nil {
		return nil, errno.EINVAL
	}
	b, release, err := buf.SharedArrayBufferGetContents()
	if err != nil {
		return nil, errno.EINVAL
	}
	r.scratch, r.scratchRelease = b, release
	return nil, nil
}

// bridgeExtCheck is called by JavaScript before allocating n bytes of
// ArrayBuffer memory: past the limit the allocation fails with a
// RangeError, as a failed allocation does in Node.
func bridgeExtCheck(r *rt, a *callArgs) (*v8.Value, error) {
	n := a.float(0)
	if n < 0 || n != n {
		n = 0
	}
	if !r.checkExternal(uint64(min(n, 1<<62))) {
		return nil, guestError("ERR_MEMORY_ALLOCATION_FAILED")
	}
	return nil, nil
}

func bridgeBlobNew(r *rt, a *callArgs) (*v8.Value, error) {
	n := a.int(0)
	if n < 0 || n > maxBlobBytes {
		return nil, errno.EINVAL
	}
	// Blobs are host memory made for the guest: together they stay
	// within its external-memory limit as well as the bridge's cap.
	if r.blobBytes+int64(n) > min(maxBlobBytes, int64(r.extLimit)) {
		return nil, errno.ENOMEM
	}
	id, err := r.newBlob(make([]byte, 0, n), n)
	if err != nil {
		return nil, err
	}
	return r.num(id), nil
}

func bridgeBlobAppend(r *rt, a *callArgs) (*v8.Value, error) {
	id, n := a.int(0), a.int(1)
	b, ok := r.blobs[id]
	if !ok || n < 0 || n > len(r.scratch) || len(b.data)+n > b.want {
		return nil, errno.EINVAL
	}
	b.data = append(b.data, r.scratch[:n]...)
	return nil, nil
}

func bridgeBlobSize(r *rt, a *callArgs) (*v8.Value, error) {
	b, ok := r.blobs[a.int(0)]
	if !ok {
		return nil, errno.EINVAL
	}
	return r.num(len(b.data)), nil
}

func bridgeBlobRead(r *rt, a *callArgs) (*v8.Value, error) {
	off := a.int(1)
	b, ok := r.blobs[a.int(0)]
	if !ok || off < 0 || off > len(b.data) {
		return nil, errno.EINVAL
	}
	return r.num(copy(r.scratch, b.data[off:])), nil
}

func bridgeBlobFree(r *rt, a *callArgs) (*v8.Value, error) {
	id := a.int(0)
	if b, ok := r.blobs[id]; ok {
		delete(r.blobs, id)
		r.blobBytes -= int64(cap(b.data))
	}
	return nil, nil
}
