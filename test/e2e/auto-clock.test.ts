// The waits that used to hang a test suite: each is now answered on createEmulator's default clock
// (auto) without moving time by hand, and a wait that moves time itself (waitForJob,
// runUntilIdle) never moves it past a job that a real worker process holds. The virtual delays
// here are far longer than the clients' own wall timeouts: only a clock that skips ahead ends them.
import { Hono } from "hono";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/compose/emulator.js";
import { createEmulator, type Emulator } from "../../src/index.js";
import { FakeWall } from "../support/fake-wall.js";
import { pythonAvailable, queue, runPyClient, startPyWorker } from "../support/python.js";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** The clients' own timeouts, in wall ms: what a hang runs into. */
const CLIENT_TIMEOUT_MS = 30_000;

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("createEmulator's default clock", () => {
  it("is auto", async () => {
    emu = await createEmulator();
    expect(emu.clock.mode).toBe("auto");
    const view = (await (await fetch(`${emu.url}/_emulator/clock`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ mode: "auto", waiting: 0, realWork: false });
  });

  it("gives way to the config's mode; the minipod command's default stays real", async () => {
    emu = await createEmulator({ config: { clock: { mode: "manual" } } });
    expect(emu.clock.mode).toBe("manual");
    await emu.close();
    emu = await startEmulator({ config: {} }, "real");
    expect(emu.clock.mode).toBe("real");
  });

  it("answers the openai client's chat call, whole and streamed, through a minute's cold start and paced tokens", async () => {
    emu = await createEmulator({
      config: { endpoints: [{ id: "llm", handler: "openai", coldStartMs: MINUTE, openai: { models: ["org/m"], tokenDelayMs: 5000, replyTokens: 8 } }] },
    });
    const client = new OpenAI({ apiKey: "any-key", baseURL: `${emu.url}/v2/llm/openai/v1`, timeout: CLIENT_TIMEOUT_MS, maxRetries: 0 });
    const messages = [{ role: "user" as const, content: "Say something." }];
    const before = emu.clock.now();
    const completion = await client.chat.completions.create({ model: "org/m", messages });
    const text = completion.choices[0]!.message.content!;
    expect(text.split(" ")).toHaveLength(8);
    // The cold start and eight tokens passed in virtual time.
    expect(emu.clock.now() - before).toBeGreaterThanOrEqual(MINUTE + 8 * 5000);
    const stream = await client.chat.completions.create({ model: "org/m", messages, stream: true });
    const deltas: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
    expect(deltas.join("")).toBe(text);
  });

  it("answers the first request to a load-balancing endpoint with no warm worker (a Hono app), after its cold start", async () => {
    const app = new Hono().post("/generate", async (c) => c.json({ text: ((await c.req.json()) as { prompt: string }).prompt }));
    emu = await createEmulator({ config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: app.fetch, workersMin: 0, coldStartMs: 90_000 }] } });
    const res = await fetch(`${emu.url}/lb/api/generate`, {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify({ prompt: "hi" }),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ text: "hi" });
  });

  it("ends a /runsync whose handler sleeps a minute, and keeps a finished job's result between /run and /status", async () => {
    emu = await createEmulator({ config: { endpoints: [{ id: "gen", handler: "scripted", workersMin: 1, coldStartMs: 0 }] } });
    const auth = { authorization: "k" };
    const sync = await fetch(`${emu.url}/v2/gen/runsync`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ input: { sleepMs: MINUTE, output: "done" } }),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const answer = (await sync.json()) as { status: string; output: unknown; executionTime: number };
    expect(answer).toMatchObject({ status: "COMPLETED", output: "done" });
    // A minute of virtual time, and the few wall ms auto time also follows.
    expect(answer.executionTime).toBeGreaterThanOrEqual(MINUTE);
    // Nobody waits between a /run and its /status: time follows the wall, so a result retained
    // 30 minutes is still there (a clock that skipped whenever it could would have dropped it).
    const { id } = (await (await fetch(`${emu.url}/v2/gen/run`, { method: "POST", headers: auth, body: JSON.stringify({ input: { output: "kept" } }) })).json()) as { id: string };
    await emu.waitForJob("gen", id, "COMPLETED");
    const status = await fetch(`${emu.url}/v2/gen/status/${id}`, { headers: auth });
    expect(await status.json()).toMatchObject({ status: "COMPLETED", output: "kept" });
  });
});

