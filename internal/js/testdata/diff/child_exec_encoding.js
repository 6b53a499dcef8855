// exec's encodings (an unknown one gives Buffers), a caller's own
// setEncoding, and maxBuffer keeping what fits.
const { exec } = require('child_process');

const cases = [{}, { encoding: 'utf8' }, { encoding: 'hex' }, { encoding: undefined }, { encoding: 'buffer' }, { encoding: 'invalid' }];
const run = (i) => {
  if (i === cases.length) {
    const c = exec('printf 0123456789', { maxBuffer: 4 }, (err, stdout) => {
      console.log('maxBuffer', err && err.code, JSON.stringify(stdout));
      const d = exec('printf abc', { encoding: 'buffer' }, (e, so) => console.log('setEncoding by caller', typeof so, so));
      d.stdout.setEncoding('utf8');
    });
    void c;
    return;
  }
  exec('printf foo; printf bar >&2', cases[i], (err, stdout, stderr) => {
    const show = (v) => (Buffer.isBuffer(v) ? `Buffer(${v.toString()})` : `${typeof v}(${v})`);
    console.log(JSON.stringify(cases[i]), err, show(stdout), show(stderr));
    run(i + 1);
  });
};
run(0);
