const fs = require('fs');
const path = require('path');
const os = require('os');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probe-'));
const rel = (p) => path.relative(dir, p);
fs.writeFileSync(path.join(dir, 'a.txt'), 'hello\n');
fs.appendFileSync(path.join(dir, 'a.txt'), Buffer.from([0xff, 0x00, 0x41]));
console.log(fs.readFileSync(path.join(dir, 'a.txt')));
fs.mkdirSync(path.join(dir, 'x/y/z'), { recursive: true });
fs.writeFileSync(path.join(dir, 'x/y/f'), '1');
console.log(fs.readdirSync(dir), fs.readdirSync(dir, { recursive: true }).sort());
console.log(fs.readdirSync(dir, { withFileTypes: true }).map((d) => [d.name, d.isFile(), d.isDirectory()]));
const st = fs.statSync(path.join(dir, 'a.txt'));
console.log(st.size, st.isFile(), st.isDirectory(), typeof st.mtimeMs, st.mtime instanceof Date, (st.mode & 0o777).toString(8));
for (const f of [() => fs.readFileSync(path.join(dir, 'nope')), () => fs.mkdirSync(dir), () => fs.rmdirSync(path.join(dir, 'x')),
  () => fs.readdirSync(path.join(dir, 'a.txt')), () => fs.unlinkSync(path.join(dir, 'x')), () => fs.renameSync(path.join(dir, 'nope'), path.join(dir, 'b'))]) {
  try { f(); } catch (e) { console.log(e.code, e.syscall, e.errno, e.message.replaceAll(dir, '<dir>')); }
}
fs.renameSync(path.join(dir, 'a.txt'), path.join(dir, 'b.txt'));
fs.copyFileSync(path.join(dir, 'b.txt'), path.join(dir, 'c.txt'));
fs.symlinkSync('b.txt', path.join(dir, 'l'));
console.log(fs.readlinkSync(path.join(dir, 'l')), fs.lstatSync(path.join(dir, 'l')).isSymbolicLink(), rel(fs.realpathSync(path.join(dir, 'l'))));
console.log(fs.existsSync(path.join(dir, 'c.txt')), fs.existsSync(path.join(dir, 'q')));
const fd = fs.openSync(path.join(dir, 'c.txt'), 'r+');
const buf = Buffer.alloc(4);
console.log(fs.readSync(fd, buf, 0, 4, 1), buf, fs.writeSync(fd, 'ZZ', 0), fs.fstatSync(fd).size);
fs.ftruncateSync(fd, 3);
fs.closeSync(fd);
console.log(fs.readFileSync(path.join(dir, 'c.txt'), 'latin1'));
fs.rmSync(dir, { recursive: true, force: true });
console.log(fs.existsSync(dir));
fs.promises.readFile('/nonexistent-probe').catch((e) => console.log('promise', e.code));
{
  // util.promisify(fs.read) resolves to { bytesRead, buffer }.
  const fsm = require('fs');
  fsm.writeFileSync('promisified-read.txt', 'abcdef');
  const fd = fsm.openSync('promisified-read.txt', 'r');
  require('util').promisify(fsm.read)(fd, Buffer.alloc(4), 0, 4, 1).then(({ bytesRead, buffer }) => {
    console.log('promisified read', bytesRead, buffer.toString());
    fsm.closeSync(fd);
  });
}
