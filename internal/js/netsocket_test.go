package js

import "testing"

// end() on a socket that never connected finishes at once, as in Node 22
// (Node 20, the differential tests' host node, waits for a connection).
func TestNetSocketEndWithoutConnect(t *testing.T) {
	v := newVM(t, nil)
	res := v.node(`
const net = require('net');
const s = new net.Socket();
s.on('finish', () => console.log('finish'));
s.end(() => console.log('end callback, writable', s.writable));
`)
	want := "end callback, writable false\nfinish\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}
