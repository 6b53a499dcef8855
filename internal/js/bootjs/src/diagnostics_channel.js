'use strict';
// diagnostics_channel: named pub/sub channels and tracing channels, with
// Node 22's behaviour: names are strings or symbols, a subscriber that
// throws does not stop the others (its error is rethrown in a later tick,
// as an uncaught exception), subscribing during a publish does not change
// that publish (the subscriber list is copied on write), and a channel is
// held only weakly while nobody subscribes to it or binds a store.
const { codedError } = require('./internal/errors.js');

const channels = new Map(); // name -> WeakRef<Channel>
const active = new Set(); // channels with subscribers or stores: held strongly

function validateFunction(v, name) {
  if (typeof v !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type function', v);
}

// rethrow reports err as uncaught in a later tick, so that one failing
// subscriber or store transform neither stops the rest nor the publisher.
function rethrow(err) {
  require('./process.js').process.nextTick(() => { throw err; });
}

class Channel {
  constructor(name) {
    this._subscribers = [];
    this._stores = new Map();
    this.name = name;
  }

  get hasSubscribers() { return this._subscribers.length > 0 || this._stores.size > 0; }

  _track() {
    if (this.hasSubscribers) active.add(this);
    else active.delete(this);
  }

  subscribe(subscription) {
    validateFunction(subscription, 'subscription');
    this._subscribers = [...this._subscribers, subscription];
    this._track();
  }

  unsubscribe(subscription) {
    const i = this._subscribers.indexOf(subscription);
    if (i === -1) return false;
    this._subscribers = [...this._subscribers.slice(0, i), ...this._subscribers.slice(i + 1)];
    this._track();
    return true;
  }

  bindStore(store, transform) {
    this._stores.set(store, transform);
    this._track();
  }

  unbindStore(store) {
    if (!this._stores.has(store)) return false;
    this._stores.delete(store);
    this._track();
    return true;
  }

  publish(data) {
    const subscribers = this._subscribers;
    for (let i = 0; i < subscribers.length; i++) {
      try {
        const onMessage = subscribers[i];
        onMessage(data, this.name);
      } catch (err) {
        rethrow(err);
      }
    }
  }

  runStores(data, fn, thisArg, ...args) {
    if (this._stores.size === 0) {
      this.publish(data);
      return Reflect.apply(fn, thisArg, args);
    }
    let run = () => {
      this.publish(data);
      return Reflect.apply(fn, thisArg, args);
    };
    for (const [store, transform] of this._stores) {
      const next = run;
      run = () => {
        let value;
        try {
          value = transform === undefined ? data : transform(data);
        } catch (err) {
          rethrow(err);
          return next();
        }
        return store.run(value, next);
      };
    }
    return run();
  }
}

function checkName(name) {
  if (typeof name !== 'string' && typeof name !== 'symbol') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'channel', ['string', 'symbol'], name);
  }
}

function lookup(name) {
  const ref = channels.get(name);
  const ch = ref && ref.deref();
  if (ref && !ch) channels.delete(name);
  return ch;
}

function channel(name) {
  const found = lookup(name);
  if (found) return found;
  checkName(name);
  const ch = new Channel(name);
  channels.set(name, new WeakRef(ch));
  return ch;
}

function hasSubscribers(name) {
  const ch = lookup(name);
  return ch ? ch.hasSubscribers : false;
}

function subscribe(name, subscription) {
  channel(name).subscribe(subscription);
}

function unsubscribe(name, subscription) {
  const ch = lookup(name);
  return ch ? ch.unsubscribe(subscription) : false;
}

const traceEvents = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'];

function tracingChannelFrom(nameOrChannels, event) {
  if (typeof nameOrChannels === 'string') return channel(`tracing:${nameOrChannels}:${event}`);
  if (typeof nameOrChannels === 'object' && nameOrChannels !== null) {
    const ch = nameOrChannels[event];
    if (ch === undefined || ch === null) throw new TypeError('Cannot convert undefined or null to object');
    if (ch instanceof Channel) return ch;
    throw codedError('ERR_INVALID_ARG_TYPE', `nameOrChannels.${event}`, ['Channel'], ch);
  }
  throw codedError('ERR_INVALID_ARG_TYPE', 'nameOrChannels', ['string', 'TracingChannel', 'Object'], nameOrChannels);
}

class TracingChannel {
  constructor(nameOrChannels) {
    for (const event of traceEvents) {
      Object.defineProperty(this, event, { value: tracingChannelFrom(nameOrChannels, event) });
    }
  }

  get hasSubscribers() {
    return traceEvents.some((event) => this[event].hasSubscribers);
  }

  subscribe(handlers) {
    for (const event of traceEvents) {
      if (handlers[event]) this[event].subscribe(handlers[event]);
    }
  }

  unsubscribe(handlers) {
    let done = true;
    for (const event of traceEvents) {
      if (handlers[event] && !this[event].unsubscribe(handlers[event])) done = false;
    }
    return done;
  }

  // traced runs fn inside the start channel's stores, publishing error
  // when it throws and end when it returns either way.
  _traced(context, fn, thisArg, args) {
    const { start, end, error } = this;
    return start.runStores(context, () => {
      try {
        return Reflect.apply(fn, thisArg, args);
      } catch (err) {
        context.error = err;
        error.publish(context);
        throw err;
      } finally {
        end.publish(context);
      }
    });
  }

  traceSync(fn, context = {}, thisArg, ...args) {
    if (!this.hasSubscribers) return Reflect.apply(fn, thisArg, args);
    return this._traced(context, function () {
      const result = Reflect.apply(fn, this, arguments);
      context.result = result;
      return result;
    }, thisArg, args);
  }

  tracePromise(fn, context = {}, thisArg, ...args) {
    if (!this.hasSubscribers) return Reflect.apply(fn, thisArg, args);
    const { asyncStart, asyncEnd, error } = this;
    const resolve = (result) => {
      context.result = result;
      asyncStart.publish(context);
      asyncEnd.publish(context);
      return result;
    };
    const reject = (err) => {
      context.error = err;
      error.publish(context);
      asyncStart.publish(context);
      asyncEnd.publish(context);
      return Promise.reject(err);
    };
    return this._traced(context, function () {
      let promise = Reflect.apply(fn, this, arguments);
      if (!(promise instanceof Promise)) promise = Promise.resolve(promise);
      return promise.then(resolve, reject);
    }, thisArg, args);
  }

  traceCallback(fn, position = -1, context = {}, thisArg, ...args) {
    if (!this.hasSubscribers) return Reflect.apply(fn, thisArg, args);
    const { asyncStart, asyncEnd, error } = this;
    const callback = args.at(position);
    validateFunction(callback, 'callback');
    function wrappedCallback(err, res) {
      if (err) {
        context.error = err;
        error.publish(context);
      } else {
        context.result = res;
      }
      // runStores lets a subscriber restore its context for the callback.
      return asyncStart.runStores(context, () => {
        try {
          return Reflect.apply(callback, this, arguments);
        } finally {
          asyncEnd.publish(context);
        }
      });
    }
    args.splice(position, 1, wrappedCallback);
    return this._traced(context, fn, thisArg, args);
  }
}

function tracingChannel(nameOrChannels) {
  return new TracingChannel(nameOrChannels);
}

module.exports = { channel, hasSubscribers, subscribe, tracingChannel, unsubscribe, Channel };
