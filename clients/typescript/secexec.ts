// A small typed client for the secexec HTTP API (docs/api.md), on the
// platform's fetch (Node.js 18+, Deno, Bun, browsers). No dependencies.
//
//   const c = new Client("http://127.0.0.1:8080", token);
//   const vm = await c.createVM();
//   const res = await c.exec(vm.id, { cmd: "echo hi" });
//   new TextDecoder().decode(res.stdout) === "hi\n";

/** The routes this client uses, as in openapi.json (checked by clients/clients_test.go). */
export const ROUTES = [
  "GET /healthz",
  "POST /v1/vms",
  "GET /v1/vms",
  "GET /v1/vms/{id}",
  "DELETE /v1/vms/{id}",
  "POST /v1/vms/{id}/exec",
  "GET /v1/vms/{id}/files/{path}",
  "PUT /v1/vms/{id}/files/{path}",
  "DELETE /v1/vms/{id}/files/{path}",
  "POST /v1/vms/{id}/js/evaluate",
  "POST /v1/vms/{id}/js/execute",
  "POST /v1/vms/{id}/contexts",
  "POST /v1/vms/{id}/contexts/{cid}/evaluate",
  "DELETE /v1/vms/{id}/contexts/{cid}",
] as const;

/** Stable error codes of the API. */
export type ErrorCode =
  | "bad_request" | "unauthorized" | "not_found" | "forbidden" | "conflict" | "too_large"
  | "output_too_large" | "quota_exceeded" | "no_space" | "bad_permissions" | "bad_archive"
  | "not_regular_file" | "eval_error" | "shutting_down" | "timeout" | "wrong_replica"
  | "engine_lost" | "internal"
  | "not_implemented" | "method_not_allowed" | "unsupported_media_type";

/** An error answer of the API. */
export class APIError extends Error {
  constructor(public status: number, public code: ErrorCode | string, message: string, public retryAfter?: string) {
    super(`${status} ${code}: ${message}`);
    this.name = "APIError";
  }
}

export interface Limits { fs_bytes?: number; processes?: number; memory_bytes?: number; cpu_time_ms?: number }
export interface CreateVM {
  permissions?: unknown;
  limits?: Limits;
  env?: Record<string, string>;
  cwd?: string;
  hostname?: string;
  real_time?: boolean;
  mounts?: { path: string; read_only?: boolean }[];
  idle_timeout_ms?: number;
  tools?: { name: string; url: string }[];
  engine?: Engine;
}
export type Engine = "per-tenant" | "per-vm";
export type LostReason = "engine_out_of_memory" | "engine_killed" | "engine_crashed" | "engine_protocol_violation";
export interface VM {
  id: string; created_at: string; last_used_at: string; idle_timeout_ms: number; processes: number;
  engine: Engine; state: "running" | "lost"; lost_reason?: LostReason;
}
export interface ExecRequest {
  cmd?: string;
  argv?: string[];
  stdin?: Uint8Array | string;
  env?: Record<string, string>;
  cwd?: string;
  timeout_ms?: number;
  max_output?: number;
}
export type Outcome = "succeeded" | "failed" | "cancelled" | "timed_out";
export interface ExecResult {
  exit_code: number;
  outcome: Outcome;
  signal?: string;
  stdout: Uint8Array;
  stderr: Uint8Array;
  truncated: boolean;
  duration_ms: number;
}
export interface Stat { name: string; type: "file" | "dir" | "symlink" | "other"; mode: number; size: number; mtime: string; uid: number; gid: number }
export type ExecEvent =
  | { event: "stdout" | "stderr"; data: Uint8Array }
  | { event: "error"; code: ErrorCode; message: string }
  | { event: "exit"; result: ExecResult };

const enc = new TextEncoder();

