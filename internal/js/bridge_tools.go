package js

import (
	"encoding/json"
	"errors"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// Bridge calls of the persistent context (context.go) and of the host
// tools module (bootjs/src/tools.js).

func init() {
	register("ctxReply", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		id, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		text, err := argString(args, 2)
		if err != nil {
			return nil, err
		}
		kind, err := argInt(args, 1)
		if err != nil {
			return nil, err
		}
		if r.ctxs != nil {
			r.ctxs.reply(id, kind, text)
		}
		return nil, nil
	})
	register("toolLimit", func(r *rt, _ []*v8.Value) (*v8.Value, error) {
		return r.num(r.p.Kernel().Limits().ToolBytes), nil
	})
	register("toolList", func(r *rt, _ []*v8.Value) (*v8.Value, error) {
		b, _ := json.Marshal(r.p.Kernel().ToolNames())
		return r.string(string(b))
	})
	// toolCall(name, argsJSON, id) calls a host tool on a goroutine; the
	// result comes as a "tool" event: (id, code, payload), payload the
	// result's JSON, or the error's message when code is set. tools.js
	// bounds the arguments' length before it calls, so the string
	// converted here is at most three times Limits.ToolBytes.
	register("toolCall", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		name, err1 := argString(args, 0)
		in, err2 := argString(args, 1)
		id, err3 := argInt(args, 2)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, errno.EINVAL
		}
		if r.pending >= maxHandles {
			return nil, errno.EAGAIN
		}
		r.pending++
		go func() {
			out, err := r.p.CallTool(r.ctx, name, []byte(in))
			ev := event{kind: "tool", a: id, payload: string(out)}
			if err != nil {
				var te *kernel.ToolError
				if errors.As(err, &te) {
					ev.code, ev.payload = te.Code, te.Message
				} else {
					ev.code, ev.payload = kernel.ToolFailed, "the call was interrupted"
				}
			}
			r.post(r.ctx, ev)
		}()
		return nil, nil
	})
}
