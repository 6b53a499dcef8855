package security_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

// A fork bomb from the shell meets the process limit and the CPU limit;
// when the command ends, its whole process group is gone.
func TestShellForkBomb(t *testing.T) {
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Limits: secexec.Limits{Processes: 32, CPUTime: 3 * time.Second}})
	r := run(t, vm, []string{"sh", "-c", `f() { f | f & }; f; sleep 2; echo survived`}, &secexec.ExecOptions{Timeout: 20 * time.Second})
	if r.Outcome == secexec.TimedOut {
		t.Errorf("fork bomb ran into the wall-clock backstop: %q", trunc(r.Stderr))
	}
	usable(t, vm)
}

// Output floods are cut at MaxOutput (Result.Truncated) and ended by the
// CPU limit; the host keeps at most MaxOutput bytes of each stream.
func TestOutputFlood(t *testing.T) {
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Limits: secexec.Limits{CPUTime: 500 * time.Millisecond}})
	for _, argv := range [][]string{
		{"yes"},
		{"sh", "-c", "yes | cat"},
		{"node", "-e", `const b = Buffer.alloc(1 << 16, 120); for (;;) { process.stdout.write(b); process.stderr.write(b) }`},
		{"cat", "/dev/zero"},
	} {
		start := time.Now()
		r := run(t, vm, argv, &secexec.ExecOptions{MaxOutput: 1 << 20})
		t.Logf("%q: %v", argv, time.Since(start))
		// The limit's message comes after the kept bytes.
		if r.ExitCode != 124 || !r.Truncated || len(r.Stdout) != 1<<20 || len(r.Stderr) > 1<<20+100 {
			t.Errorf("%q: exit %d truncated %v, %d bytes out, %d err", argv, r.ExitCode, r.Truncated, len(r.Stdout), len(r.Stderr))
		}
	}
	usable(t, vm)
}

// Exhausting descriptors, pipes, inodes and bytes fails the one operation
// with Linux's errno, and the VM is usable again once the guest lets go.
func TestKernelExhaustion(t *testing.T) {
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Limits: secexec.Limits{
		FDsPerProcess: 10000, FDsPerVM: 10000, FSInodes: 2000, FSBytes: 8 << 20, Pipes: 64, CPUTime: 20 * time.Second}})
	runAttacks(t, vm, []attack{
		{"fds", `const fs = require('fs'); const a = []; try { for (;;) a.push(fs.openSync('/dev/null', 'r')) } catch (e) { console.log(e.code, a.length > 9000) }`, 0, "EMFILE true"},
		{"pipes", `const cp = require('child_process'); const a = []; try { for (let i = 0; i < 1000; i++) a.push(cp.spawn('sleep', ['30'], { stdio: 'pipe' })) } catch (e) { console.log(e.code) }
let code; Promise.all(a.map(c => new Promise(r => { c.once('spawn', r); c.once('error', e => { code = code || e.code; r() }) }))).then(() => { console.log(code); process.exit(0) })`, 0, "EAGAIN"},
		{"inodes", `const fs = require('fs'); let i = 0; try { for (;;) fs.mkdirSync('/tmp/d' + i++) } catch (e) { console.log(e.code, i > 1000) }`, 0, "ENOSPC true"},
		{"inodesAfter", `const fs = require('fs'); for (const d of fs.readdirSync('/tmp')) fs.rmSync('/tmp/' + d, { recursive: true }); fs.mkdirSync('/tmp/again'); console.log('again')`, 0, "again"},
	})
	r := sh(t, vm, `head -c 100000000 /dev/zero > /tmp/big; echo "status $?"; rm /tmp/big && head -c 1000 /dev/zero > /tmp/small && echo ok`)
	expect(t, r, 0, "ok")
	if !bytes.Contains(r.Stderr, []byte("No space left on device")) {
		t.Errorf("byte quota: stderr %q", r.Stderr)
	}
	usable(t, vm)
}

