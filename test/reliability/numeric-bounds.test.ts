import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCli } from "../../src/config/cli-args.js";
import { ConfigError } from "../../src/config/load.js";
import { VIRTUAL_TIME_MAX_MS } from "../../src/domain/bounds.js";
import { buildEmulator } from "../../src/compose/emulator.js";
import { inProcess, type InProcess, type Reply } from "../support/in-process.js";

/** Numbers as a client writes them in JSON or a query: the edges of every range, and beyond. */
const EDGES = [
  "0", "-0", "-1", "1", "0.5", "-0.5", "999", "1000", "1e3", "10000", "300000", "300001", "604800000", "604800001",
  "2147483647", "2147483648", "4294967296", "9007199254740991", "9007199254740992", "9007199254740993",
  String(VIRTUAL_TIME_MAX_MS), String(VIRTUAL_TIME_MAX_MS + 1), "8640000000000000", "8640000000000001", "8700000000000000",
  "1e16", "1e21", "1e308", "-1e308", "1e400", "-1e400", "5e-324", "123456789012345678901234567890",
];
const numberText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...EDGES) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 2, arbitrary: fc.maxSafeNat().map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String) },
);
/** The same as JavaScript numbers, for configs and options (NaN and the infinities included). */
const numberValue = fc.oneof(numberText.map(Number), fc.constantFrom(Number.NaN, Infinity, -Infinity, Number.MAX_VALUE));

interface Target {
  /** The name a refusal must mention. */
  field: string;
  /** The request for a number, as text. */
  send(n: string, e: Fixture): Promise<Reply>;
}

interface Fixture extends InProcess {
  /** A job just submitted (one made earlier may have reached its ttl or retention as the clock moved). */
  job(): Promise<string>;
}

const q = encodeURIComponent;
const raw = (e: InProcess, method: string, path: string, body?: string) => e.request(method, path, body);
const fault = (fault: string, extra = "") => (e: InProcess) => raw(e, "POST", "/_emulator/faults", `{"endpoint":"none",${extra}"fault":${fault}}`);

/** Every number a client can send, by route and field. */
const TARGETS: Target[] = [
  { field: "ms", send: (n, e) => raw(e, "POST", "/_emulator/clock/advance", `{"ms":${n}}`) },
  { field: "status", send: (n, e) => fault(`{"type":"http","status":${n}}`)(e) },
  { field: "retryAfter", send: (n, e) => fault(`{"type":"http","status":503,"retryAfter":${n}}`)(e) },
  { field: "ms", send: (n, e) => fault(`{"type":"latency","ms":${n}}`)(e) },
  { field: "atMs", send: (n, e) => fault(`{"type":"worker-crash","atMs":${n}}`)(e) },
  { field: "times", send: (n, e) => fault(`{"type":"timeout"}`, `"times":${n},`)(e) },
  { field: "after", send: (n, e) => fault(`{"type":"timeout"}`, `"after":${n},`)(e) },
  { field: "probability", send: (n, e) => fault(`{"type":"timeout"}`, `"probability":${n},`)(e) },
  { field: "limit", send: (n, e) => e.get(`/_emulator/jobs?limit=${q(n)}`) },
  { field: "offset", send: (n, e) => e.get(`/_emulator/jobs?offset=${q(n)}`) },
  { field: "limit", send: (n, e) => e.get(`/_emulator/requests?limit=${q(n)}`) },
  { field: "status", send: (n, e) => e.get(`/_emulator/requests?status=${q(n)}`) },
  { field: "offset", send: (n, e) => e.get(`/_dashboard/panels/jobs?offset=${q(n)}`) },
  { field: "ttl", send: (n, e) => raw(e, "POST", "/v2/echo/run", `{"input":{},"policy":{"ttl":${n}}}`) },
  { field: "executionTimeout", send: (n, e) => raw(e, "POST", "/v2/echo/run", `{"input":{},"policy":{"executionTimeout":${n}}}`) },
  { field: "wait", send: (n, e) => raw(e, "POST", `/v2/echo/runsync?wait=${q(n)}`, `{"input":{}}`) },
  { field: "ttl", send: async (n, e) => e.get(`/v2/echo/status/${await e.job()}?ttl=${q(n)}`) },
  { field: "wait", send: async (n, e) => e.get(`/v2/echo/status-sync/${await e.job()}?wait=${q(n)}`) },
  { field: "wait", send: async (n, e) => e.get(`/v2/echo/stream/${await e.job()}?wait=${q(n)}`) },
  { field: "batch_size", send: (n, e) => e.get(`/v2/ext/job-take-batch/w1?batch_size=${q(n)}`) },
  ...["workersMin", "workersMax", "idleTimeout", "gpuCount", "scalerValue", "executionTimeoutMs", "vcpuCount"].map((field) => ({
    field,
    send: (n: string, e: InProcess) => raw(e, "PATCH", "/v1/endpoints/managed", `{"${field}":${n}}`),
  })),
  { field: "size", send: (n, e) => raw(e, "POST", "/v2/network-volumes", `{"name":"v","dataCenter":"EU-RO-1","size":${n}}`) },
  ...["gpuCount", "vcpuCount", "containerDiskInGb", "volumeInGb", "minRAMPerGPU", "minDownloadMbps"].map((field) => ({
    field,
    send: (n: string, e: InProcess) => raw(e, "POST", "/v1/pods", `{"imageName":"img","${field}":${n}}`),
  })),
];

