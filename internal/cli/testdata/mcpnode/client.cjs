// Drives `secexec mcp` over stdio with the official MCP TypeScript SDK's
// client: node client.cjs NODE_MODULES SECEXEC [ARGS...]. Prints what it
// saw as one JSON line.
const [mods, command, ...args] = process.argv.slice(2);
const load = (p) => require(require.resolve(p, { paths: [mods] }));
const { Client } = load('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = load('@modelcontextprotocol/sdk/client/stdio.js');

(async () => {
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
  const client = new Client({ name: 'secexec-node-test', version: '0.0.0' });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  const call = async (name, args, options) => {
    const r = await client.callTool({ name, arguments: args }, undefined, options);
    if (r.isError) throw new Error(name + ': ' + JSON.stringify(r.content));
    return r.structuredContent;
  };
  const { vm_id } = await call('vm_create', {});
  const progress = [];
  // The sleep keeps the result from arriving in the same read as the
  // progress: this client handles notifications a microtask late but
  // responses at once, and drops progress that comes after its response
  // (typescript-sdk issue 2580).
  const echo = await call('exec', { vm_id, command: 'echo hi; sleep 1' }, { onprogress: (p) => progress.push(p) });
  await call('exec', { vm_id, command: 'echo from the guest > /workspace/f.txt' });
  const file = await call('file_read', { vm_id, path: '/workspace/f.txt' });
  const denied = await client.callTool({ name: 'file_read', arguments: { vm_id: 'vm-not-mine', path: '/etc/passwd' } });
  await call('vm_close', { vm_id });
  await client.close();
  console.log(JSON.stringify({ tools, echo, progress, file, denied }));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
