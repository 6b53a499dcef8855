package js

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// zlibCorpus is deterministic input of three kinds: text with long
// matches, text with short ones and noise.
func zlibCorpus() map[string][]byte {
	rng := rand.New(rand.NewSource(7))
	var text, words bytes.Buffer
	for i := 0; text.Len() < 20000; i++ {
		text.WriteString("function f" + strings.Repeat("x", i%7) + "(a, b) { return a * " + string(rune('0'+i%10)) + "; }\n")
	}
	vocab := []string{"alpha ", "beta ", "gamma ", "delta ", "eps ", "zeta ", "eta\n"}
	for words.Len() < 20000 {
		words.WriteString(vocab[rng.Intn(len(vocab))])
	}
	noise := make([]byte, 8000)
	rng.Read(noise)
	return map[string][]byte{"text": text.Bytes(), "words": words.Bytes(), "noise": noise}
}

// TestZlibSyncBytesAreZlibs checks that zlib's one-shot forms and its
// streams run one engine whose bytes are zlib's: deflateSync,
// deflateRawSync and gzipSync over a corpus and a grid of level,
// strategy, windowBits and memLevel equal the bytes of the host's
// CPython zlib module (the reference C zlib) with the same parameters
// (level 0: the host node's, see below),
// and a stream's output equals the one-shot form's.
func TestZlibSyncBytesAreZlibs(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("the test needs python3 on the host (its zlib module is the reference)")
	}
	dir := t.TempDir()
	v := newVM(t, nil)
	var names []string
	for name, data := range zlibCorpus() {
		names = append(names, name)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		v.writeFile("/workspace/"+name, string(data))
	}
	list := `["` + strings.Join(names, `","`) + `"]`
	const grid = `levels = [-1, 0, 1, 4, 6, 9]; strategies = [0, 1, 2, 3, 4]; bits = [9, 15]; mems = [1, 9]`
	pyScript := `
import zlib, hashlib, sys
` + grid + `
for name in ` + list + `:
    data = open(name, 'rb').read()
    for op, off in (('deflate', 0), ('deflateRaw', -1), ('gzip', 16)):
        for level in levels:
            for strategy in strategies:
                for wb in bits:
                    for mem in mems:
                        c = zlib.compressobj(level, zlib.DEFLATED, -wb if off < 0 else wb + off, mem, strategy)
                        out = c.compress(data) + c.flush()
                        print(name, op, level, strategy, wb, mem, hashlib.sha256(out).hexdigest())
`
	cmd := exec.Command(py, "-c", pyScript)
	cmd.Dir = dir
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	js := `
const zlib = require('zlib'), fs = require('fs'), crypto = require('crypto');
const ` + strings.ReplaceAll(grid, ";", "; const") + `;
const hex = (b) => crypto.createHash('sha256').update(b).digest('hex');
let streamed = 0;
for (const name of ` + list + `) {
  const data = fs.readFileSync(name);
  for (const op of ['deflate', 'deflateRaw', 'gzip']) for (const level of levels) for (const strategy of strategies)
    for (const windowBits of bits) for (const memLevel of mems) {
      const opts = { level, strategy, windowBits, memLevel };
      const out = zlib[op + 'Sync'](data, opts);
      console.log(name, op, level, strategy, windowBits, memLevel, hex(out));
      // The stream form, fed in one write, runs the same engine.
      if (level === 6 && memLevel === 9) {
        const s = zlib['create' + op[0].toUpperCase() + op.slice(1)](opts);
        const parts = [];
        s.on('data', (d) => parts.push(d));
        s.on('end', () => {
          if (!Buffer.concat(parts).equals(out)) console.error('stream differs', name, op, strategy, windowBits);
          if (++streamed === ` + "3 * 3 * 5 * 2" + `) console.error('streams ok');
        });
        s.end(data);
      }
    }
}
`
	// Stored blocks (level 0) are as long as the output buffer has room
	// for, so their bytes depend on the caller's buffer sizes: CPython's
	// differ from Node's 16 KiB chunks, and level 0 is checked against
	// the host's node instead (its stored blocks are zlib's own code).
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("the test needs node on the host")
	}
	if err := os.WriteFile(filepath.Join(dir, "probe.js"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	hcmd := exec.Command(hostNode, "probe.js")
	hcmd.Dir = dir
	hostOut, err := hcmd.Output()
	if err != nil {
		t.Fatalf("host node: %v", err)
	}
	pyLines, nodeLines := strings.Split(string(want), "\n"), strings.Split(string(hostOut), "\n")
	if len(pyLines) != len(nodeLines) {
		t.Fatalf("python3 printed %d lines, host node %d", len(pyLines), len(nodeLines))
	}
	for i, l := range pyLines {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "0" {
			pyLines[i] = nodeLines[i]
		}
	}
	want = []byte(strings.Join(pyLines, "\n"))
	r := v.node(js)
	if r.code != 0 || r.stdout != string(want) {
		t.Fatalf("exit %d\n%s\nstderr %s", r.code, diffLines(r.stdout, string(want)), trunc(r.stderr))
	}
	if strings.TrimSpace(r.stderr) != "streams ok" {
		t.Fatalf("stream forms: %s", trunc(r.stderr))
	}
}

// diffLines shows the first lines where got and want differ.
func diffLines(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var out []string
	for i := 0; i < max(len(g), len(w)) && len(out) < 6; i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			out = append(out, "got  "+a, "want "+b)
		}
	}
	return strings.Join(out, "\n")
}

