'use strict';
// The entry of the test runner's lazy chunk (bootjs.Bundle.Lazy
// "test_runner"): node:test, node:test/reporters and node --test. It is
// built apart from the bootstrap, so that only a process that uses the
// runner parses it, and it reaches the runtime only through "node:"
// builtins.
module.exports = {
  test: require('./test.js'),
  reporters: () => require('./report.js').reporters(),
  main: (args) => require('./cli.js').main(args),
};
