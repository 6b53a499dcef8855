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

// bridgeCtxReply is the persistent context's answer for request id: text
// of one of the reply kinds (replyThrown, replyValue, replyTooLarge).
func bridgeCtxReply(r *rt, a *callArgs) (*v8.Value, error) {
	if r.ctxs != nil {
		r.ctxs.reply(a.int(0), a.int(1), a.str(2))
	}
	return nil, nil
}

// bridgeToolLimit is the size, in bytes, a host tool's arguments and
// result may have.
func bridgeToolLimit(r *rt, _ *callArgs) (*v8.Value, error) {
	return r.num(r.p.Kernel().Limits().ToolBytes), nil
}

// bridgeToolList names the host tools of the VM, as JSON.
func bridgeToolList(r *rt, _ *callArgs) (*v8.Value, error) {
	b, _ := json.Marshal(r.p.Kernel().ToolNames())
	return r.string(string(b))
}

// bridgeToolCall(name, argsJSON, id) calls a host tool on a goroutine; the
// result comes as a "tool" event: (id, code, payload), payload the
// result's JSON, or the error's message when code is set. tools.js bounds
// the arguments' length before it calls, so the string converted here is
// at most three times Limits.ToolBytes.
func bridgeToolCall(r *rt, a *callArgs) (*v8.Value, error) {
	name, in, id := a.str(0), a.str(1), a.int(2)
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
}