const CONFIG = {
  rateLimits: { enabled: false },
  templates: [{ id: "tpl", name: "tpl", handler: "echo" }],
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 0 },
    { id: "ext", handler: "external" },
    { id: "managed", handler: "echo", templateId: "tpl", coldStartMs: 0 },
  ],
};

async function macrotasks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe("extreme numbers sent to the control API and the service", () => {
  let e: Fixture;
  let errors: string[];
  beforeAll(async () => {
    errors = [];
    const base = await inProcess({ config: CONFIG, logLevel: "error", log: (line) => errors.push(line) });
    e = Object.assign(base, { job: async () => (await base.post("/v2/echo/run", { input: {} })).body.id as string });
  });
  afterAll(() => e.close());

  /** Sends one case; a request held on the manual clock is released by moving the clock on, never past its end. */
  async function send(target: Target, n: string): Promise<Reply> {
    const pending = target.send(n, e);
    for (let round = 0; round < 5; round++) {
      const done = await Promise.race([pending.then(() => true), macrotasks(3).then(() => false)]);
      if (done) break;
      await e.advance(Math.min(300_000, e.core.clock.remaining()));
    }
    return pending;
  }

  /** The emulator still takes, runs and answers a job, its clock reads, and nothing was logged as an error. */
  async function stillServing(where: string): Promise<void> {
    const run = await e.post("/v2/echo/run", { input: { after: where } });
    expect(run.status, where).toBe(200);
    await e.advance(0);
    const status = await e.get(`/v2/echo/status/${run.body.id}`);
    expect(status.body, where).toMatchObject({ status: "COMPLETED", output: { after: where } });
    const clock = await e.get("/_emulator/clock");
    expect(clock.status, where).toBe(200);
    expect(clock.body.now, where).toBeLessThanOrEqual(VIRTUAL_TIME_MAX_MS);
    expect(Date.parse(clock.body.iso), where).toBe(clock.body.now);
    expect(errors, where).toEqual([]);
  }

  it("answers each with 200 or a 4xx naming the field, and goes on serving", async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: TARGETS.length - 1 }), numberText, async (i, n) => {
        const target = TARGETS[i]!;
        const res = await send(target, n);
        const where = `${target.field}=${n} -> ${res.status} ${res.text.slice(0, 300)}`;
        expect(res.status, where).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.status, where).toBe(400);
          expect(res.headers.get("content-type"), where).toContain("application/problem+json");
          expect(res.body.detail, where).toContain(target.field);
        }
        // Rules that were taken go at once: they name an endpoint that does not exist anyway.
        await e.request("DELETE", "/_emulator/faults");
        await stillServing(where);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300), interruptAfterTimeLimit: 20_000 },
    );
  });

  it("refuses a clock advance past the end of virtual time with a 400 naming ms, and changes nothing", async () => {
    const before = (await e.get("/_emulator/clock")).body.now as number;
    const res = await e.post("/_emulator/clock/advance", { ms: 8_700_000_000_000_000 });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([`$.ms: expected number <= ${VIRTUAL_TIME_MAX_MS}`]);
    const far = await e.post("/_emulator/clock/advance", { ms: VIRTUAL_TIME_MAX_MS - before + 1 });
    expect(far.status).toBe(400);
    expect(far.body.errors[0]).toMatch(/^\$\.ms: expected at most \d+: virtual time ends at 9999-01-01T00:00:00.000Z/);
    expect((await e.get("/_emulator/clock")).body.now).toBe(before);
    await stillServing("past the end");
    // Right up to the end is allowed, and the emulator still works there.
    const toEnd = await e.post("/_emulator/clock/advance", { ms: VIRTUAL_TIME_MAX_MS - before });
    expect(toEnd.body).toMatchObject({ now: VIRTUAL_TIME_MAX_MS, iso: "9999-01-01T00:00:00.000Z" });
    await stillServing("at the end");
    expect((await e.post("/_emulator/clock/advance", { ms: 1 })).status).toBe(400);
    expect((await e.post("/_emulator/run-until-idle")).status).toBe(200);
    await expect(e.core.clock.advance(1)).rejects.toThrow(RangeError);
    await stillServing("after run-until-idle at the end");
  });
});

