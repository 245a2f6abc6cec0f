import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { eventually, FIXTURES, PYTHON } from "../support/python.js";
import { blocksOf, shellWords } from "../support/readme.js";

/**
 * A FastAPI worker as the service's template writes one (Debian's python3-fastapi and
 * python3-uvicorn), unchanged, started by the real `minipod worker` against a minipod on the
 * manual clock; called with Node's fetch and with curl.
 */
const BIN = fileURLToPath(new URL("../../bin/minipod.js", import.meta.url));
const WORKER = join(FIXTURES, "lb_worker.py");

function fastApiAvailable(): boolean {
  const r = spawnSync(PYTHON, ["-c", "import fastapi, uvicorn"], { encoding: "utf8", timeout: 30_000 });
  if (r.status === 0) return true;
  const why = (r.stderr || r.stdout || r.error?.message || "").trim().split("\n").slice(-1)[0];
  if (process.env.CI === "true") throw new Error(`FastAPI cannot be imported by ${PYTHON} (${why}); .ci/run installs python3-fastapi and python3-uvicorn`);
  console.warn(`FastAPI worker tests skipped: ${why}`);
  return false;
}
const available = fastApiAvailable();

let emu: Emulator;
let launcher: ChildProcess;
let out = "";
const AUTH = { authorization: "Bearer test-key" };

beforeAll(async () => {
  if (!available) return;
  emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: "external", workersMax: 1 }] } });
  launcher = spawn(process.execPath, [BIN, "worker", "--url", emu.url, "--endpoint", "api", "--worker-id", "fastapi1", "--workers", "1", "--restart", "--", PYTHON, WORKER], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PYTHONUNBUFFERED: "1", PYTHONDONTWRITEBYTECODE: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  launcher.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  launcher.stderr!.on("data", (d: Buffer) => (out += d.toString()));
}, 30_000);

afterAll(async () => {
  if (!available) return;
  if (launcher.exitCode === null) {
    const exited = new Promise((r) => launcher.once("exit", r));
    launcher.kill("SIGTERM");
    await exited;
  }
  await emu.close();
}, 30_000);

const workerState = async () => {
  const res = await fetch(`${emu.url}/_emulator/load-balancers`);
  const body = (await res.json()) as { endpoints: Array<{ id: string; workers: Array<{ id: string; state: string }> }> };
  return body.endpoints.find((e) => e.id === "api")!.workers;
};