// bomb returns n zero bytes gzipped (about n/1000 bytes), as a plain .gz
// and as a tar.gz holding one file.
func bomb(t *testing.T, n int64) (gz, tgz []byte) {
	t.Helper()
	zeros := func(w io.Writer) {
		if _, err := io.CopyN(w, zeroReader{}, n); err != nil {
			t.Fatal(err)
		}
	}
	var a bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&a, gzip.BestCompression)
	zeros(zw)
	_ = zw.Close()
	var b bytes.Buffer
	zw, _ = gzip.NewWriterLevel(&b, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Mode: 0o644, Size: n, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	zeros(tw)
	_ = tw.Close()
	_ = zw.Close()
	return a.Bytes(), b.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// Decompression bombs through gunzip, tar and node's zlib stay within the
// VM's byte quota (ENOSPC) and memory limit (RangeError for a one-shot
// inflate; a stream stays bounded).
func TestZipBombs(t *testing.T) {
	gz, tgz := bomb(t, 256<<20)
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Limits: secexec.Limits{FSBytes: 16 << 20, MemoryBytes: 64 << 20, CPUTime: 20 * time.Second}})
	ctx := context.Background()
	if err := vm.FS().WriteFile(ctx, "/tmp/bomb.gz", gz, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := vm.FS().WriteFile(ctx, "/tmp/bomb.tgz", tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, cmd string }{
		{"gunzip", `gunzip -k /tmp/bomb.gz; echo "status $?"`},
		{"tar", `mkdir -p /tmp/x && tar -xzf /tmp/bomb.tgz -C /tmp/x; echo "status $?"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sh(t, vm, c.cmd)
			if bytes.Contains(r.Stdout, []byte("status 0")) {
				t.Errorf("a 256 MiB bomb unpacked under a 16 MiB quota: %q %q", r.Stdout, trunc(r.Stderr))
			}
			expect(t, r, 0, "No space left on device")
			_ = sh(t, vm, "rm -rf /tmp/bomb /tmp/x")
			usable(t, vm)
		})
	}
	runAttacks(t, vm, []attack{
		{"zlibSync", `try { require('zlib').gunzipSync(require('fs').readFileSync('/tmp/bomb.gz')); console.log('inflated') } catch (e) { console.log(e.name || e.code) }`, 0, "RangeError"},
		// The zlib stream inflates chunk by chunk (pako), so all 256 MiB
		// stream through a 64 MiB memory limit and nothing piles up.
		{"zlibStream", `const z = require('zlib').createGunzip(); let n = 0; z.on('data', d => { n += d.length }); z.on('end', () => console.log('streamed', n === 256 << 20)); require('fs').createReadStream('/tmp/bomb.gz').pipe(z)`, 0, "streamed true"},
	})
}

// Catastrophic regular expressions in the WebAssembly grep and sed are
// bounded: grep's engine is linear (RE2), sed's backtracking stops at the
// CPU limit with exit 124.
func TestRegexBacktracking(t *testing.T) {
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Limits: secexec.Limits{CPUTime: 2 * time.Second}})
	in := bytes.Repeat([]byte("a"), 40)
	in = append(in, "!\n"...)
	r := run(t, vm, []string{"grep", "-cE", "^(a+)+$"}, &secexec.ExecOptions{Stdin: bytes.NewReader(in)})
	expect(t, r, 1, "0")
	// sed's engine gives up past its backtracking budget (exit 2) if the
	// CPU limit does not end it first (124).
	r = run(t, vm, []string{"sed", "-E", `s/^(a|aa)+(b|\1)$/x/`}, &secexec.ExecOptions{Stdin: bytes.NewReader(in)})
	if r.ExitCode != 2 && r.ExitCode != 124 {
		t.Errorf("sed: exit %d %q", r.ExitCode, trunc(r.Stderr))
	}
	usable(t, vm)
}
