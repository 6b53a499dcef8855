// import() in code compiled at run time: V8 hands it to the embedder's
// callback, which Node implements; prettier loads its plugins this way.
module.exports = { answer: 42 };
(async () => {
  const os = await new Function('return import("node:os")')();
  console.log('new Function', typeof os.platform, typeof os.default);
  const path = await eval('import("node:path")');
  console.log('eval', typeof path.join);
  const url = await (0, eval)('import("node:url")');
  console.log('indirect eval', typeof url.fileURLToPath);
  // Relative to the script that called eval.
  const self = await new Function('f', 'return import(f)')('./' + require('node:path').basename(__filename));
  console.log('self', self.default.answer);
  const AsyncFunction = (async () => {}).constructor;
  const viaAsync = await new AsyncFunction('return (await import("node:util")).format("%s!", "ok")')();
  console.log('async function', viaAsync);
  for (const spec of ['./missing-module.mjs', 'no-such-package-xyz', 'node:no-such-builtin']) {
    try {
      await eval(`import(${JSON.stringify(spec)})`);
      console.log(spec, 'resolved?');
    } catch (e) {
      console.log(spec, e.code || e.name);
    }
  }
})();