function toB64(b: Uint8Array | string): string {
  const bytes = typeof b === "string" ? enc.encode(b) : b;
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function fromB64(s: string | undefined): Uint8Array {
  const bin = atob(s ?? "");
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function result(d: any): ExecResult {
  return { ...d, stdout: fromB64(d.stdout), stderr: fromB64(d.stderr) };
}

/** A client of one secexec server, authenticated by a bearer token. */
export class Client {
  private base: string;
  constructor(baseURL: string, private token: string) {
    this.base = baseURL.replace(/\/+$/, "");
  }

  private async request(method: string, path: string, body?: BodyInit, headers: Record<string, string> = {}): Promise<Response> {
    const r = await fetch(this.base + path, { method, body, headers: { Authorization: `Bearer ${this.token}`, ...headers } });
    if (!r.ok) {
      const text = await r.text();
      let code = "http_error", message = text;
      try {
        const e = JSON.parse(text).error;
        code = e.code;
        message = e.message;
      } catch { /* not the API's error shape */ }
      throw new APIError(r.status, code, message, r.headers.get("Retry-After") ?? undefined);
    }
    return r;
  }

  private async json<T>(method: string, path: string, payload?: unknown): Promise<T> {
    const r = await this.request(method, path, payload === undefined ? undefined : JSON.stringify(payload),
      payload === undefined ? {} : { "Content-Type": "application/json" });
    const text = await r.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private static vm(id: string): string { return "/v1/vms/" + encodeURIComponent(id); }
  private static file(path: string): string {
    return "/files/" + path.replace(/^\/+/, "").split("/").map(encodeURIComponent).join("/");
  }
  private static execBody(req: ExecRequest): string {
    const { stdin, ...rest } = req;
    return JSON.stringify(stdin === undefined ? rest : { ...rest, stdin: toB64(stdin) });
  }

  async healthy(): Promise<boolean> { return (await this.request("GET", "/healthz")).ok; }
  createVM(opts: CreateVM = {}): Promise<VM> { return this.json("POST", "/v1/vms", opts); }
  async listVMs(): Promise<VM[]> { return (await this.json<{ vms: VM[] }>("GET", "/v1/vms")).vms; }
  getVM(id: string): Promise<VM> { return this.json("GET", Client.vm(id)); }
  async deleteVM(id: string): Promise<void> { await this.request("DELETE", Client.vm(id)); }

  /** Runs a command and waits for it. */
  async exec(id: string, req: ExecRequest): Promise<ExecResult> {
    const r = await this.request("POST", Client.vm(id) + "/exec", Client.execBody(req), { "Content-Type": "application/json" });
    return result(await r.json());
  }

  /** Runs a command, yielding its output as it comes and, last, its exit. */
  async *execStream(id: string, req: ExecRequest): AsyncGenerator<ExecEvent> {
    const r = await this.request("POST", Client.vm(id) + "/exec", Client.execBody(req),
      { "Content-Type": "application/json", Accept: "text/event-stream" });
    const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let name = "", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith("data: ")) data = line.slice(6);
        }
        const d = JSON.parse(data);
        if (name === "stdout" || name === "stderr") yield { event: name, data: fromB64(d.data) };
        else if (name === "exit") yield { event: "exit", result: result(d) };
        else yield { event: "error", code: d.code, message: d.message };
      }
    }
  }

  async writeFile(id: string, path: string, data: Uint8Array | string): Promise<void> {
    await this.request("PUT", Client.vm(id) + Client.file(path), typeof data === "string" ? enc.encode(data) : data,
      { "Content-Type": "application/octet-stream" });
  }
  async readFile(id: string, path: string): Promise<Uint8Array> {
    return new Uint8Array(await (await this.request("GET", Client.vm(id) + Client.file(path))).arrayBuffer());
  }
  stat(id: string, path: string): Promise<Stat> { return this.json("GET", Client.vm(id) + Client.file(path) + "?stat"); }
  async readDir(id: string, path: string): Promise<Stat[]> {
    return (await this.json<{ entries: Stat[] }>("GET", Client.vm(id) + Client.file(path) + "?list")).entries;
  }
  async remove(id: string, path: string, recursive = false): Promise<void> {
    await this.request("DELETE", Client.vm(id) + Client.file(path) + (recursive ? "?recursive" : ""));
  }

  /** Evaluates a JavaScript expression in the VM; its JSON value. */
  async evaluate<T = unknown>(id: string, code: string): Promise<T> {
    return (await this.json<{ value: T }>("POST", Client.vm(id) + "/js/evaluate", { code })).value;
  }
  /** Runs a CommonJS script in the VM. */
  async execute(id: string, code: string): Promise<ExecResult> {
    return result(await this.json("POST", Client.vm(id) + "/js/execute", { code }));
  }

  /** Creates a persistent JS context (globals kept between evaluations); its id. */
  async createContext(id: string, opts: { timeout_ms?: number } = {}): Promise<string> {
    return (await this.json<{ id: string }>("POST", Client.vm(id) + "/contexts", opts)).id;
  }
  /** Evaluates in a context; its JSON value. */
  async contextEvaluate<T = unknown>(id: string, cid: string, code: string): Promise<T> {
    return (await this.json<{ value: T }>("POST", Client.vm(id) + "/contexts/" + encodeURIComponent(cid) + "/evaluate", { code })).value;
  }
  async deleteContext(id: string, cid: string): Promise<void> {
    await this.request("DELETE", Client.vm(id) + "/contexts/" + encodeURIComponent(cid));
  }
}
