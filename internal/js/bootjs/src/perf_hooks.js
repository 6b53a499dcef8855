'use strict';
// perf_hooks: performance.now() counts from the process start on the VM's
// monotonic clock, so it steps (or stands still) like Date.now().
const { nowNs } = require('./process.js');
let originMs = 0;
let originNs = 0;
function setOrigin(ms) { originMs = ms; originNs = nowNs(); }

const marks = new Map();
const performance = {
  now() { return (nowNs() - originNs) / 1e6; },
  get timeOrigin() { return originMs; },
  mark(name) { const e = { name, entryType: 'mark', startTime: performance.now(), duration: 0 }; marks.set(name, e); return e; },
  measure(name, start, end) {
    const s = start ? (marks.get(start)?.startTime ?? 0) : 0;
    const e = end ? (marks.get(end)?.startTime ?? performance.now()) : performance.now();
    return { name, entryType: 'measure', startTime: s, duration: e - s };
  },
  clearMarks(name) { if (name) marks.delete(name); else marks.clear(); },
  clearMeasures() {},
  getEntries() { return [...marks.values()]; },
  getEntriesByName(n) { return [...marks.values()].filter((e) => e.name === n); },
  getEntriesByType(t) { return t === 'mark' ? [...marks.values()] : []; },
  toJSON() { return { timeOrigin: originMs }; },
  eventLoopUtilization() { return { idle: 0, active: 0, utilization: 0 }; },
  timerify(fn) { return fn; },
  // fetch reports resource timings here; nothing observes them.
  markResourceTiming() {},
  clearResourceTimings() {},
};
class PerformanceObserver { constructor() {} observe() {} disconnect() {} }
PerformanceObserver.supportedEntryTypes = ['mark', 'measure'];
module.exports = {
  performance, PerformanceObserver, setOrigin,
  constants: { NODE_PERFORMANCE_GC_MAJOR: 4, NODE_PERFORMANCE_GC_MINOR: 1, NODE_PERFORMANCE_GC_INCREMENTAL: 8, NODE_PERFORMANCE_GC_WEAKCB: 16 },
  monitorEventLoopDelay: () => ({ enable() {}, disable() {}, percentile: () => 0, min: 0, max: 0, mean: 0, stddev: 0 }),
  createHistogram: () => ({ record() {}, percentile: () => 0, min: 0, max: 0, mean: 0 }),
};
