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

// argPorts decodes a comma-separated list of port ids.
func argPorts(args []*v8.Value, i int) ([]int, error) {
	s, err := argString(args, i)
	if err != nil || s == "" {
		return nil, err
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

func init() {
	register("portNew", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		g := r.group()
		g.mu.Lock()
		defer g.mu.Unlock()
		p1, _, err := g.newChannel(r, r)
		if err != nil {
			return nil, err
		}
		return r.num(p1.id), nil
	})
	register("bcNew", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		name, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		g := r.group()
		g.mu.Lock()
		defer g.mu.Unlock()
		p, err := g.newPort(r)
		if err != nil {
			return nil, err
		}
		p.bname = "\x00" + name
		p.started = true
		return r.num(p.id), nil
	})
	register("portPost", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		id, err1 := argInt(args, 0)
		n, err2 := argInt(args, 1)
		ids, err3 := argPorts(args, 2)
		if err1 != nil || err2 != nil || err3 != nil || r.tg == nil {
			return nil, errno.EINVAL
		}
		data, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		if len(data) > maxMessageBytes {
			return nil, guestError("ERR_WORKER_MESSAGE_TOO_LARGE:" + strconv.Itoa(maxMessageBytes))
		}
		g := r.tg
		g.mu.Lock()
		defer g.mu.Unlock()
		p := g.owned(r, id)
		if p == nil {
			// A closed or transferred port drops what is posted to it.
			return nil, nil
		}
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
	// portStart, portStop and portRef change a port of the caller's own
	// thread (argument 0) under the group's lock; another thread's port,
	// or none, is ignored.
	registerPortOp("portStart", func(r *rt, p *msgPort, _ []*v8.Value) {
		if !p.started {
			p.started = true
			if len(p.queue) > 0 {
				r.notify()
			}
		}
	})
	registerPortOp("portStop", func(_ *rt, p *msgPort, _ []*v8.Value) { p.started = false })
	registerPortOp("portRef", func(_ *rt, p *msgPort, args []*v8.Value) { p.ref = argBool(args, 1) })
	register("portClose", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		id, err := argInt(args, 0)
		if err != nil || r.tg == nil {
			return nil, errno.EINVAL
		}
		g := r.tg
		g.mu.Lock()
		defer g.mu.Unlock()
		p := g.owned(r, id)
		if p == nil {
			return r.num(0), nil
		}
		// When this thread holds the other end too, its id is returned:
		// JavaScript emits both 'close' events when that end receives
		// the close, after the messages it still has.
		peer := p.peer
		g.closePort(p)
		if peer != nil && peer.owner == r {
			return r.num(peer.id), nil
		}
		return r.num(0), nil
	})
	register("portRecv", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		// receiveMessageOnPort: "n;ids" of the next message, or "".
		id, err := argInt(args, 0)
		if err != nil || r.tg == nil {
			return nil, errno.EINVAL
		}
		m, ok := r.tg.popPort(r, id)
		if !ok {
			return r.string("")
		}
		v, err := r.bytesResult(m.data)
		if err != nil {
			return nil, err
		}
		n := int(v.Number())
		return r.string(strconv.Itoa(n) + ";" + portIDs(m.ports))
	})
	register("workerStart", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		js, err1 := argString(args, 0)
		n, err2 := argInt(args, 1)
		if err1 != nil || err2 != nil {
			return nil, errno.EINVAL
		}
		var spec workerSpec
		if err := json.Unmarshal([]byte(js), &spec); err != nil {
			return nil, errno.EINVAL
		}
		init, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		if len(init) > maxMessageBytes {
			return nil, guestError("ERR_WORKER_MESSAGE_TOO_LARGE:" + strconv.Itoa(maxMessageBytes))
		}
		tid, port, ctl, err := r.startWorker(spec, append([]byte(nil), init...))
		if err != nil {
			return nil, err
		}
		return r.string(strconv.Itoa(tid) + "," + strconv.Itoa(port) + "," + strconv.Itoa(ctl))
	})
	register("workerTerminate", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		tid, err := argInt(args, 0)
		if err != nil || r.tg == nil {
			return nil, errno.EINVAL
		}
		g := r.tg
		g.mu.Lock()
		w := g.workers[tid]
		g.mu.Unlock()
		if w != nil {
			w.terminated.Store(true)
			w.cancel()
		}
		return nil, nil
	})
	register("workerInit", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		// The worker's init message (workerData, environment data), once.
		b := r.workerInit
		r.workerInit = nil
		return r.bytesResult(b)
	})
}

// registerPortOp registers a bridge function whose argument 0 is a port id
// and which runs op on that port, if the calling thread owns it, with the
// thread group's lock held.
func registerPortOp(name string, op func(r *rt, p *msgPort, args []*v8.Value)) {
	register(name, func(r *rt, args []*v8.Value) (*v8.Value, error) {
		id, err := argInt(args, 0)
		if err != nil || r.tg == nil {
			return nil, errno.EINVAL
		}
		g := r.tg
		g.mu.Lock()
		defer g.mu.Unlock()
		if p := g.owned(r, id); p != nil {
			op(r, p, args)
		}
		return nil, nil
	})
}