describe.skipIf(!available)("a FastAPI load-balancing worker through minipod worker", () => {
  it("holds a request until /ping says 200, then routes it to the worker with PORT and the platform's variables", async () => {
    // Sent at once: the worker is still starting (its port refuses, then /ping says 204).
    const res = await fetch(`${emu.url}/lb/api/generate`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify({ prompt: "minipod" }),
      signal: AbortSignal.timeout(20_000),
    });
    expect(res.status, out).toBe(200);
    expect(res.headers.get("x-runpod-worker-id")).toBe("fastapi1");
    const body = (await res.json()) as { generated_text: string; worker: string; env: Record<string, string> };
    expect(body.generated_text).toBe("Hello, minipod");
    expect(body.worker).toBe("fastapi1");
    expect(body.env).toMatchObject({ PORT: expect.stringMatching(/^\d+$/), HEALTH_CHECK_PATH: "/ping", RUNPOD_ENDPOINT_ID: "api" });
    expect(body.env.PORT_HEALTH).toBe(body.env.PORT);
    expect(await workerState()).toEqual([expect.objectContaining({ id: "fastapi1", state: "ready" })]);
    // The worker's own validation errors come back as it answered them.
    const invalid = await fetch(`${emu.url}/lb/api/generate`, { method: "POST", headers: { ...AUTH, "content-type": "application/json" }, body: "{}" });
    expect(invalid.status).toBe(422);
  }, 30_000);

  it("is reached by host as well: curl http://api.localhost:PORT/stats", async () => {
    // curl resolves *.localhost to loopback itself; run without blocking this process, which serves minipod.
    const curl = (args: string[]) => promisify(execFile)("curl", args, { encoding: "utf8", timeout: 10_000 });
    const r = await curl(["-s", "-i", "-H", "Authorization: Bearer k", `http://api.localhost:${emu.port}/stats`]);
    expect(r.stdout).toMatch(/^HTTP\/1\.1 200/);
    expect(r.stdout).toMatch(/x-runpod-worker-id: fastapi1/i);
    expect(r.stdout).toMatch(/"worker":"fastapi1"/);
    // A name that is no load-balancing endpoint is refused, as any unknown host.
    const other = await curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", `http://nope.localhost:${emu.port}/stats`]);
    expect(other.stdout).toBe("403");
  });

  it("is reached by Python's requests with only a base URL", async () => {
    const script =
      "import os, requests, json; r = requests.post(os.environ['BASE'] + '/generate', json={'prompt': 'py'}, headers={'Authorization': 'Bearer k'}, timeout=20); print(json.dumps([r.status_code, r.headers['X-Runpod-Worker-Id'], r.json()['generated_text']]))";
    const { stdout } = await promisify(execFile)(PYTHON, ["-c", script], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", BASE: `${emu.url}/lb/api` } });
    expect(JSON.parse(stdout)).toEqual([200, "fastapi1", "Hello, py"]);
  });

  it("streams Server-Sent Events as the worker writes them", async () => {
    // The worker writes its first event, then holds the others until the gate file exists.
    const gate = join(mkdtempSync(join(tmpdir(), "minipod-sse-")), "go");
    const res = await fetch(`${emu.url}/lb/api/stream?n=3&delay=0&until=${encodeURIComponent(gate)}`, { headers: AUTH });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    // Here while the worker has written nothing else: relayed as written, not when the answer ends.
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: 0\n\n");
    writeFileSync(gate, "");
    let rest = "";
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest += new TextDecoder().decode(next.value);
    expect(rest).toBe("data: 1\n\ndata: 2\n\n");
  });

  it("joins a WebSocket to the worker's server, both ways, until it closes", async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${emu.port}/lb/api/ws`, { headers: AUTH } as never);
    const messages: string[] = [];
    const closed = new Promise<number>((resolve) => socket.addEventListener("close", (e) => resolve(e.code)));
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve());
      socket.addEventListener("error", () => reject(new Error(`the WebSocket did not open:\n${out}`)));
    });
    const next = () => new Promise<string>((resolve) => socket.addEventListener("message", (e) => resolve(String(e.data)), { once: true }));
    for (const word of ["hello", "again"]) {
      const reply = next();
      socket.send(word);
      messages.push(await reply);
    }
    socket.send("bye");
    expect(await closed).toBe(1000);
    expect(messages).toEqual(["fastapi1:HELLO", "fastapi1:AGAIN"]);
    // Without a key, no upgrade.
    const refused = new WebSocket(`ws://127.0.0.1:${emu.port}/lb/api/ws`);
    expect(await new Promise((resolve) => refused.addEventListener("error", () => resolve("refused")))).toBe("refused");
  });

  it("cancels the worker's request when the client goes away", async () => {
    const controller = new AbortController();
    const pending = fetch(`${emu.url}/lb/api/hold`, { headers: AUTH, signal: controller.signal }).catch((e: Error) => e);
    await eventually(async () => ((await workerState())[0] as { inFlight?: number } | undefined)?.inFlight === 1 || undefined, 10_000, "the request reaching the worker");
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await eventually(() => (out.includes("HOLD_CANCELLED") ? true : undefined), 10_000, "the worker seeing the client go away");
  });

  it("answers 502 when the worker dies mid-request, and routes again once it is back (--restart)", async () => {
    const res = await fetch(`${emu.url}/lb/api/crash`, { method: "POST", headers: AUTH });
    expect(res.status).toBe(502);
    expect(res.headers.get("x-runpod-worker-id")).toBe("fastapi1");
    expect(((await res.json()) as { error: string }).error).toMatch(/fastapi1/);
    // Out of the pool once its exit is known; in again once its /ping says 200 (after its 204s).
    await eventually(async () => ((await workerState())[0]?.state !== "ready" ? true : undefined), 20_000, "the worker out of the pool");
    const again = await fetch(`${emu.url}/lb/api/stats`, { headers: AUTH, signal: AbortSignal.timeout(20_000) });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { requests: number }).requests).toBe(0);
  }, 30_000);
});

describe.skipIf(!available)("docs/load-balancing.md: the FastAPI worker, run as the page shows it", () => {
  it("serves app.py through minipod worker, and answers both curl examples with the greeting", async () => {
    const [app] = blocksOf("docs/load-balancing.md", "A FastAPI worker, unchanged", "python");
    const [setup, calls] = blocksOf("docs/load-balancing.md", "A FastAPI worker, unchanged", "sh");
    const dir = mkdtempSync(join(tmpdir(), "minipod-lb-doc-"));
    writeFileSync(join(dir, "app.py"), app!.text);
    const config = JSON.parse(/echo '(.*)' > lb\.json/.exec(setup!.text)![1]!);
    const docEmu = await createEmulator({ clock: "manual", config });
    const command = shellWords(setup!.text.split("\n").find((l) => l.includes("minipod worker"))!).slice(2);
    const worker = spawn(process.execPath, [BIN, ...command.slice(0, 1), "--url", docEmu.url, ...command.slice(1).map((w) => (w === "python3" ? PYTHON : w))], { cwd: dir, stdio: "ignore" });
    try {
      for (const line of calls!.text.split("\n").filter((l) => l.startsWith("curl "))) {
        const args = shellWords(line.replaceAll(":8080", `:${docEmu.port}`)).slice(1);
        const { stdout } = await promisify(execFile)("curl", ["-s", "--max-time", "20", ...args], { encoding: "utf8" });
        expect(JSON.parse(stdout), line).toEqual({ generated_text: "Hello, minipod" });
      }
    } finally {
      const exited = new Promise((r) => worker.once("exit", r));
      worker.kill("SIGTERM");
      await exited;
      await docEmu.close();
    }
  }, 30_000);
});

