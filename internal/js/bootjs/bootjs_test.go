package bootjs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	b, err := Build(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Source) < 10000 || !strings.Contains(b.Source, "__secexec_start") {
		t.Fatalf("bundle of %d bytes", len(b.Source))
	}
	b2, err := Build(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b2.Digest != b.Digest || b2.Source != b.Source {
		t.Fatal("cached bundle differs")
	}
}

// llhttp's WebAssembly is carried as decoded bytes beside the chunks, not
// as base64 inside undici's: a process's first fetch does not decode it.
// The bytes survive the bundle cache, and undici is bundled from its
// fetch entry (no mock agents).
func TestBuildLazyAssets(t *testing.T) {
	b, err := Build(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	undici, llhttp := b.Lazy["undici"], b.Lazy["llhttp"]
	for _, name := range LazyAssets {
		wasm := b.Assets[name]
		if !bytes.HasPrefix(wasm, []byte("\x00asm")) || len(wasm) < 10000 {
			t.Fatalf("asset %s: %d bytes, starting %q", name, len(wasm), wasm[:min(len(wasm), 8)])
		}
		chunk, user := undici, "undici"
		if strings.HasPrefix(name, "http-") {
			chunk, user = llhttp, "llhttp"
		}
		if !strings.Contains(chunk, assetPrefix+name) {
			t.Errorf("%s does not require %s", user, assetPrefix+name)
		}
	}
	// The http module's llhttp is another build than fetch's.
	if bytes.Equal(b.Assets["http-llhttp_simd.wasm"], b.Assets["llhttp_simd.wasm"]) {
		t.Error("the http module's llhttp is fetch's: the undici-llhttp alias was not bundled")
	}
	// "AGFzbQ" is "\x00asm" in base64: no WebAssembly left as text.
	for name, chunk := range map[string]string{"undici": undici, "llhttp": llhttp} {
		if strings.Contains(chunk, "AGFzbQ") {
			t.Errorf("%s's chunk still holds base64 WebAssembly", name)
		}
	}
	if strings.Contains(undici, "MockAgent") {
		t.Error("undici's chunk holds its mock agents: bundled from the whole package, not its fetch entry")
	}
	cached, err := Build(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range LazyAssets {
		if !bytes.Equal(cached.Assets[name], b.Assets[name]) {
			t.Errorf("asset %s differs when read from the cache", name)
		}
	}
	for _, name := range LazyPackages {
		if cached.Lazy[name] != b.Lazy[name] {
			t.Errorf("chunk %s differs when read from the cache", name)
		}
	}
}

// An asset module of a shape the build does not know fails the build
// instead of leaving base64 text behind.
func TestDecodeAssetModule(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.js", "'use strict'\nconst { Buffer } = require('node:buffer')\nmodule.exports = Buffer.from('AGFzbQEAAAA=', 'base64')\n")
	if data, err := decodeAssetModule(good); err != nil || !bytes.Equal(data, []byte("\x00asm\x01\x00\x00\x00")) {
		t.Fatalf("good module: %q, %v", data, err)
	}
	// undici 7's shape: the literal in a const, decoded by a getter.
	good7 := write("good7.js", "'use strict'\nconst { Buffer } = require('node:buffer')\nconst wasmBase64 = 'AGFzbQEAAAA='\nlet wasmBuffer\nObject.defineProperty(module, 'exports', { get: () => wasmBuffer ? wasmBuffer : (wasmBuffer = Buffer.from(wasmBase64, 'base64')) })\n")
	if data, err := decodeAssetModule(good7); err != nil || !bytes.Equal(data, []byte("\x00asm\x01\x00\x00\x00")) {
		t.Fatalf("undici 7 module: %q, %v", data, err)
	}
	for name, src := range map[string]string{
		"none.js":   "module.exports = require('./other.wasm')\n",
		"two.js":    "module.exports = [Buffer.from('AA==', 'base64'), Buffer.from('AA==', 'base64')]\n",
		"hex.js":    "module.exports = Buffer.from('0061736d', 'hex')\n",
		"broken.js": "module.exports = Buffer.from('AGFzbQ=A', 'base64')\n",
		"unused.js": "const wasmBase64 = 'AGFzbQEAAAA='\nmodule.exports = null\n",
	} {
		if _, err := decodeAssetModule(write(name, src)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}
