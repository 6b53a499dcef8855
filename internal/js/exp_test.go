package js

import (
	"testing"

	v8 "github.com/tommie/v8go"
)

func TestExp(t *testing.T) {
	iso := v8.NewIsolate()
	ctx := v8.NewContext(iso)
	for _, s := range []string{"typeof Uint8Array.fromBase64", "typeof new Uint8Array(1).toBase64", "typeof SharedArrayBuffer", "typeof WebAssembly", "typeof Iterator", "typeof Float16Array", "typeof Promise.withResolvers", "typeof Array.fromAsync", "typeof RegExp.escape", "typeof Error.captureStackTrace", "typeof structuredClone", "typeof Intl"} {
		v, err := ctx.RunScript(s, "x.js")
		t.Log(s, v, err)
	}
	t.Log(v8.Version())
}