describe("durations on the auto clock", () => {
  const post = (url: string, body: object) => fetch(url, { method: "POST", headers: { authorization: "k" }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<Record<string, unknown>>);

  it("are exact from a fresh emulator's first job: a warm worker's 2-minute job and a 1 s cold start, 20 times over", async () => {
    const seen: Array<[unknown, unknown]> = [];
    for (let i = 0; i < 20; i++) {
      emu = await createEmulator({
        config: {
          endpoints: [
            { id: "warm", handler: "scripted", workersMin: 1, coldStartMs: 0 },
            { id: "cold", handler: "scripted", workersMin: 0, coldStartMs: 1000 },
          ],
        },
      });
      const long = await post(`${emu.url}/v2/warm/runsync?wait=300000`, { input: { sleepMs: 2 * MINUTE } });
      const cold = await post(`${emu.url}/v2/cold/runsync`, { input: {} });
      seen.push([long.executionTime, cold.delayTime]);
      await emu.close();
      emu = undefined;
    }
    expect(seen).toEqual(Array.from({ length: 20 }, () => [2 * MINUTE, 1000]));
  }, 60_000);

  it("count what a handler does before its first sleep, in the same run of code, as no time: a millisecond ticking meanwhile is not added", async () => {
    emu = await createEmulator({
      config: {
        endpoints: [
          {
            id: "tick",
            handler: async (_input, ctx) => {
              const wall = Date.now();
              while (Date.now() === wall); // the wall's millisecond turns while the handler runs
              await ctx.sleep(MINUTE);
              return "done";
            },
            workersMin: 1,
            coldStartMs: 0,
          },
        ],
      },
    });
    for (let i = 0; i < 5; i++) expect(await post(`${emu.url}/v2/tick/runsync`, { input: {} })).toMatchObject({ status: "COMPLETED", executionTime: MINUTE });
  });
});

describe("runUntilIdle", () => {
  it("advances through a load-balancing endpoint's cold start until its request is answered (manual clock)", async () => {
    const app = new Hono().get("/ready", (c) => c.text("ok"));
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: app.fetch, workersMin: 0, coldStartMs: 30_000 }] } });
    const before = emu.clock.now();
    const answer = fetch(`${emu.url}/lb/api/ready`, { headers: { authorization: "Bearer k" }, signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
    // The request reaches the pool and waits for a worker before the clock is run.
    type Listed = { endpoints: Array<{ status: { requests: { waiting: number } } }> };
    await expect.poll(async () => ((await (await fetch(`${emu!.url}/_emulator/load-balancers`)).json()) as Listed).endpoints[0]!.status.requests.waiting, { timeout: 15_000 }).toBe(1);
    await emu.runUntilIdle();
    expect(emu.clock.now() - before).toBe(30_000);
    expect(await (await answer).text()).toBe("ok");
  });
});

