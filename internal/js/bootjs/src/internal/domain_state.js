'use strict';
// What the timers, process.nextTick and promise reactions share with the
// domain module. Node carries a callback's domain with async_hooks; here
// each scheduler asks current() when a callback is queued and runs it
// inside that domain with enter()/leave(). Until a guest requires
// 'domain', current() is one property read.
const state = { active: null };

// current is the domain a callback queued now belongs to, or null.
function current() { return state.active; }

// enter makes d the active domain for a callback about to run.
function enter(d) { if (d) d.enter(); }

// leave exits d after its callback returned. A callback that throws
// skips it on purpose: the uncaught-exception path then finds the
// domain still active and clears the stack itself, as Node's does.
function leave(d) { if (d) d.exit(); }

module.exports = { state, current, enter, leave };
