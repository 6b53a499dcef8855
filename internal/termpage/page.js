// The browser terminal: the token is kept in sessionStorage and sent
// as an Authorization header on fetch and as a WebSocket subprotocol
// (browsers cannot set headers on a WebSocket); it is never put in a URL.
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import "@xterm/xterm/css/xterm.css";

const TAG_STDIN = 0, TAG_STDOUT = 1, TAG_STDERR = 2, TAG_EXIT = 3, TAG_RESIZE = 6;
const $ = (id) => document.getElementById(id);
const status = (s) => { $("status").textContent = s; };
const key = "secexec.token";

function token() { return sessionStorage.getItem(key) || ""; }

async function call(method, path, body) {
  const r = await fetch(path, {
    method,
    headers: { Authorization: "Bearer " + token(), "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: "error",
  });
  const text = await r.text();
  const v = text ? JSON.parse(text) : {};
  if (!r.ok) throw new Error((v.error && v.error.message) || r.status + " " + r.statusText);
  return v;
}

function b64url(s) {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function connect(ev) {
  ev.preventDefault();
  const t = $("token").value.trim();
  if (t) sessionStorage.setItem(key, t);
  $("token").value = "";
  try {
    const { vms } = await call("GET", "/v1/vms");
    const sel = $("vm");
    sel.replaceChildren(new Option("a new VM", ""));
    for (const vm of vms) sel.add(new Option(vm.id, vm.id));
    sel.disabled = false;
    $("open").disabled = false;
    status(vms.length + " VM(s). Choose one, or a new VM, and open a shell.");
  } catch (e) {
    status("Could not list VMs: " + e.message);
  }
}

let term, fit, ws;

async function open() {
  $("open").disabled = true;
  try {
    let id = $("vm").value;
    if (!id) {
      id = (await call("POST", "/v1/vms", {})).id;
      $("vm").add(new Option(id, id, true, true));
    }
    if (ws) ws.close();
    if (!term) {
      term = new Terminal({ convertEol: false, scrollback: 5000 });
      fit = new FitAddon();
      term.loadAddon(fit);
      term.open($("term"));
      term.onData((d) => send(TAG_STDIN, new TextEncoder().encode(d)));
      term.onBinary((d) => send(TAG_STDIN, Uint8Array.from(d, (c) => c.charCodeAt(0) & 0xff)));
      term.onResize(({ rows, cols }) => {
        const b = new Uint8Array(4);
        new DataView(b.buffer).setUint16(0, rows);
        new DataView(b.buffer).setUint16(2, cols);
        send(TAG_RESIZE, b);
      });
      window.addEventListener("resize", () => fit.fit());
    }
    fit.fit();
    const p = await call("POST", "/v1/vms/" + encodeURIComponent(id) + "/processes",
      { argv: ["sh"], pty: { rows: term.rows, cols: term.cols, term: "xterm-256color" } });
    const url = new URL("/v1/vms/" + encodeURIComponent(id) + "/processes/" + p.pid + "/ws", location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(url, ["secexec.v1", "secexec.token." + b64url(token())]);
    ws.binaryType = "arraybuffer";
    ws.onopen = () => { status("Connected to " + id + " (pid " + p.pid + ")."); term.focus(); };
    ws.onmessage = (m) => {
      const b = new Uint8Array(m.data);
      if (b[0] === TAG_STDOUT || b[0] === TAG_STDERR) term.write(b.subarray(1));
      else if (b[0] === TAG_EXIT) {
        const st = JSON.parse(new TextDecoder().decode(b.subarray(1)));
        term.write("\r\n[exited " + st.exit_code + "]\r\n");
      }
    };
    ws.onclose = () => { status("Disconnected."); $("open").disabled = false; };
  } catch (e) {
    status("Could not open a shell: " + e.message);
    $("open").disabled = false;
  }
}

function send(tag, payload) {
  if (!ws || ws.readyState !== WebSocket.OPEN) return;
  const b = new Uint8Array(1 + payload.length);
  b[0] = tag;
  b.set(payload, 1);
  ws.send(b);
}

$("bar").addEventListener("submit", connect);
$("open").addEventListener("click", open);
if (token()) status("A token is set for this tab; press Connect to use it, or enter another.");
