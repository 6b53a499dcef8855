// execFile's encodings (an unknown one gives Buffers), a caller's own
// setEncoding, and maxBuffer keeping what fits.
const { execFile } = require('child_process');

// exec runs the same code through /bin/sh, which the test VM lacks.
const node = (script, options, cb) => execFile(process.execPath, ['-e', script], options, cb);

const cases = [{}, { encoding: 'utf8' }, { encoding: 'hex' }, { encoding: undefined }, { encoding: 'buffer' }, { encoding: 'invalid' }];
const run = (i) => {
  if (i === cases.length) {
    node("process.stdout.write('0123456789')", { maxBuffer: 4 }, (err, stdout) => {
      console.log('maxBuffer', err && err.code, JSON.stringify(stdout));
      const d = node("process.stdout.write('abc')", { encoding: 'buffer' }, (e, so) => console.log('setEncoding by caller', typeof so, so));
      d.stdout.setEncoding('utf8');
    });
    return;
  }
  node("process.stdout.write('foo'); process.stderr.write('bar')", cases[i], (err, stdout, stderr) => {
    const show = (v) => (Buffer.isBuffer(v) ? `Buffer(${v.toString()})` : `${typeof v}(${v})`);
    console.log(JSON.stringify(cases[i]), err, show(stdout), show(stderr));
    run(i + 1);
  });
};
run(0);
