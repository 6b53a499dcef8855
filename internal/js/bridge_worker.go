package js

import (
	"encoding/json"
	"strconv"
	"strings"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
)

// The worker_threads bridge (bootjs/src/worker_threads.js): message
// ports, broadcast channels and workers of the process's thread group.

// parsePortIDs decodes a comma-separated list of port ids ("": none).
func parsePortIDs(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxPortsPerGroup {
		return nil, errno.EINVAL
	}
	ids := make([]int, 0, len(parts))
	seen := map[int]bool{}
	for _, p := range parts {
		id, err := strconv.Atoi(p)
		if err != nil || seen[id] {
			return nil, errno.EINVAL
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}

// withOwnedPort runs op on port id under the thread group's lock, if the
// calling thread owns the port, and returns what op returns. A port the
// thread does not own (closed, transferred, another thread's, none) is
// ignored: undefined.
func (r *rt) withOwnedPort(id int, op func(g *threadGroup, p *msgPort) (*v8.Value, error)) (*v8.Value, error) {
	g := r.tg
	if g == nil {
		return nil, errno.EINVAL
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.owned(r, id)
	if p == nil {
		return nil, nil
	}
	return op(g, p)
}

// bridgePortNew makes a message channel whose both ends the calling
// thread owns: → the first end's id (the second's is the next).
func bridgePortNew(r *rt, _ *callArgs) (*v8.Value, error) {
	g := r.group()
	g.mu.Lock()
	defer g.mu.Unlock()
	p1, _, err := g.newChannel(r, r)
	if err != nil {
		return nil, err
	}
	return r.num(p1.id), nil
}

// bridgeBCNew makes a port of the BroadcastChannel name: → its id.
func bridgeBCNew(r *rt, a *callArgs) (*v8.Value, error) {
	g := r.group()
	g.mu.Lock()
	defer g.mu.Unlock()
	p, err := g.newPort(r)
	if err != nil {
		return nil, err
	}
	p.bname = "\x00" + a.str(0)
	p.started = true
	return r.num(p.id), nil
}

// bridgePortPost posts the serialized message data on port id, carrying
// the ports of transfer (their ids, comma-separated); a broadcast port's
// message goes to every other member of its channel. A port the thread
// does not own drops the message.
func bridgePortPost(r *rt, a *callArgs) (*v8.Value, error) {
	id, data := a.int(0), a.bytes(1)
	ids, err := parsePortIDs(a.str(2))
	if err != nil {
		return nil, err
	}
	if len(data) > maxMessageBytes {
		return nil, guestError("ERR_WORKER_MESSAGE_TOO_LARGE:" + strconv.Itoa(maxMessageBytes))
	}
	return r.withOwnedPort(id, func(g *threadGroup, p *msgPort) (*v8.Value, error) {
		var carried []*msgPort
		for _, tid := range ids {
			tp := g.owned(r, tid)
			if tp == nil || tp == p || tp.bname != "" {
				return nil, guestError("ERR_PORT_NOT_TRANSFERABLE")
			}
			carried = append(carried, tp)
		}
		if p.bname != "" {
			// A broadcast reaches every other member of the channel.
			var to []*msgPort
			for _, q := range g.ports {
				if q != p && q.bname == p.bname && !q.closed {
					to = append(to, q)
				}
			}
			cost := int64(len(to)) * (int64(len(data)) + msgOverhead)
			if g.queued+cost > maxQueuedBytes {
				return nil, guestError("ERR_WORKER_MESSAGE_QUEUE_FULL:" + strconv.Itoa(maxQueuedBytes))
			}
			for _, q := range to {
				g.enqueue(q, portMsg{kind: msgData, data: append([]byte(nil), data...)})
			}
			return nil, nil
		}
		m := portMsg{kind: msgData, data: append([]byte(nil), data...), ports: carried}
		if g.queued+m.cost() > maxQueuedBytes {
			return nil, guestError("ERR_WORKER_MESSAGE_QUEUE_FULL:" + strconv.Itoa(maxQueuedBytes))
		}
		for _, tp := range carried {
			tp.owner = nil
		}
		if p.peer == nil {
			g.drop(m)
			return nil, nil
		}
		g.enqueue(p.peer, m)
		return nil, nil
	})
}

// bridgePortStart starts delivering port id's messages. portStart,
// portStop and portRef change a port of the caller's own thread; another
// thread's port, or none, is ignored.
func bridgePortStart(r *rt, a *callArgs) (*v8.Value, error) {
	return r.withOwnedPort(a.int(0), func(_ *threadGroup, p *msgPort) (*v8.Value, error) {
		if !p.started {
			p.started = true
			if len(p.queue) > 0 {
				r.notify()
			}
		}
		return nil, nil
	})
}

// bridgePortStop stops delivering port id's messages.
func bridgePortStop(r *rt, a *callArgs) (*v8.Value, error) {
	return r.withOwnedPort(a.int(0), func(_ *threadGroup, p *msgPort) (*v8.Value, error) {
		p.started = false
		return nil, nil
	})
}

// bridgePortRef sets whether port id keeps the thread's loop alive.
func bridgePortRef(r *rt, a *callArgs) (*v8.Value, error) {
	ref := a.bool(1)
	return r.withOwnedPort(a.int(0), func(_ *threadGroup, p *msgPort) (*v8.Value, error) {
		p.ref = ref
		return nil, nil
	})
}

// bridgePortClose closes port id. When this thread holds the other end
// too, that end's id is returned (else undefined): JavaScript emits both
// 'close' events when that end receives the close, after the messages it
// still has.
func bridgePortClose(r *rt, a *callArgs) (*v8.Value, error) {
	return r.withOwnedPort(a.int(0), func(g *threadGroup, p *msgPort) (*v8.Value, error) {
		peer := p.peer
		g.closePort(p)
		if peer != nil && peer.owner == r {
			return r.num(peer.id), nil
		}
		return nil, nil
	})
}

// bridgePortRecv is receiveMessageOnPort: "n;ids" of port id's next
// message (its bytes as bytesResult hands them, the ports it carried),
// or "".
func bridgePortRecv(r *rt, a *callArgs) (*v8.Value, error) {
	if r.tg == nil {
		return nil, errno.EINVAL
	}
	m, ok := r.tg.popPort(r, a.int(0))
	if !ok {
		return r.string("")
	}
	v, err := r.bytesResult(m.data)
	if err != nil {
		return nil, err
	}
	n := int(v.Number())
	return r.string(strconv.Itoa(n) + ";" + portIDs(m.ports))
}

// bridgeWorkerStart starts a worker thread as spec (a workerSpec's JSON)
// asks, with its init message: → "threadId,port,control".
func bridgeWorkerStart(r *rt, a *callArgs) (*v8.Value, error) {
	init := a.bytes(1)
	var spec workerSpec
	if err := json.Unmarshal([]byte(a.str(0)), &spec); err != nil {
		return nil, errno.EINVAL
	}
	if len(init) > maxMessageBytes {
		return nil, guestError("ERR_WORKER_MESSAGE_TOO_LARGE:" + strconv.Itoa(maxMessageBytes))
	}
	tid, port, ctl, err := r.startWorker(spec, append([]byte(nil), init...))
	if err != nil {
		return nil, err
	}
	return r.string(strconv.Itoa(tid) + "," + strconv.Itoa(port) + "," + strconv.Itoa(ctl))
}

// bridgeWorkerTerminate stops worker tid of the thread group; an unknown
// one is ignored.
func bridgeWorkerTerminate(r *rt, a *callArgs) (*v8.Value, error) {
	g := r.tg
	if g == nil {
		return nil, errno.EINVAL
	}
	g.mu.Lock()
	w := g.workers[a.int(0)]
	g.mu.Unlock()
	if w != nil {
		w.terminated.Store(true)
		w.cancel()
	}
	return nil, nil
}

// bridgeWorkerInit is the worker's init message (workerData, environment
// data), once.
func bridgeWorkerInit(r *rt, _ *callArgs) (*v8.Value, error) {
	b := r.workerInit
	r.workerInit = nil
	return r.bytesResult(b)
}
