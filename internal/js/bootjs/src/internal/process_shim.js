'use strict';
// What the polyfills get for require('process'): the runtime's process.
module.exports = require('../process.js').process;
