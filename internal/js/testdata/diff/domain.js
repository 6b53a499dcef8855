'use strict';
// domain: membership, run/bind/intercept, enter/exit and the stack, and
// where errors from emitters, timers, ticks and promise reactions go.
const domain = require('domain');
const EventEmitter = require('events');

const log = (...a) => console.log(...a);
const isNone = (v) => v === null || v === undefined;
log('before', isNone(process.domain), typeof domain.create, domain.createDomain === domain.create);
log('usingDomains', EventEmitter.usingDomains);

const steps = [];
function next() { const s = steps.shift(); if (s) s(); }

// run: process.domain inside and after; return value and arguments.
steps.push(() => {
  const d = domain.create();
  const r = d.run((a, b) => { log('run inside', process.domain === d, domain.active === d, a + b); return 'ret'; }, 2, 3);
  log('run result', r, isNone(process.domain), domain._stack.length);
  next();
});

// enter/exit: the stack, exiting an outer domain pops inner ones.
steps.push(() => {
  const a = domain.create(), b = domain.create(), c = domain.create();
  a.enter(); b.enter(); c.enter();
  log('stack', domain._stack.length, process.domain === c);
  b.exit();
  log('after b.exit', domain._stack.length, process.domain === a);
  c.exit();
  log('c not on stack', domain._stack.length);
  a.exit();
  log('empty', domain._stack.length, isNone(process.domain));
  next();
});

// An emitter made in a domain belongs to it; its unhandled 'error' goes there.
steps.push(() => {
  const d = domain.create();
  let e;
  d.on('error', (er) => {
    log('ee error', er.message, er.domain === d, er.domainEmitter === e, er.domainThrown, 'bound' in er);
    next();
  });
  d.run(() => { e = new EventEmitter(); });
  log('implicit member', e.domain === d, d.members.length);
  e.emit('error', new Error('emitted'));
});

// add/remove: explicit membership moves an emitter between domains.
steps.push(() => {
  const d1 = domain.create(), d2 = domain.create();
  const e = new EventEmitter();
  d1.add(e);
  log('add', e.domain === d1, d1.members.length);
  d2.add(e);
  log('moved', e.domain === d2, d1.members.length, d2.members.length);
  d2.remove(e);
  log('removed', e.domain, d2.members.length);
  d1.on('error', () => log('unexpected'));
  e.on('error', (er) => { log('own listener wins', er.message); next(); });
  d1.add(e);
  e.emit('error', new Error('listened'));
});

// A listener runs inside its emitter's domain.
steps.push(() => {
  const d = domain.create();
  const e = new EventEmitter();
  d.add(e);
  e.on('x', () => log('listener domain', process.domain === d));
  e.emit('x');
  log('after emit', isNone(process.domain));
  next();
});

// bind and intercept.
steps.push(() => {
  const d = domain.create();
  d.on('error', (er) => {
    log('intercepted error', er.message, er.domainThrown, er.domainBound === cb, er.domain === d);
    next();
  });
  const bound = d.bind(function (x) { log('bound', process.domain === d, x, this && this.tag); return x * 2; });
  log('bound ret', bound.call({ tag: 't' }, 21), bound.domain === d);
  function cb(a, b) { log('intercept args', a, b, process.domain === d); }
  const icb = d.intercept(cb);
  icb(null, 'a', 'b');
  icb(new Error('first arg'));
});

// A throw in a timer, a tick and a setImmediate made in a domain goes to it.
for (const [name, schedule] of [['setTimeout', (f) => setTimeout(f, 1)], ['nextTick', (f) => process.nextTick(f)], ['setImmediate', (f) => setImmediate(f)]]) {
  steps.push(() => {
    const d = domain.create();
    d.on('error', (er) => {
      log(name, 'caught', er.message, er.domainThrown, er.domain === d, isNone(process.domain), domain._stack.length);
      setImmediate(next);
    });
    d.run(() => schedule(() => {
      log(name, 'runs in domain', process.domain === d);
      throw new Error(`from ${name}`);
    }));
  });
}

// A synchronous throw inside run() reaches the domain as an uncaught exception.
steps.push(() => {
  const d = domain.create();
  d.on('error', (er) => { log('sync throw caught', er.message, er.domainThrown); setImmediate(next); });
  setImmediate(() => d.run(() => { throw new Error('sync'); }));
});

// Promise reactions registered in a domain run in it; later then() in another domain.
steps.push(() => {
  const d1 = domain.create(), d2 = domain.create();
  let p;
  d1.run(() => { p = Promise.resolve(42); });
  d2.run(() => {
    p.then((v) => log('then in d2', v, process.domain === d2))
      .then(() => log('chained in d2', process.domain === d2))
      .finally(() => { log('finally in d2', process.domain === d2); setImmediate(next); });
  });
});

// Nested domains: the inner handler throws, the outer one takes the new error.
steps.push(() => {
  const outer = domain.create(), inner = domain.create();
  outer.on('error', (er) => { log('outer got', er.message); setImmediate(next); });
  inner.on('error', (er) => { log('inner got', er.message); throw new Error('rethrown'); });
  setImmediate(() => outer.run(() => inner.run(() => { throw new Error('deep'); })));
});

// A domain with no 'error' listener leaves the error to 'uncaughtException'.
steps.push(() => {
  const d = domain.create();
  process.once('uncaughtException', (er) => {
    log('uncaughtException', er.message, er.domain === d, er.domainThrown, domain._stack.length);
    setImmediate(next);
  });
  d.run(() => setTimeout(() => { throw new Error('no handler'); }, 1));
});

// A promise rejected inside a domain and never handled goes to the
// domain; one handled in time does not.
steps.push(() => {
  const d = domain.create();
  d.on('error', (er) => { log('rejection caught', er.message, er.domainThrown, domain._stack.length); setImmediate(next); });
  d.run(() => {
    Promise.reject(new Error('unhandled in d'));
    const handled = Promise.reject(new Error('handled'));
    handled.catch(() => log('caught in time'));
  });
});

// The capture callback belongs to the domain module once it is loaded.
steps.push(() => {
  try {
    process.setUncaughtExceptionCaptureCallback(() => {});
  } catch (e) {
    log('capture', e.code, e.name, e.message.split(',')[0], e.stack.includes('-'.repeat(40)));
  }
  log('done');
  next();
});

// A timer remembers only the domain it was made in: with the outer one
// not entered, an inner handler that throws has no domain to fall back on
// and the process ends with status 7, as when any uncaught-exception
// handler throws.
steps.push(() => {
  const outer = domain.create(), inner = domain.create();
  outer.on('error', () => log('unexpected outer'));
  inner.on('error', (er) => { log('inner got', er.message); throw new Error('rethrown again'); });
  outer.run(() => inner.run(() => setTimeout(() => { throw new Error('timer'); }, 1)));
});

next();
