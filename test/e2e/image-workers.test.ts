import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { startCli } from "../support/cli.js";

// "An image is a command": an endpoint made through GraphQL (as the SDKs make theirs) whose image
// is one of the config's `images` gets worker processes of that command, started by minipod.

const WORKER = fileURLToPath(new URL("../fixtures/queue-node-worker.js", import.meta.url));
const KEY = { authorization: "Bearer k", "content-type": "application/json" };

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function gql<T>(e: Emulator, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${e.url}/graphql`, { method: "POST", headers: KEY, body: JSON.stringify({ query, variables }) });
  const body = (await res.json()) as { data: T; errors?: unknown };
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
}

const SAVE = "mutation($input: EndpointInput) { saveEndpoint(input: $input) { id } }";
const saveEndpoint = async (e: Emulator, imageName: string, extra: Record<string, unknown> = {}) =>
  (await gql<{ saveEndpoint: { id: string } }>(e, SAVE, { input: { name: "acme", workersMin: 0, workersMax: 2, idleTimeout: 5, ...extra, template: { name: `t-${imageName}`, imageName, env: [{ key: "GREETING", value: "from the template" }] } } })).saveEndpoint.id;

async function run(e: Emulator, endpoint: string, input: unknown): Promise<string> {
  const res = await fetch(`${e.url}/v2/${endpoint}/run`, { method: "POST", headers: KEY, body: JSON.stringify({ input }) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

async function workersOf(e: Emulator, endpoint: string): Promise<string[]> {
  const res = await fetch(`${e.url}/_emulator/workers`);
  const body = (await res.json()) as { workers: Array<{ endpointId: string; id: string; state: string }> };
  return body.workers.filter((w) => w.endpointId === endpoint && (w.state === "idle" || w.state === "running")).map((w) => w.id);
}

/** Resolves once `check` holds (it is asked every 50 ms of wall time, for real processes), else fails after `ms`. */
async function until(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("images: an endpoint's image is a command", { timeout: 60_000 }, () => {
  it("starts a worker process of the image's command at the first job, with the template's env and the entry's, and no process before", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "minipod-image-"));
    emu = await createEmulator({ log: () => {}, config: { images: [{ image: "acme/echo", command: [process.execPath, WORKER], env: { EXTRA: "1" }, cwd }] } });
    const id = await saveEndpoint(emu, "acme/echo:1.2");
    expect(emu.endpoints().find((x) => x.id === id)?.handler).toBe("external");
    expect(await workersOf(emu, id)).toEqual([]);
    const job = await run(emu, id, { n: 1 });
    const done = await emu.waitForJob(id, job, "COMPLETED", 600_000);
    expect(done.output).toMatchObject({ input: { n: 1 }, greeting: "from the template", cwd });
    const worker = (done.output as { worker: string }).worker;
    expect(await workersOf(emu, id)).toEqual([worker]);
    // What the process wrote is the worker's log, as the log service's snapshot shows it.
    const logs = (await fetch(`${emu.url}/v1/pod/${worker}/logs`, { headers: KEY }).then((r) => r.json())) as { container: string[] };
    expect(logs.container).toContainEqual(expect.stringMatching(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+ job ${job} on ${worker}$`)));
  });

  it("a worker process inherits minipod's environment but FLASH_IS_LIVE_PROVISIONING, which an entry's env may still set", async () => {
    const before = process.env.FLASH_IS_LIVE_PROVISIONING;
    process.env.FLASH_IS_LIVE_PROVISIONING = "true";
    process.env.MINIPOD_TEST_INHERITED = "yes";
    try {
      emu = await createEmulator({
        log: () => {},
        config: {
          images: [
            { image: "acme/plain", command: [process.execPath, WORKER] },
            { image: "acme/live", command: [process.execPath, WORKER], env: { FLASH_IS_LIVE_PROVISIONING: "true" } },
          ],
        },
      });
      const plain = await saveEndpoint(emu, "acme/plain:1");
      const done = await emu.waitForJob(plain, await run(emu, plain, {}), "COMPLETED", 600_000);
      expect(done.output).toMatchObject({ liveProvisioning: null, inherited: "yes" });
      const live = await saveEndpoint(emu, "acme/live:1");
      expect((await emu.waitForJob(live, await run(emu, live, {}), "COMPLETED", 600_000)).output).toMatchObject({ liveProvisioning: "true" });
    } finally {
      if (before === undefined) delete process.env.FLASH_IS_LIVE_PROVISIONING;
      else process.env.FLASH_IS_LIVE_PROVISIONING = before;
      delete process.env.MINIPOD_TEST_INHERITED;
    }
  });

  it("an entry's own env wins over the template's; an image of no entry keeps the default handler", async () => {
    emu = await createEmulator({ log: () => {}, config: { images: [{ image: "acme/*", command: [process.execPath, WORKER], env: { GREETING: "from the config" } }] } });
    const id = await saveEndpoint(emu, "acme/other:latest");
    const done = await emu.waitForJob(id, await run(emu, id, {}), "COMPLETED", 600_000);
    expect(done.output).toMatchObject({ greeting: "from the config" });
    const plain = await saveEndpoint(emu, "someone/else:1");
    expect(emu.endpoints().find((x) => x.id === plain)?.handler).not.toBe("external");
  });

  it("a secret referred to in the template's env reaches the worker process as its value; one not defined is named, left as written", async () => {
    const lines: string[] = [];
    emu = await createEmulator({ log: (line) => lines.push(line), config: { images: [{ image: "acme/echo:*", command: [process.execPath, WORKER] }] } });
    await gql(emu, "mutation($input: SecretCreateInput!) { secretCreate(input: $input) { id } }", { input: { name: "greet", value: "from a secret" } });
    const save = async (secret: string) =>
      (await gql<{ saveEndpoint: { id: string } }>(emu!, SAVE, { input: { name: secret, template: { name: secret, imageName: "acme/echo:1", env: [{ key: "GREETING", value: `{{ RUNPOD_SECRET_${secret} }}` }] } } })).saveEndpoint.id;
    const id = await save("greet");
    expect((await emu.waitForJob(id, await run(emu, id, {}), "COMPLETED", 600_000)).output).toMatchObject({ greeting: "from a secret" });
    const other = await save("absent");
    expect((await emu.waitForJob(other, await run(emu, other, {}), "COMPLETED", 600_000)).output).toMatchObject({ greeting: "{{ RUNPOD_SECRET_absent }}" });
    expect(lines.filter((l) => l.includes('secret "absent", not defined'))).toHaveLength(1);
  });

  it("a process that has not called in yet is initializing on /metrics", async () => {
    emu = await createEmulator({ log: () => {}, config: { images: [{ image: "acme/slow:*", command: [process.execPath, "-e", "setInterval(() => {}, 1000)"] }] } });
    const id = await saveEndpoint(emu, "acme/slow:1");
    await run(emu, id, {});
    const metrics = await fetch(`${emu.url}/v2/${id}/metrics`, { headers: KEY }).then((r) => r.json());
    expect(metrics).toMatchObject({ workers: { initializing: 1, ready: 0 }, readyWorkers: [] });
  });

  it("a process that ends before it asks for a job is reported, naming its command", async () => {
    const lines: string[] = [];
    emu = await createEmulator({ log: (line) => lines.push(line), config: { images: [{ image: "acme/broken:*", command: [process.execPath, "-e", "process.exit(3)"] }] } });
    const id = await saveEndpoint(emu, "acme/broken:1");
    await run(emu, id, {});
    await until(async () => lines.some((l) => l.includes("ended before it asked for a job")));
    expect(lines.find((l) => l.includes("ended before it asked for a job"))).toContain(`It ran: ${process.execPath} -e process.exit(3)`);
  });

  it("stops the processes when the endpoint is deleted", async () => {
    const lines: string[] = [];
    emu = await createEmulator({ log: (line) => lines.push(line), config: { images: [{ image: "acme/echo:*", command: [process.execPath, WORKER] }] } });
    const id = await saveEndpoint(emu, "acme/echo:1");
    await emu.waitForJob(id, await run(emu, id, {}), "COMPLETED", 600_000);
    expect(await workersOf(emu, id)).toHaveLength(1);
    await gql(emu, "mutation($id: String!) { deleteEndpoint(id: $id) }", { id });
    const seen: string[] = [];
    await until(async () => {
      const res = await fetch(`${emu!.url}/_emulator/workers`);
      const body = (await res.json()) as { workers: Array<{ endpointId: string; state: string }> };
      seen.splice(0, seen.length, ...body.workers.filter((w) => w.endpointId === id).map((w) => w.state));
      return seen.every((s) => s !== "idle" && s !== "running");
    });
    await until(async () => lines.some((l) => /exited|killed/.test(l)));
    // Stopped on purpose: not reported as a worker that could not start.
    expect(lines.filter((l) => l.includes("ended before it asked for a job"))).toEqual([]);
  });

  it("minipod --python names the interpreter {python} stands for", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-image-cli-"));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ images: [{ image: "acme/echo:*", command: ["{python}", WORKER] }] }));
    // Node stands in for the interpreter: the worker is a JavaScript file.
    const cli = await startCli(["--config", join(dir, "config.json"), "--python", process.execPath]);
    try {
      const save = await fetch(`${cli.url}/graphql`, { method: "POST", headers: KEY, body: JSON.stringify({ query: SAVE, variables: { input: { name: "cli", template: { name: "cli", imageName: "acme/echo:2" } } } }) });
      const id = ((await save.json()) as { data: { saveEndpoint: { id: string } } }).data.saveEndpoint.id;
      const res = await fetch(`${cli.url}/v2/${id}/runsync`, { method: "POST", headers: KEY, body: JSON.stringify({ input: { via: "cli" } }) });
      expect(await res.json()).toMatchObject({ status: "COMPLETED", output: { input: { via: "cli" } } });
    } finally {
      await cli.stop();
    }
  });

  it("stops an idle process after the endpoint's idleTimeout of virtual time, down to workersMin", async () => {
    emu = await createEmulator({ clock: "manual", log: () => {}, config: { images: [{ image: "acme/echo:*", command: [process.execPath, WORKER] }] } });
    const id = await saveEndpoint(emu, "acme/echo:1", { idleTimeout: 30 });
    const job = await run(emu, id, {});
    // The endpoint's cold start (1000 virtual ms, the default) ends before the process takes the job.
    await emu.clock.advance(1000);
    await until(async () => (await fetch(`${emu!.url}/v2/${id}/status/${job}`, { headers: KEY }).then((r) => r.json()) as { status: string }).status === "COMPLETED");
    expect(await workersOf(emu, id)).toHaveLength(1);
    await emu.clock.advance(10_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await workersOf(emu, id)).toHaveLength(1);
    await emu.clock.advance(25_000);
    await until(async () => (await workersOf(emu!, id)).length === 0);
  });

  describe("a first call's cold start is the endpoint's, on the virtual clock", () => {
    type Status = { status: string; delayTime?: number; executionTime?: number; workerId?: string };
    const status = (e: Emulator, id: string, job: string) => fetch(`${e.url}/v2/${id}/status/${job}`, { headers: KEY }).then((r) => r.json()) as Promise<Status>;

    it("manual clock: the process that has called takes no job until the cold start's virtual time has passed; delayTime is the cold start", async () => {
      emu = await createEmulator({ clock: "manual", log: () => {}, config: { images: [{ image: "acme/echo:*", command: [process.execPath, WORKER] }] } });
      const id = await saveEndpoint(emu, "acme/echo:1");
      expect(emu.endpoints().find((x) => x.id === id)?.coldStartMs).toBe(1000);
      const job = await run(emu, id, {});
      // The process starts and calls in real time; the job waits for the clock.
      await until(async () => (await fetch(`${emu!.url}/_emulator/workers`).then((r) => r.json()) as { workers: Array<{ endpointId: string }> }).workers.some((w) => w.endpointId === id));
      const metrics = await fetch(`${emu.url}/v2/${id}/metrics`, { headers: KEY }).then((r) => r.json());
      expect(metrics).toMatchObject({ workers: { initializing: 1 }, readyWorkers: [] });
      await emu.clock.advance(999);
      expect((await status(emu, id, job)).status).toBe("IN_QUEUE");
      await emu.clock.advance(1);
      await until(async () => (await status(emu!, id, job)).status === "COMPLETED");
      // Virtual time stood still while the job ran: delayTime is the cold start, executionTime 0.
      expect(await status(emu, id, job)).toMatchObject({ delayTime: 1000, executionTime: 0 });
      // A warm call: no cold start.
      const warm = await run(emu, id, {});
      await until(async () => (await status(emu!, id, warm)).status === "COMPLETED");
      expect(await status(emu, id, warm)).toMatchObject({ delayTime: 0 });
    });

    it("auto clock: the cold start is skipped and the process's real start is not counted: delayTime is exactly the cold start", async () => {
      // A worker that takes its time to start (1500 ms of wall time before its first call).
      const slow = join(mkdtempSync(join(tmpdir(), "minipod-slow-")), "slow.mjs");
      writeFileSync(slow, `await new Promise((r) => setTimeout(r, 1500));\nawait import(${JSON.stringify(WORKER)});\n`);
      emu = await createEmulator({ clock: "auto", log: () => {}, config: { images: [{ image: "acme/slow:*", command: [process.execPath, slow] }] } });
      const id = await saveEndpoint(emu, "acme/slow:1");
      const started = Date.now();
      const job = await run(emu, id, {});
      await until(async () => (await status(emu!, id, job)).status === "COMPLETED");
      expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
      expect((await status(emu, id, job)).delayTime).toBe(1000);
    });
  });
});