/** A config whose one numeric field is `value`. */
const CONFIG_FIELDS: Array<{ path: string; config: (v: number) => Record<string, unknown> }> = [
  { path: "clock.speed", config: (v) => ({ clock: { mode: "real", speed: v } }) },
  { path: "clock.start", config: (v) => ({ clock: { mode: "manual", start: v } }) },
  ...["workersMin", "workersMax", "idleTimeout", "coldStartMs", "executionTimeoutMs"].map((f) => ({
    path: `endpoints[0].${f}`,
    config: (v: number) => ({ endpoints: [{ id: "echo", handler: "echo", [f]: v, ...(f === "workersMin" ? { workersMax: 1000 } : {}) }] }),
  })),
  { path: "journal.maxEntries", config: (v) => ({ journal: { maxEntries: v } }) },
  { path: "webhooks.timeoutMs", config: (v) => ({ webhooks: { timeoutMs: v } }) },
  { path: "seed", config: (v) => ({ seed: v }) },
  { path: "rateLimits.rest.minute", config: (v) => ({ rateLimits: { rest: { minute: v } } }) },
  { path: "rateLimits.queue.requestsPerWorker", config: (v) => ({ rateLimits: { queue: { requestsPerWorker: v } } }) },
  { path: "faults[0].fault.retryAfter", config: (v) => ({ faults: [{ endpoint: "none", fault: { type: "http", status: 503, retryAfter: v } }] }) },
  { path: "faults[0].fault.atMs", config: (v) => ({ faults: [{ endpoint: "none", fault: { type: "worker-crash", atMs: v } }] }) },
  { path: "faults[0].fault.ms", config: (v) => ({ faults: [{ endpoint: "none", fault: { type: "latency", ms: v } }] }) },
  { path: "snapshots.maxCount", config: (v) => ({ snapshots: { maxCount: v } }) },
  { path: "snapshots.maxBytes", config: (v) => ({ snapshots: { maxBytes: v } }) },
  { path: "networkVolumes[0].size", config: (v) => ({ networkVolumes: [{ name: "v", dataCenter: "EU-RO-1", size: v }] }) },
  { path: "pricing.unlistedGpuPerHour", config: (v) => ({ pricing: { unlistedGpuPerHour: v } }) },
  { path: "pods[0].gpuCount", config: (v) => ({ pods: [{ name: "p", imageName: "img", gpuCount: v }] }) },
];

