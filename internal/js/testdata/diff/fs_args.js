// fs argument checks: which error, with which code and message, and
// whether the callback form throws at the call or calls back; the
// number of arguments callbacks get; ReadStream/WriteStream events.
const fs = require('fs');
const path = require('path');
const os = require('os');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsargs-'));
const file = path.join(dir, 'f.txt');
fs.writeFileSync(file, 'hello world');
const fd = fs.openSync(file, 'r+');

function show(label, f) {
  try {
    f();
    console.log(label, 'ok');
  } catch (e) {
    console.log(label, e.name, e.code, e.message.replace(/\0/g, '\\0'));
  }
}

const bad = [false, null, undefined, {}, [], '', 1.5, -1, 2 ** 32, NaN, Infinity, '123x', 'x\u0000y'];
for (const v of bad) {
  const s = typeof v === 'string' ? JSON.stringify(v) : String(v);
  show(`fchmodSync(fd, ${s})`, () => fs.fchmodSync(fd, v));
  // (Node 20 cuts this message at the NUL.)
  if (v !== 'x\u0000y') show(`fchmod(${s}, 0o666, cb)`, () => fs.fchmod(v, 0o666, () => {}));
  show(`fchown(1, ${s})`, () => fs.fchown(1, v));
  show(`chmod(file, ${s})`, () => fs.chmod(file, v));
  show(`ftruncate(fd, ${s})`, () => fs.ftruncate(fd, v));
  if (typeof v !== 'string' || v === '' || v.includes('\u0000')) show(`mkdirSync(${s})`, () => fs.mkdirSync(v));
  show(`readSync(fd, buf, ${s})`, () => fs.readSync(fd, Buffer.alloc(4), v, 1, 0));
  show(`readSync position ${s}`, () => fs.readSync(fd, Buffer.alloc(4), 0, 1, v));
  show(`writeSync(fd, ${s})`, () => fs.writeSync(fd, v));
  show(`utimesSync atime ${s}`, () => fs.utimesSync(file, v, 0));
  show(`readFile(file, ${s})`, () => fs.readFile(file, v, () => {}));
  show(`mkdir recursive ${s}`, () => fs.rmSync(fs.mkdirSync(path.join(dir, 'm'), { recursive: v }) ?? path.join(dir, 'm'), { recursive: true, force: true }));
  show(`createReadStream start ${s}`, () => fs.createReadStream(file, { start: v }).destroy());
}
show('readSync length too big', () => fs.readSync(fd, Buffer.alloc(4), 0, 5, 0));
show('read empty buffer', () => fs.readSync(fd, Buffer.alloc(0), 0, 1, 0));
show('stream start > end', () => fs.createReadStream(file, { start: 5, end: 2 }));
show('stream fs.open not a function', () => fs.createWriteStream(file, { fs: { open: 1 } }));
show('appendFileSync bad data', () => fs.appendFileSync(path.join(dir, 'never'), 42));
show('bad data made no file', () => fs.existsSync(path.join(dir, 'never')));
show('writeSync offset false', () => fs.writeSync(fd, Buffer.alloc(2), { offset: false }));
show('mkdtemp bad encoding', () => fs.mkdtemp(path.join(dir, 'x'), 'nope', () => {}));
// (Node may have created the file by then; secexec has not begun.)
let abortedWith;
let readBeforeClose;
process.on('exit', () => console.log('aborted writeFile', abortedWith, 'read() before close()', readBeforeClose));
{
  const ac = new AbortController();
  fs.writeFile(path.join(dir, 'aborted'), 'x', { signal: ac.signal }, (err) => {
    abortedWith = err.name;
  });
  ac.abort();
}
show('symlink bad type', () => fs.symlinkSync('a', 'b', 'pear'));
show('opendir without callback', () => fs.opendir(dir));
show('opendir bufferSize 0', () => fs.opendirSync(dir, { bufferSize: 0 }));
{
  const d = fs.opendirSync(dir);
  const first = d.read();
  show('readSync during read()', () => d.readSync());
  d.close().then(() => first.then((e) => { readBeforeClose = e !== null; }));
  show('new Dir()', () => new fs.Dir());
}
show('close without callback', () => fs.close(fd, 'nope'));

// One after the other: node's thread pool may finish calls made together
// in any order, and did under load.
fs.close(fs.openSync(file, 'r'), (...args) => {
  console.log('close callback args', args.length, args[0]);
  fs.chmod(file, 0o644, (...args) => {
    console.log('chmod callback args', args.length);
    fs.stat(path.join(dir, 'nope'), (err) => {
      console.log('stat error to callback', err.code);
      fs.read(fd, (err, n, buf) => {
        console.log('read(fd, cb)', err, n, buf.length);
        fs.read(fd, Buffer.alloc(5), { position: 6 }, (err, n, buf) => {
          console.log('read(fd, buf, opts, cb)', err, n, buf.toString());
          streams();
        });
      });
    });
  });
});

// Events of the file streams, in order, once the calls above are done.
function streams() {
  const events = [];
  const rs = fs.createReadStream(file, { start: 6 });
  for (const ev of ['open', 'ready', 'data', 'end', 'close']) rs.on(ev, (x) => events.push(ev === 'data' ? `data:${x}` : ev));
  rs.on('close', () => {
    console.log('read stream', events.join(' '), rs.bytesRead, rs.pending);
    const out = path.join(dir, 'out.txt');
    const ws = fs.createWriteStream(out);
    ws.on('open', () => {
      ws.write('hello');
      process.nextTick(() => { ws.write('world'); ws.end(); });
    });
    ws.on('close', () => {
      console.log('write stream', fs.readFileSync(out, 'utf8'), ws.bytesWritten, ws.pending);
      // An old-style subclass calls the constructor as a function.
      function Old(...args) { fs.ReadStream.call(this, ...args); }
      Object.setPrototypeOf(Old.prototype, fs.ReadStream.prototype);
      Object.setPrototypeOf(Old, fs.ReadStream);
      const o = new Old(file);
      o.on('data', (d) => console.log('subclass read', String(d)));
      o.on('close', () => {
        fs.closeSync(fd);
        fs.rmSync(dir, { recursive: true });
      });
    });
  });
}
