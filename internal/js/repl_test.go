package js

import (
	"strings"
	"testing"
	"time"
)

// A guest cannot use the REPL's ^C to outlive its CPU time limit: a
// child keeps sending SIGINT while the REPL runs busy loop after busy
// loop, and each SIGINT cancels only its own termination, never the
// limit's.
func TestREPLInterruptCannotCancelTheTimeLimit(t *testing.T) {
	e := newEngine(t, Config{TimeLimit: 500 * time.Millisecond})
	v := newVM(t, e)
	r := v.node(`
const { PassThrough } = require('stream');
const input = new PassThrough(), output = new PassThrough();
output.resume();
require('repl').start({ input, output, terminal: false });
const cp = require('child_process').spawn(process.execPath,
  ['-e', 'setInterval(() => { try { process.kill(' + process.pid + ', "SIGINT") } catch {} }, 1)'], { stdio: 'ignore' });
cp.on('spawn', () => input.write('while (true) {}\n'.repeat(100000)));
`)
	if r.code != 124 || !strings.Contains(r.stderr, "CPU time limit exceeded") {
		t.Fatalf("code %d, stderr %q", r.code, trunc(r.stderr))
	}
}

// SIGINT from another process stops each busy evaluation of a REPL on
// plain streams, and the REPL goes on to the next entry.
func TestREPLInterruptBySignal(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const { PassThrough } = require('stream');
const input = new PassThrough(), output = new PassThrough();
output.pipe(process.stdout);
require('repl').start({ input, output, terminal: false, prompt: '' });
const cp = require('child_process').spawn(process.execPath,
  ['-e', 'setInterval(() => { try { process.kill(' + process.pid + ', "SIGINT") } catch {} }, 5)'], { stdio: 'ignore' });
cp.on('spawn', () => input.write('while (true) {}\nwhile (true) {}\n6 * 7\nprocess.exit(7)\n'));
`)
	const stopped = "Uncaught Error: Script execution was interrupted by `SIGINT`\n"
	if r.code != 7 || r.stdout != stopped+stopped+"42\n" {
		t.Fatalf("code %d, stdout %q, stderr %q", r.code, r.stdout, trunc(r.stderr))
	}
}