describe.skipIf(!available)("FastAPI worker processes started and stopped as the pool scales", () => {
  it("starts a process per request in flight up to workersMax, and stops idle ones after idleTimeout", async () => {
    const scaled = await createEmulator({
      clock: "manual",
      config: { endpoints: [{ id: "scaled", type: "LOAD_BALANCER", handler: "external", workersMin: 0, workersMax: 2, requestCount: 1, idleTimeout: 5 }] },
    });
    const workers = () =>
      Promise.resolve(scaled.app.request("/_emulator/load-balancers")).then(
        async (r) => ((await r.json()) as { endpoints: Array<{ workers: Array<{ id: string; state: string; inFlight: number }> }> }).endpoints[0]!.workers,
      );
    try {
      scaled.scaleWorkers({ endpoint: "scaled", command: [PYTHON, WORKER], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LOADING_PINGS: "1" }, output: () => {} });
      expect(await workers()).toEqual([]);
      // Each answer is held after its first event until the gate file exists: the first request
      // keeps its process busy (one request each) until the second has a process of its own.
      const gate = join(mkdtempSync(join(tmpdir(), "minipod-scaled-")), "go");
      const call = () =>
        fetch(`${scaled.url}/lb/scaled/stream?n=2&delay=0&until=${encodeURIComponent(gate)}`, { headers: AUTH }).then(async (r) => ({
          status: r.status,
          worker: r.headers.get("x-runpod-worker-id"),
          text: await r.text(),
        }));
      const calls = [call(), call()];
      await eventually(async () => ((await workers()).filter((w) => w.inFlight === 1).length === 2 ? true : undefined), 30_000, "a request at each of two processes");
      writeFileSync(gate, "");
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(new Set(answers.map((a) => a.worker)).size).toBe(2);
      expect(await workers()).toHaveLength(2);
      await scaled.clock.advance(5_000);
      await eventually(async () => ((await workers()).length === 0 ? true : undefined), 15_000, "the idle processes stopping");
    } finally {
      await scaled.close();
    }
  }, 40_000);
});

describe.skipIf(!available)("minipod worker following the scaler with the FastAPI worker", () => {
  it("starts a process for each request waiting, up to workersMax, and stops them after idleTimeout of virtual time", async () => {
    const scaled = await createEmulator({
      clock: "manual",
      config: { endpoints: [{ id: "cli", type: "LOAD_BALANCER", handler: "external", workersMin: 0, workersMax: 2, requestCount: 1, idleTimeout: 5 }] },
    });
    const workers = () =>
      Promise.resolve(scaled.app.request("/_emulator/load-balancers")).then(
        async (r) => ((await r.json()) as { endpoints: Array<{ workers: Array<{ id: string; inFlight: number }> }> }).endpoints[0]!.workers,
      );
    let log = "";
    const cli = spawn(process.execPath, [BIN, "worker", "--url", scaled.url, "--endpoint", "cli", "--", PYTHON, WORKER], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LOADING_PINGS: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    cli.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    cli.stdout!.on("data", (d: Buffer) => (log += d.toString()));
    try {
      // No process until a request comes (workersMin 0); two held requests: two processes.
      await eventually(() => (log.includes("started and stopped as its scaler asks") ? true : undefined), 10_000, "the launcher connected");
      expect(await workers()).toEqual([]);
      const held = new AbortController();
      const hold = () => fetch(`${scaled.url}/lb/cli/hold`, { headers: AUTH, signal: held.signal }).catch(() => "aborted");
      const pending = [hold(), hold()];
      await eventually(async () => ((await workers()).filter((w) => w.inFlight === 1).length === 2 ? true : undefined), 20_000, "a request at each of two processes");
      held.abort();
      expect(await Promise.all(pending)).toEqual(["aborted", "aborted"]);
      await eventually(async () => ((await workers()).every((w) => w.inFlight === 0) ? true : undefined), 10_000, "both idle");
      await scaled.clock.advance(5_000);
      expect(await workers()).toEqual([]);
      await eventually(() => ((log.match(/is idle: minipod's scaler stops it/g) ?? []).length === 2 ? true : undefined), 10_000, "both processes stopped");
    } finally {
      const exited = new Promise((r) => cli.once("exit", r));
      cli.kill("SIGTERM");
      await exited;
      await scaled.close();
    }
  }, 40_000);
});