describe("extreme numbers in a config, a flag or an option", () => {
  it("start an emulator that serves, or stop start-up naming the field", async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: CONFIG_FIELDS.length - 1 }), numberValue, async (i, v) => {
        const field = CONFIG_FIELDS[i]!;
        const config = { endpoints: [{ id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 }], ...field.config(v) };
        let built: Awaited<ReturnType<typeof buildEmulator>>;
        try {
          built = await buildEmulator({ config });
        } catch (err) {
          expect(err, `${field.path}=${v}`).toBeInstanceOf(ConfigError);
          expect((err as Error).message, `${field.path}=${v}`).toContain(`${field.path}:`);
          return;
        }
        try {
          const res = await built.app.request("/v2/echo/runsync", { method: "POST", headers: { authorization: "Bearer k" }, body: '{"input":{"n":1}}' });
          expect(res.status, `${field.path}=${v}`).toBe(200);
          expect(built.core.clock.now()).toBeLessThanOrEqual(VIRTUAL_TIME_MAX_MS);
        } finally {
          built.core.close();
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 100), interruptAfterTimeLimit: 20_000 },
    );
  });

  it("the clock and port options of createEmulator are checked as the config is", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("speed", "start"), numberValue, async (key, v) => {
        let built: Awaited<ReturnType<typeof buildEmulator>> | undefined;
        try {
          built = await buildEmulator({ clock: { mode: "real", [key]: v } });
          expect(built.core.clock.now()).toBeLessThanOrEqual(VIRTUAL_TIME_MAX_MS);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          expect((err as Error).message).toContain(`clock.${key}:`);
        } finally {
          built?.core.close();
        }
      }),
      { numRuns: 100 },
    );
    await expect(buildEmulator({ port: 70_000 })).rejects.toThrow(/port must be an integer from 0 to 65535/);
    await expect(buildEmulator({ clock: { mode: "manual", start: 8.64e15 } })).rejects.toThrow(/clock\.start: /);
  });

  it("--speed and --port accept what they can use and name themselves otherwise", () => {
    fc.assert(
      fc.property(fc.constantFrom("--speed", "--port"), numberText, (flag, n) => {
        try {
          const cli = parseCli([`${flag}=${n}`], {}, "/nonexistent");
          if (flag === "--speed") expect(cli.speed! > 0 && cli.speed! <= 1_000_000).toBe(true);
          else expect(Number.isInteger(cli.port) && cli.port >= 0 && cli.port <= 65535).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          expect((err as Error).message).toContain(`${flag} must be`);
        }
      }),
      { numRuns: 300 },
    );
    expect(() => parseCli(["--speed", "1e13"], {}, "/nonexistent")).toThrow(/--speed must be a positive number up to 1000000, got "1e13"/);
  });
});

describe("billing over thousands of virtual years", () => {
  it("refuses a window of more than 10,000 buckets with 400 naming it, and answers a coarser one", async () => {
    const e = await inProcess({ config: { pods: [{ name: "p", imageName: "img", gpuTypeIds: ["NVIDIA GeForce RTX 4090"] }] } });
    try {
      await e.advance(5000 * 365 * 86_400_000);
      const fine = await e.get("/v1/billing/pods?bucketSize=hour&startTime=2000-01-01T00:00:00Z&endTime=7000-01-01T00:00:00Z");
      expect(fine.status).toBe(400);
      expect(fine.body.errors).toEqual([expect.stringMatching(/^query\.startTime: the window to endTime spans about \d+ hour buckets, more than 10000; narrow it or choose a larger bucketSize$/)]);
      const coarse = await e.get("/v1/billing/pods?bucketSize=year&startTime=2000-01-01T00:00:00Z&endTime=7000-01-01T00:00:00Z");
      expect(coarse.status).toBe(200);
      expect(coarse.body.length).toBeGreaterThan(4000);
      expect((await e.get("/v1/billing/pods?bucketSize=hour")).status).toBe(200);
    } finally {
      e.close();
    }
  });
});
