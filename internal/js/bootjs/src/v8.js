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
  isStringOneByteRepresentation: (s) => !/[^\u0000-\u00ff]/.test(s),
};
for (const name of ['Serializer', 'Deserializer', 'DefaultSerializer', 'DefaultDeserializer']) {
  Object.defineProperty(module.exports, name, { get: () => serdes()[name], enumerable: true, configurable: true });
}
