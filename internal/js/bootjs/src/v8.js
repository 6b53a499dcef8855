'use strict';
// v8: heap statistics of this isolate; serialization in V8's wire format
// (internal/v8_serdes.js).
function getHeapStatistics() {
  const m = process.memoryUsage();
  return {
    total_heap_size: m.heapTotal, total_heap_size_executable: 0, total_physical_size: m.heapTotal,
    total_available_size: 0, used_heap_size: m.heapUsed, heap_size_limit: m.heapTotal, malloced_memory: 0,
    peak_malloced_memory: 0, does_zap_garbage: 0, number_of_native_contexts: 1, number_of_detached_contexts: 0,
    total_global_handles_size: 0, used_global_handles_size: 0, external_memory: m.external,
  };
}
const serdes = () => require('./internal/v8_serdes.js');

// promiseHooks: V8's promise events (init, settled, before, after) for
// the guest's functions, through the runtime's promise hook
// (internal/async_context.js). Each registration returns its stop().
function promiseHook(kind) {
  return (fn) => {
    const types = require('./internal/types.js');
    if (typeof fn !== 'function' || types.isAsyncFunction(fn) || types.isGeneratorFunction(fn)) {
      throw require('./internal/errors.js').codedError('ERR_INVALID_ARG_TYPE', `${kind}Hook`, 'of type function', fn);
    }
    const AC = require('./internal/async_context.js');
    const add = { __proto__: null, ...AC.v8Hooks() };
    add[kind] = [...add[kind], fn];
    AC.setV8Hooks(add);
    let stopped = false;
    return function stop() {
      if (stopped) return;
      stopped = true;
      const cur = AC.v8Hooks();
      const next = { __proto__: null, ...cur };
      const i = cur[kind].indexOf(fn);
      if (i < 0) return;
      next[kind] = [...cur[kind].slice(0, i), ...cur[kind].slice(i + 1)];
      AC.setV8Hooks(next);
    };
  };
}
const promiseHooks = {
  onInit: promiseHook('init'),
  onSettled: promiseHook('settled'),
  onBefore: promiseHook('before'),
  onAfter: promiseHook('after'),
  createHook({ init, before, after, settled } = {}) {
    const stops = [];
    if (init !== undefined) stops.push(promiseHooks.onInit(init));
    if (before !== undefined) stops.push(promiseHooks.onBefore(before));
    if (after !== undefined) stops.push(promiseHooks.onAfter(after));
    if (settled !== undefined) stops.push(promiseHooks.onSettled(settled));
    return function stop() { for (const s of stops) s(); };
  },
};

module.exports = {
  getHeapStatistics,
  getHeapSpaceStatistics: () => [],
  getHeapCodeStatistics: () => ({ code_and_metadata_size: 0, bytecode_and_metadata_size: 0, external_script_source_size: 0, cpu_profiler_metadata_size: 0 }),
  setFlagsFromString() { throw require('./internal/errors.js').accessDenied('v8.setFlagsFromString'); },
  serialize: (v) => serdes().serialize(v),
  deserialize: (b) => serdes().deserialize(b),
  cachedDataVersionTag: () => 0,
  writeHeapSnapshot() { throw require('./internal/errors.js').accessDenied('v8.writeHeapSnapshot'); },
  getHeapSnapshot() { throw require('./internal/errors.js').accessDenied('v8.getHeapSnapshot'); },
  promiseHooks,
  isStringOneByteRepresentation: (s) => !/[^\u0000-\u00ff]/.test(s),
};
for (const name of ['Serializer', 'Deserializer', 'DefaultSerializer', 'DefaultDeserializer']) {
  Object.defineProperty(module.exports, name, { get: () => serdes()[name], enumerable: true, configurable: true });
}
