'use strict';
// The assert polyfill's "./internal/errors" (bootjs resolves it here):
// its ERR_* constructors made by the runtime's codedError, so assert's
// argument errors carry Node 22's messages.
const { codedError } = require('./errors.js');

const codes = {};
for (const code of ['ERR_AMBIGUOUS_ARGUMENT', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_RETURN_VALUE', 'ERR_MISSING_ARGS']) {
  // Called with new: returning the error object makes it the result.
  codes[code] = function NodeError(...args) {
    const err = codedError(code, ...args);
    Error.captureStackTrace(err, codes[code]);
    return err;
  };
}

module.exports = { codes };
