// The server-sent events parser against the WHATWG rules: every line
// ending (CRLF, LF, CR, also split between chunks), multi-line data,
// comments, a BOM, and fields without a space or a value.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SSEParser } from "@secexec/client";

function parse(chunks: string[]): { event: string; data: string }[] {
  const p = new SSEParser();
  return chunks.flatMap((c) => p.push(c));
}

const want = [
  { event: "stdout", data: '{"data":"YQo="}' },
  { event: "exit", data: "line one\nline two" },
];

for (const [name, eol] of [["LF", "\n"], ["CRLF", "\r\n"], ["CR", "\r"]] as const) {
  test(`${name} line ends`, () => {
    const text = `: a comment${eol}event: stdout${eol}data: {"data":"YQo="}${eol}${eol}` +
      `event:exit${eol}data: line one${eol}data:line two${eol}${eol}`;
    assert.deepEqual(parse([text]), want);
    // Every split point, CRLF cut between its CR and LF included.
    for (let i = 1; i < text.length; i++) assert.deepEqual(parse([text.slice(0, i), text.slice(i)]), want, `split at ${i}`);
    assert.deepEqual(parse([...text]), want, "one character a chunk");
  });
}

test("BOM, empty data, unknown fields, no final blank line", () => {
  assert.deepEqual(parse(["\ufeffdata\n\nid: 7\nretry: 10\nfoo: bar\ndata: x\n\ndata: y"]), [
    { event: "message", data: "" },
    { event: "message", data: "x" },
  ]);
  // An event with no data line is not dispatched.
  assert.deepEqual(parse(["event: exit\n\n"]), []);
});
