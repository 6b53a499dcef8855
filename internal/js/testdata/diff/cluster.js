// cluster: the primary's and workers' lifecycle as Node reports it —
// events and their order, worker ids, exit codes and signals, messages
// both ways, settings, disconnects, and a port shared by two workers.
// Workers speak only through messages (their stdout is the primary's
// too, and two processes' writes interleave), so the output is
// deterministic.
const cluster = require('cluster');
const http = require('http');

if (cluster.isWorker) {
  const w = cluster.worker;
  const role = process.env.ROLE;
  const hello = { id: w.id, state: w.state, unique: process.env.NODE_UNIQUE_ID, isPrimary: cluster.isPrimary, isMaster: cluster.isMaster, argv: process.argv.slice(2), connected: w.isConnected(), dead: w.isDead() };
  if (role === 'talk') {
    process.send(hello);
    process.on('message', (m) => {
      if (m === 'bye') { w.disconnect(); return; }
      w.send({ echo: m });
    });
  } else if (role === 'exit') {
    process.exit(+process.env.CODE);
  } else if (role === 'throw') {
    throw new Error('worker failed');
  } else if (role === 'wait') {
    process.send('waiting');
  } else if (role === 'silent') {
    console.log('to the pipe');
    process.send('said');
  } else if (role === 'serve') {
    const server = http.createServer((req, res) => res.end(String(w.id)));
    server.listen(0, () => process.send({ port: server.address().port }));
    process.on('message', (m) => { if (m === 'close') server.close(() => process.send('closed')); });
  } else if (role === 'destroy') {
    process.send('destroying');
    w.destroy();
  }
  return;
}

const out = [];
// Two workers at once race each other: their lines are sorted.
let racing = null;
const log = (...a) => (racing || out).push(a.join(' '));
log('primary', cluster.isPrimary, cluster.isMaster, cluster.isWorker, cluster.worker, cluster.schedulingPolicy === cluster.SCHED_RR, JSON.stringify(cluster.settings), typeof cluster.Worker);
for (const ev of ['fork', 'online', 'listening', 'disconnect', 'exit', 'message', 'setup']) {
  cluster.on(ev, (w, a, b) => {
    if (ev === 'setup') { log('  cluster setup', JSON.stringify(w.args), w.exec === __filename, w.silent); return; }
    let extra = '';
    if (ev === 'exit') extra = ` ${a} ${b} after-disconnect=${w.exitedAfterDisconnect} in-list=${w.id in cluster.workers}`;
    if (ev === 'message') extra = ' ' + JSON.stringify(a, (k, v) => (k === 'port' ? typeof v : v));
    if (ev === 'listening') extra = ` ${a.addressType} ${a.address} ${typeof a.port}`;
    log(`  cluster ${ev} #${w.id} ${w.state}${extra}`);
  });
}

function fork(env, fn) {
  const w = cluster.fork(env);
  log(`forked #${w.id} pid ${w.process.pid > 0} state ${w.state} connected ${w.isConnected()}`);
  for (const ev of ['online', 'disconnect']) w.on(ev, () => log(`  worker ${ev} #${w.id}`));
  w.on('exit', (code, sig) => log(`  worker exit #${w.id} ${code} ${sig} dead=${w.isDead()} connected=${w.isConnected()}`));
  fn(w);
  return w;
}

const steps = [
  (next) => fork({ ROLE: 'talk' }, (w) => {
    w.on('message', (m) => {
      if (m.id !== undefined) { w.send('ping', () => log('  sent ping')); return; }
      log('  reply', JSON.stringify(m));
      w.send('bye');
    });
    w.on('exit', () => next());
  }),
  (next) => fork({ ROLE: 'exit', CODE: '3' }, (w) => w.on('exit', () => next())),
  (next) => fork({ ROLE: 'wait' }, (w) => {
    w.on('message', () => log('  kill returns', w.kill()));
    w.on('exit', () => next());
  }),
  (next) => fork({ ROLE: 'wait' }, (w) => {
    w.on('message', () => w.process.kill('SIGKILL'));
    w.on('exit', () => next());
  }),
  (next) => fork({ ROLE: 'wait' }, (w) => {
    w.on('message', () => w.disconnect());
    w.on('exit', () => next());
  }),
  (next) => fork({ ROLE: 'destroy' }, (w) => w.on('exit', () => next())),
  (next) => {
    cluster.setupPrimary({ args: ['x', 'y'], silent: true });
    log('settings', JSON.stringify(cluster.settings.args), cluster.settings.silent);
    fork({ ROLE: 'silent' }, (w) => {
      let text = '';
      // The pipe's end races the exit: the text is shown after both.
      let left = 2;
      const both = () => {
        if (--left > 0) return;
        log('  piped', JSON.stringify(text));
        cluster.setupPrimary({ args: [], silent: false });
        next();
      };
      w.process.stdout.on('data', (d) => { text += d; });
      w.process.stdout.on('end', both);
      w.on('message', () => w.disconnect());
      w.on('exit', both);
    });
  },
  (next) => {
    const ports = [];
    const answers = new Set();
    const ws = [];
    const ask = (n) => {
      if (n === 0) {
        log('  answers from', [...answers].sort().join(','));
        for (const w of ws) w.send('close');
        return;
      }
      http.get({ port: ports[0], agent: false }, (res) => {
        let b = '';
        res.on('data', (d) => { b += d; });
        res.on('end', () => { answers.add(b); ask(n - 1); });
      });
    };
    let closed = 0;
    racing = [];
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      out.push(...racing.sort());
      racing = null;
      next();
    };
    let exits = 0;
    const onExit = () => {
      if (++exits < 2) return;
      cluster.off('exit', onExit);
      setImmediate(done);
    };
    cluster.on('exit', onExit);
    for (let i = 0; i < 2; i++) {
      ws.push(fork({ ROLE: 'serve' }, (w) => {
        w.on('message', (m) => {
          if (m === 'closed') {
            if (++closed === 2) {
              // The callback comes when the first worker is gone: the
              // step ends with both exits.
              cluster.disconnect(() => log('  disconnected all', Object.keys(cluster.workers).length));
            }
            return;
          }
          ports.push(m.port);
          if (ports.length === 2) {
            log('  same port', ports[0] === ports[1]);
            ask(6);
          }
        });
      }));
    }
  },
  (next) => fork({ ROLE: 'throw' }, (w) => w.on('exit', () => next())),
];

function run(i) {
  if (i === steps.length) {
    setImmediate(() => console.log(out.join('\n')));
    return;
  }
  log(`-- step ${i}`);
  steps[i](() => setImmediate(() => run(i + 1)));
}
run(0);
