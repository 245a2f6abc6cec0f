import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/http/app.js";
import { createEmulator, type Emulator } from "../../src/index.js";
import { startCli } from "../support/cli.js";
import { eventually } from "../support/python.js";

/**
 * `minipod worker -- node server.js` on a load-balancing endpoint follows the endpoint's scaler:
 * the real CLI against a minipod on the manual clock, a Node http server as the worker.
 */
const BIN = fileURLToPath(new URL("../../bin/minipod.js", import.meta.url));
const SERVER = fileURLToPath(new URL("../fixtures/lb-node-worker.js", import.meta.url));
const AUTH = { authorization: "Bearer k" };

let emu: Emulator;
let cli: ChildProcess;
let out = "";

type Listed = { endpoints: Array<{ id: string; workers: Array<{ id: string; state: string; inFlight: number }> }> };
const workers = async () => ((await (await fetch(`${emu.url}/_emulator/load-balancers`)).json()) as Listed).endpoints.find((e) => e.id === "api")!.workers;
const call = (path: string) =>
  fetch(`${emu.url}/lb/api${path}`, { headers: AUTH, signal: AbortSignal.timeout(15_000) }).then(async (r) => ({
    status: r.status,
    worker: r.headers.get("x-runpod-worker-id"),
    body: (await r.json()) as Record<string, string>,
  }));

beforeAll(async () => {
  emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: "external", workersMin: 1, workersMax: 2, requestCount: 1, idleTimeout: 30 }] } });
  cli = spawn(process.execPath, [BIN, "worker", "--url", emu.url, "--endpoint", "api", "--worker-id", "node", "--", process.execPath, SERVER], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cli.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  cli.stderr!.on("data", (d: Buffer) => (out += d.toString()));
}, 20_000);

afterAll(async () => {
  if (cli.exitCode === null) {
    const exited = new Promise((r) => cli.once("exit", r));
    cli.kill("SIGTERM");
    await exited;
  }
  await emu.close();
}, 20_000);

