package js

import (
	"testing"
)

// lazyAsset answers only the bundle's asset names: anything else a
// caller passes (unknown or path-like names, non-strings, nothing) is an
// error, never a read of something else; a known name yields its bytes
// through the scratch buffer.
func TestLazyAssetBridge(t *testing.T) {
	v := bridgeVM(t)
	r := v.node(`
const B = globalThis.__test_bridge;
const show = (f) => { try { return String(f()); } catch (err) { return 'throws ' + (err && (err.code || err.message || err)); } };
for (const arg of ['nope.wasm', '../bundle.js', 'llhttp_simd.wasm/..', '', 'x'.repeat(1 << 20), 42, null, {}]) {
  console.log(JSON.stringify(String(arg).slice(0, 20)), show(() => B.lazyAsset(arg)));
}
console.log('none', show(() => B.lazyAsset()));
console.log('simd', B.lazyAsset('llhttp_simd.wasm') > 10000);
`)
	want := `"nope.wasm" throws ENOENT
"../bundle.js" throws ENOENT
"llhttp_simd.wasm/.." throws ENOENT
"" throws ENOENT
"xxxxxxxxxxxxxxxxxxxx" throws ENOENT
"42" throws EINVAL
"null" throws EINVAL
"[object Object]" throws EINVAL
none throws EINVAL
simd true
`
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", r.code, r.stdout, want, r.stderr)
	}
}