// TestBrotliStreamsCodeAsTheyGo checks that a Brotli stream codes each
// write when it comes (its output appears before the stream ends), hands
// a decompression bomb's output out in bounded pieces, refuses coders
// past the per-process bound and frees a coder when its stream is
// destroyed.
func TestBrotliStreamsCodeAsTheyGo(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const zlib = require('zlib'), crypto = require('crypto'), assert = require('assert');
const big = crypto.randomBytes(200000);
const packed = zlib.brotliCompressSync(big);
// Decompression: each write's output comes before the end.
const dec = zlib.createBrotliDecompress();
let got = 0, early = false;
dec.on('data', (d) => { got += d.length; });
dec.write(packed.subarray(0, packed.length >> 1), () => {
  early = got > 0;
  dec.end(packed.subarray(packed.length >> 1));
});
dec.on('end', () => {
  assert.strictEqual(got, big.length);
  console.log('decode early', early);
  // Compression: a flush emits what was written so far.
  const enc = zlib.createBrotliCompress();
  const parts = [];
  enc.on('data', (d) => parts.push(d));
  enc.write(big.subarray(0, 50000));
  enc.flush(() => {
    console.log('encode early', parts.length > 0);
    enc.end(big.subarray(50000));
  });
  enc.on('end', () => {
    assert.deepStrictEqual(zlib.brotliDecompressSync(Buffer.concat(parts)), big);
    // A bomb: 64 MiB of zeros from a few bytes, in pieces of at most 1 MiB.
    const bomb = zlib.brotliCompressSync(Buffer.alloc(64 << 20), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } });
    const b = zlib.createBrotliDecompress();
    let pieces = 0, largest = 0, total = 0;
    b.on('data', (d) => { pieces++; total += d.length; largest = Math.max(largest, d.length); });
    b.on('end', () => {
      console.log('bomb', total, pieces >= 64, largest <= 1 << 20);
      // Live coders are bounded; destroying a stream frees its coder.
      const live = [];
      const refused = [];
      for (let i = 0; i < 20; i++) {
        const s = zlib.createBrotliCompress();
        s.on('error', (e) => refused.push(e.code));
        s.write('x');
        live.push(s);
      }
      setImmediate(() => {
        console.log('refused', refused.length, refused[0]);
        for (const s of live) s.destroy();
        const again = zlib.createBrotliCompress();
        const out = [];
        again.on('data', (d) => out.push(d));
        again.on('end', () => console.log('after free', zlib.brotliDecompressSync(Buffer.concat(out)).toString()));
        again.end('ok');
      });
    });
    b.end(bomb);
  });
});
`)
	want := "decode early true\nencode early true\nbomb 67108864 true true\nrefused 4 ERR_ZLIB_INITIALIZATION_FAILED\nafter free ok\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", r.code, r.stdout, want, trunc(r.stderr))
	}
}