describe("minipod worker on a load-balancing endpoint: processes as the scaler asks", () => {
  it("starts workersMin at once, a second process under load, and stops the idle one after idleTimeout of virtual time", async () => {
    // workersMin: 1 process, ready once its /ping says 200.
    await eventually(async () => ((await workers()).some((w) => w.state === "ready") ? true : undefined), 10_000, `the first process ready:\n${out}`);
    expect((await workers()).map((w) => w.id)).toEqual(["node-1"]);
    // node-1 busy with a request (requestCount 1): the next one makes a second process start, and is its.
    const held = new AbortController();
    const busy = fetch(`${emu.url}/lb/api/slow?ms=60000`, { headers: AUTH, signal: held.signal }).catch(() => "aborted");
    await eventually(async () => ((await workers())[0]?.inFlight === 1 ? true : undefined), 10_000, "node-1 busy");
    const second = await call("/slow");
    expect(second.status, out).toBe(200);
    expect(second.worker).toBe("node-2");
    expect(second.body).toMatchObject({ worker: "node-2", health: "/ping", endpoint: "api", port: expect.stringMatching(/^\d+$/) });
    held.abort();
    expect(await busy).toBe("aborted");
    await eventually(async () => ((await workers()).every((w) => w.inFlight === 0) ? true : undefined), 10_000, "node-1 free");
    expect((await workers()).map((w) => w.id)).toEqual(["node-1", "node-2"]);
    // Idle for idleTimeout: one goes (workersMin stays), and its process is stopped.
    await emu.clock.advance(29_999);
    expect(await workers()).toHaveLength(2);
    await emu.clock.advance(1);
    expect((await workers()).map((w) => w.id)).toEqual(["node-1"]);
    await eventually(() => (/node-2 is idle: minipod's scaler stops it/.test(out) && /\[node-2\] minipod: exited on SIGTERM/.test(out) ? true : undefined), 10_000, "the idle process stopping");
  }, 30_000);

  it("replaces a process that exits: out of the pool at once, another started as the scaler asks", async () => {
    const [only] = await workers();
    expect(only!.id).toBe("node-1");
    const bye = await fetch(`${emu.url}/lb/api/exit`, { headers: AUTH });
    expect(bye.status).toBe(200);
    await eventually(async () => (!(await workers()).some((w) => w.id === "node-1") ? true : undefined), 10_000, "node-1 gone from the pool");
    const again = await call("/slow");
    expect(again.status, out).toBe(200);
    expect(again.worker).toBe("node-3");
    expect((await workers()).map((w) => w.id)).toEqual(["node-3"]);
    expect(out).toMatch(/\[node-1\] minipod: exited with code 3/);
  }, 30_000);

  it("refuses a second launcher for the same endpoint with 409, and a queue endpoint with 404", async () => {
    const second = await fetch(`${emu.url}/_emulator/load-balancers/api/launcher`);
    expect(second.status).toBe(409);
    expect(((await second.json()) as { detail: string }).detail).toMatch(/another launcher/);
    expect((await fetch(`${emu.url}/_emulator/load-balancers/nope/launcher`)).status).toBe(404);
  });

  it("stops its processes on SIGTERM, and minipod forgets them", async () => {
    const exited = new Promise<number | null>((r) => cli.once("exit", r));
    cli.kill("SIGTERM");
    expect(await exited).toBe(0);
    await eventually(async () => ((await workers()).length === 0 ? true : undefined), 5_000, "the workers removed");
  }, 20_000);
});

describe("minipod worker following the scaler when minipod stops", () => {
  it("stops its processes and exits 0", async () => {
    const short = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: "external", workersMin: 1 }] } });
    let log = "";
    const child = spawn(process.execPath, [BIN, "worker", "--url", short.url, "--", process.execPath, SERVER], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", r));
    try {
      await eventually(() => (/minipod: started:/.test(log) ? true : undefined), 10_000, "the process started");
    } finally {
      await short.close();
    }
    expect(await exited).toBe(0);
    expect(log).toMatch(/minipod at http:\/\/127\.0\.0\.1:\d+ stopped: stopping the worker\(s\)/);
    expect(log).toMatch(/minipod: exited on SIGTERM/);
  }, 20_000);
});