describe("runUntilIdle, through a paced stream", () => {
  it("moves time until a load-balancing endpoint's openai answer has streamed its last token (manual clock)", async () => {
    emu = await createEmulator({
      clock: "manual",
      config: { endpoints: [{ id: "llm", type: "LOAD_BALANCER", handler: "openai", workersMin: 1, coldStartMs: 0, openai: { models: ["m"], tokenDelayMs: 1000, replyTokens: 5 } }] },
    });
    const before = emu.clock.now();
    const res = await fetch(`${emu.url}/lb/llm/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true }),
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    const text = res.text();
    await emu.runUntilIdle();
    expect(emu.clock.now() - before).toBe(5000);
    expect(await text).toContain("data: [DONE]");
  });
});

describe("a job queued for worker processes, none live", () => {
  it("holds the auto clock for 30 s of wall time (a worker booting), then lets it skip to the job's ttl", async () => {
    const wall = new FakeWall();
    emu = await createEmulator({ clock: { mode: "auto", wall }, config: { endpoints: [{ id: "ext", handler: "external" }] } });
    const id = await queue(emu, "ext").run({ n: 1 }, { policy: { ttl: 10 * MINUTE } });
    const before = emu.clock.now();
    let ended: unknown;
    const waiting = emu.waitForJob("ext", id, "COMPLETED", DAY).catch((e: unknown) => (ended = e));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(ended).toBeUndefined();
    expect(emu.clock.now()).toBe(before);
    wall.advance(30_000); // no worker process called
    await waiting;
    expect(String(ended)).toMatch(/is gone \(ttl, retention or purge\)/);
    expect(emu.clock.now() - before).toBeGreaterThanOrEqual(10 * MINUTE);
  });
});

const available = pythonAvailable();

describe.skipIf(!available)("a job that a worker process really runs for 2 s", { timeout: 120_000 }, () => {
  it.each(["manual", "auto"] as const)("is waited for by waitForJob on the %s clock, not timed out, while a 7-day ttl elsewhere expires once nothing runs", async (mode) => {
    emu = await createEmulator({
      clock: mode,
      config: { endpoints: [{ id: "py", handler: "external" }, { id: "parked", handler: "echo", workersMax: 0 }], externalWorkers: { pingIntervalMs: 1000 } },
    });
    const parked = await queue(emu, "parked").run({ n: 1 }, { policy: { ttl: 7 * DAY } });
    // Submitted before the worker process has even started: it waits for that process.
    const py = queue(emu, "py");
    const id = await py.run({ do: "sleep", seconds: 2 });
    const worker = startPyWorker(emu, { endpoint: "py" });
    const done = await emu.waitForJob("py", id, "COMPLETED");
    expect(done.output).toMatchObject({ slept: 2 });
    expect(worker.lines.some((l) => l.includes(`TEST started ${id}`))).toBe(true);
    // And one submitted to the worker waiting for jobs: its 600 s execution timeout is the only timer ahead of it.
    const next = await py.run({ do: "sleep", seconds: 2 });
    expect((await emu.waitForJob("py", next, "COMPLETED")).output).toMatchObject({ slept: 2 });
    // Time never skipped while the job ran: the other job is still queued, its ttl not reached.
    expect((await queue(emu, "parked").status(parked)).status).toBe("IN_QUEUE");
    if (mode === "auto") {
      // Nothing runs now: a wait on it skips straight to its ttl.
      await expect(emu.waitForJob("parked", parked, "COMPLETED", 8 * DAY)).rejects.toThrow(/is gone \(ttl, retention or purge\)/);
    } else {
      await emu.runUntilIdle();
    }
    expect(emu.events(parked).at(-1)).toMatchObject({ cause: "ttl expired" });
  });
});

describe.skipIf(!available)("the service's Python client on the auto clock", { timeout: 90_000 }, () => {
  it("gets run_sync's output of a job that sleeps a virtual minute, with no one moving the clock", async () => {
    emu = await createEmulator({ clock: "auto", config: { endpoints: [{ id: "gen", handler: "scripted", workersMin: 0, coldStartMs: 10_000 }] } });
    const { results, errors } = await runPyClient(["run_sync"], { v2: `${emu.url}/v2`, endpoint: "gen", input: { sleepMs: MINUTE, output: { ok: true } } }, CLIENT_TIMEOUT_MS);
    expect(errors).toEqual({});
    expect(results.run_sync).toEqual({ ok: true });
  });
});
