// fs.watch, fs.promises.watch and fs.watchFile: event types and names as
// Linux (inotify) reports them. Every step waits for an event, never for
// time.
const fs = require('fs');
const out = [];
const log = (s) => out.push(s);

function step1(next) {
  fs.mkdirSync('wd/sub', { recursive: true });
  fs.writeFileSync('wd/f', 'x');
  const w = fs.watch('wd', (e, f) => {
    log('dir ' + e + ' ' + f);
    if (f === 'zz-end') { w.close(); w2.close(); w3.close(); }
  });
  const w2 = fs.watch('wd/f', (e, f) => log('file ' + e + ' ' + f));
  const w3 = fs.watch('wd', { encoding: 'buffer' }, (e, f) => { if (e === 'rename') log('buf ' + Buffer.isBuffer(f) + ' ' + f.toString('hex')); });
  let closed = 0;
  for (const x of [w, w2, w3]) x.on('close', () => { if (++closed === 3) { log('closed'); next(); } });
  fs.writeFileSync('wd/f', 'y');
  fs.appendFileSync('wd/f', 'z');
  fs.chmodSync('wd/f', 0o600);
  fs.writeFileSync('wd/g', '1');
  fs.renameSync('wd/g', 'wd/h');
  fs.mkdirSync('wd/e');
  fs.chmodSync('wd/e', 0o700);
  fs.rmdirSync('wd/e');
  fs.writeFileSync('wd/sub/deep', 'not reported');
  fs.symlinkSync('h', 'wd/l');
  fs.unlinkSync('wd/h');
  fs.unlinkSync('wd/f');
  fs.writeFileSync('wd/zz-end', '');
}

function step2(next) {
  try { fs.watch('nope'); } catch (e) { log([e.message, e.code, e.errno, e.syscall, e.path, e.filename].join(' | ')); }
  try { fs.watch('wd', { persistent: 'yes' }); } catch (e) { log(e.code + ' ' + e.message); }
  try { fs.watchFile('wd'); } catch (e) { log(e.code + ' ' + e.message); }
  const w = fs.watch('wd', { persistent: false });
  log('watcher ' + typeof w.ref + ' ' + typeof w.unref + ' ' + (w.ref() === w) + ' ' + (w.unref() === w));
  w.close();
  w.close();
  next();
}

async function step3(next) {
  const ac = new AbortController();
  fs.mkdirSync('pd');
  setImmediate(() => fs.writeFileSync('pd/a', '1'));
  try {
    for await (const ev of fs.promises.watch('pd', { signal: ac.signal })) {
      log('p ' + JSON.stringify(ev) + ' ' + (Object.getPrototypeOf(ev) === null));
      if (ev.eventType === 'change') ac.abort();
    }
  } catch (e) {
    log('p ' + e.name + ' ' + e.code + ' ' + e.message);
  }
  try {
    for await (const ev of fs.promises.watch('pd', { signal: AbortSignal.abort() })) log('never ' + ev);
  } catch (e) {
    log('p2 ' + e.name + ' ' + e.code);
  }
  next();
}

function step4(next) {
  // Each change is made after the previous one was seen.
  const steps = [
    () => fs.writeFileSync('wf', 'abc'),
    () => fs.appendFileSync('wf', 'de'),
    () => fs.unlinkSync('wf'),
    () => fs.writeFileSync('wf', 'q'),
  ];
  const listener = (c, p) => {
    log(['wf', c.size, p.size, c.mtimeMs > 0, p.mtimeMs > 0, c.nlink, p.nlink, c.isFile(), p.isFile()].join(' '));
    const s = steps.shift();
    if (s) s();
    else { fs.unwatchFile('wf', listener); next(); }
  };
  const sw = fs.watchFile('wf', { interval: 5 }, listener);
  log('statwatcher ' + (sw instanceof require('events')) + ' ' + typeof sw.ref);
}

step1(() => step2(() => step3(() => step4(() => {
  process.on('exit', () => console.log(out.join('\n')));
}))));