describe("rate limits and worker crashes with a Node http server as the worker", () => {
  let server: Server;
  let hits = 0;
  let limited: Emulator;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/hang") return; // answers nothing until the client goes away
      if (req.url !== "/ping") hits++;
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    limited = await createEmulator({
      clock: { mode: "manual", start: Date.UTC(2026, 2, 4, 5, 29, 44) },
      config: { rateLimits: { loadBalancer: { requests: 2 }, queue: { requestsPerWorker: 0 } }, endpoints: [{ id: "node", type: "LOAD_BALANCER", handler: url }] },
    });
  });
  afterAll(async () => {
    await limited.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("answers its requests with RateLimit headers, then 429 with Retry-After without asking the worker", async () => {
    // Which requests the direct relay (before the app) answered.
    const direct = (limited.app as unknown as App).table;
    const handle = direct.take.bind(direct);
    let relayed = 0;
    direct.take = (req, res) => (handle(req, res) ? (relayed++, true) : false);
    const get = () => fetch(`${limited.url}/lb/node/x`, { headers: AUTH, signal: AbortSignal.timeout(10_000) });
    const first = await get();
    expect(first.status).toBe(200);
    expect(await first.text()).toBe("ok");
    expect(first.headers.get("ratelimit")).toBe('"lb";r=1;t=6');
    expect(first.headers.get("ratelimit-policy")).toBe('"lb";q=2;w=10');
    expect((await get()).headers.get("ratelimit")).toBe('"lb";r=0;t=6');
    expect(relayed).toBe(2);
    const refused = await get();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("6");
    expect(refused.headers.get("ratelimit")).toBe('"lb";r=0;t=6');
    expect(hits).toBe(2);
    // A WebSocket upgrade counts as one of the endpoint's requests too.
    const upgrade = await new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
      const r = request(`${limited.url}/lb/node/ws`, {
        headers: { ...AUTH, connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" },
      });
      r.on("response", (res) => resolve({ status: res.statusCode!, retryAfter: res.headers["retry-after"] as string | undefined }));
      r.on("upgrade", () => reject(new Error("upgraded over the limit")));
      r.on("error", reject);
      r.end();
    });
    expect(upgrade).toEqual({ status: 429, retryAfter: "6" });
    await limited.clock.advance(6000);
    expect((await get()).status).toBe(200);
  });

  it("a worker-crash rule's atMs cuts a request atMs of virtual time after it reached the worker (502), out of the pool until its health says ready", async () => {
    const emu2 = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "node", type: "LOAD_BALANCER", handler: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }] } });
    try {
      const get = (path: string) => fetch(`${emu2.url}/lb/node${path}`, { headers: AUTH, signal: AbortSignal.timeout(10_000) });
      expect((await get("/x")).status).toBe(200);
      await emu2.faults.add({ endpoint: "node", fault: { type: "worker-crash", atMs: 3000 }, times: 1 });
      const hung = get("/hang");
      await eventually(
        async () => ((await (await fetch(`${emu2.url}/_emulator/load-balancers`)).json()) as Listed).endpoints[0]!.workers[0]!.inFlight === 1 || undefined,
        5_000,
        "the request at the worker",
      );
      await emu2.clock.advance(3000);
      const crashed = await hung;
      expect(crashed.status).toBe(502);
      expect(((await crashed.json()) as { error: string }).error).toMatch(/crashed 3000 ms into the request/);
      // Its /ping still says 200: back in the pool.
      expect((await get("/x")).status).toBe(200);
    } finally {
      await emu2.close();
    }
  });
});

describe("minipod worker on a load-balancing endpoint, beside minipod --watch", () => {
  it("outlives a restart on a config edit: its processes go with the old minipod, and the restarted one's scaler starts new ones", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-lb-watch-"));
    const cfg = join(dir, "emulator.config.json");
    const config = (extra: object[] = []) => JSON.stringify({ endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: "external", workersMin: 1, workersMax: 1 }, ...extra] });
    writeFileSync(cfg, config());
    const server = await startCli(["--watch", "--config", cfg, "--log-level", "warn"]);
    const launcher = spawn(process.execPath, [BIN, "worker", "--url", server.url, "--endpoint", "api", "--worker-id", "w", "--", process.execPath, SERVER], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let said = "";
    launcher.stdout!.on("data", (d: Buffer) => (said += d.toString()));
    launcher.stderr!.on("data", (d: Buffer) => (said += d.toString()));
    const exited = new Promise<number | null>((r) => launcher.once("exit", r));
    const hello = () => fetch(`${server.url}/lb/api/x`, { headers: AUTH, signal: AbortSignal.timeout(15_000) }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));
    try {
      expect(await hello()).toMatchObject({ status: 200, body: { worker: "w-1" } });
      writeFileSync(cfg, config([{ id: "added", handler: "echo" }]));
      await server.stderrContains("config reloaded, 2 endpoint(s)");
      await eventually(() => (/minipod at http:\/\/127\.0\.0\.1:\d+ is back/.test(said) ? true : undefined), 20_000, `the launcher following the restarted minipod:\n${said}`);
      expect(await hello(), said).toMatchObject({ status: 200, body: { worker: "w-2" } });
      expect(launcher.exitCode).toBe(null);
      expect(said).not.toMatch(/stopping the worker/);
    } finally {
      launcher.kill("SIGTERM");
      await exited;
      await server.stop();
    }
  }, 60_000);
});
