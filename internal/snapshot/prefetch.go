package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/secexec/secexec/kernel/vfs"
)

// remoteStore marks a store whose every read is a network round trip
// (S3Store): Restore fetches the blobs of small files ahead from it, a
// few at once, instead of one round trip after another.
type remoteStore interface{ remote() }

func (*S3Store) remote() {}

// Prefetch bounds: blobs fetched at once, and fetched blobs waiting for
// Restore (each of a file of at most smallBlob bytes, so at most about
// prefetchWindow MiB held).
const (
	prefetchWorkers = 8
	prefetchWindow  = 16
)

// prefetcher fetches, in entry order, the blobs of a layer's small files
// ahead of Restore, which takes each in the same order.
type prefetcher struct {
	mu     sync.Mutex
	next   int // entries below next are Restore's already
	got    map[int]chan fetched
	window chan struct{} // a slot per fetched blob not yet taken
}

type fetched struct {
	data []byte
	err  error
}

// prefetchable reports whether Restore's entry e is fetched ahead.
func prefetchable(e Entry) bool {
	return e.Link == "" && vfs.TypeOf(e.Mode) == vfs.TypeRegular && e.Size > 0 && e.Size <= smallBlob && validHash(e.Blob)
}

// startPrefetch starts fetching l's small blobs from store until ctx
// ends (Restore cancels it when it returns).
func startPrefetch(ctx context.Context, store Store, l *Layer) *prefetcher {
	pf := &prefetcher{got: make(map[int]chan fetched), window: make(chan struct{}, prefetchWindow)}
	go func() {
		sem := make(chan struct{}, prefetchWorkers)
		for i, e := range l.Entries {
			if !prefetchable(e) {
				continue
			}
			select {
			case pf.window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			pf.mu.Lock()
			if i < pf.next { // Restore is past it (it failed there)
				pf.mu.Unlock()
				<-pf.window
				continue
			}
			ch := make(chan fetched, 1)
			pf.got[i] = ch
			pf.mu.Unlock()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				defer func() { <-sem }()
				data, err := readBlob(ctx, store, e)
				ch <- fetched{data, err}
			}()
		}
	}()
	return pf
}

// readBlob reads e's whole blob, bounded: gzip adds little to what it
// cannot compress, so a blob much larger than its file is corrupt.
func readBlob(ctx context.Context, store Store, e Entry) ([]byte, error) {
	rc, err := store.OpenBlob(ctx, e.Blob)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	limit := e.Size + e.Size/64 + 4096
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("blob %s: larger than its file: %w", e.Blob, ErrCorrupt)
	}
	return data, nil
}

// take returns how Restore gets entry i's blob: from the fetch ahead, or
// nil when it was not fetched ahead (nil pf included).
func (pf *prefetcher) take(ctx context.Context, i int) func() (io.ReadCloser, error) {
	if pf == nil {
		return nil
	}
	pf.mu.Lock()
	pf.next = i + 1
	ch, ok := pf.got[i]
	delete(pf.got, i)
	pf.mu.Unlock()
	if !ok {
		return nil
	}
	return func() (io.ReadCloser, error) {
		defer func() { <-pf.window }()
		select {
		case f := <-ch:
			if f.err != nil {
				return nil, f.err
			}
			return io.NopCloser(bytes.NewReader(f.data)), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
