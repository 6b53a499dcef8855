package js

import (
	"strings"
	"testing"
)

// Every bridge function, called directly with hostile arguments, ends in
// a thrown error or a value: never a crash of the host, never a hang.
func TestBridgeHostileArguments(t *testing.T) {
	v := bridgeVM(t)
	r := v.node(`
const B = globalThis.__test_bridge;
const skip = new Set(['exit', 'setScratch', 'read', 'readStart', 'readOnce', 'spawnSync', 'spawn', 'kill']);
const vals = [undefined, null, -1, 0, 1, 2, 3, 2**31, -(2**31), 2**53, 1e300, -1e300, NaN, Infinity, -Infinity, 0.5,
  '', 'x', '/', '/tmp', '\u0000', 'a'.repeat(5000), '../../..', {}, [], () => 1, Symbol('s'), 10n, true, new Uint8Array(4)];
let calls = 0, threw = 0;
const names = Object.getOwnPropertyNames(B).sort();
for (const name of names) {
  if (skip.has(name)) continue;
  for (let i = 0; i < 300; i++) {
    const args = [];
    const n = i % 5;
    for (let j = 0; j < n; j++) args.push(vals[(i * 7 + j * 13 + name.length) % vals.length]);
    if (name === 'close' && (args[0] === 0 || args[0] === 1 || args[0] === 2)) continue;
    try { B[name](...args); } catch (e) { threw++; }
    calls++;
  }
}
// kill and read with safe targets only: no signal to ourselves, no
// blocking read of stdin.
try { B.kill(999999, 9) } catch (e) { threw++ }
try { B.read(12345, 10, -1) } catch (e) { threw++ }
// readOnce of a descriptor that is not open, or with arguments that are
// not numbers, throws before it starts a reader.
for (const args of [[12345, 7, 10], ['x', 1, 1], [0, {}, 1], [0, 1, 'n']]) { try { B.readOnce(...args); console.log('no throw') } catch (e) { threw++ } }
console.log('done', names.length > 50, calls > 10000, threw > 0);
`)
	if r.code != 0 || !strings.HasSuffix(r.stdout, "done true true true\n") {
		t.Fatalf("code %d stdout %q stderr %s", r.code, r.stdout, trunc(r.stderr))
	}
}

// A call that fails after its arguments are decoded still takes the blob
// it was given: JavaScript never frees a blob it passed, so a blob left
// behind by a failed call stayed counted against the process's memory
// until it exited (writeAsync past maxHandles writes in flight, and
// spawnSync with a request it cannot parse, did so). A call with a bad
// argument leaves it, as nothing ran.
func TestBridgeFailedCallTakesItsBlob(t *testing.T) {
	v := bridgeVM(t)
	r := v.node(`
const B = globalThis.__test_bridge;
const blob = () => { const id = B.blobNew(8); B.blobAppend(id, 8); return id; };
const left = (id) => { try { return B.blobSize(id) === 8; } catch (e) { return false; } };
const fail = (f) => { try { f(); return 'no error'; } catch (e) { return e; } };
const [a] = B.duplexPair().split(',').map(Number);
// Writes of nothing: each stays in flight until the loop runs again.
for (let i = 0; i < 4096; i++) B.writeAsync(a, 0, i);
let id = blob();
console.log(fail(() => B.writeAsync(a, -id, 4096)), left(id));
id = blob();
console.log(fail(() => B.spawnSync('{not json', -id)), left(id));
id = blob();
console.log(fail(() => B.writeAsync('x', -id, 1)), left(id));
`)
	if want := "EAGAIN false\nEINVAL false\nEINVAL true\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("code %d stdout %q, want %q; stderr %s", r.code, r.stdout, want, trunc(r.stderr))
	}
}
