export default async function* reporter(source) {
  for await (const event of source) {
    if (event.type === 'test:pass') yield `pass ${event.data.name} nesting=${event.data.nesting}\n`;
    if (event.type === 'test:fail') yield `fail ${event.data.name} ${event.data.details.error.failureType}\n`;
    if (event.type === 'test:plan') yield `plan ${event.data.count}\n`;
  }
  yield 'end\n';
}
