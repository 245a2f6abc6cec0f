import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

let emu: Emulator;
afterEach(() => emu?.close());

const KEY = "worker-key";
const boot = () =>
  createEmulator({ clock: "manual", config: { endpoints: [{ id: "ext", handler: "external", workersMin: 2, workersMax: 5 }, { id: "sim", handler: "echo", workersMin: 1 }] } }).then((x) => (emu = x));

/** A worker process as the real worker library writes it: bare key, form content type with a JSON body. */
function worker(id: string) {
  const base = () => `${emu.url}/v2/ext`;
  const headers = { authorization: KEY, "content-type": "application/x-www-form-urlencoded" };
  return {
    take: async () => {
      const res = await fetch(`${base()}/job-take/${id}?gpu=local&job_in_progress=0`, { headers: { authorization: KEY } });
      return res.status === 204 ? undefined : ((await res.json()) as { id: string; input: Record<string, unknown> });
    },
    post: async (jobId: string, body: unknown, isStream = false) => {
      const res = await fetch(`${base()}/job-done/${id}?jobId=${jobId}&isStream=${isStream}`, { method: "POST", headers, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
  };
}
const client = {
  run: async (input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    ((await (await fetch(`${emu.url}/v2/ext/run`, { method: "POST", headers: { authorization: `Bearer k` }, body: JSON.stringify({ input, ...extra }) })).json()) as { id: string }).id,
  status: async (id: string) => (await fetch(`${emu.url}/v2/ext/status/${id}`, { headers: { authorization: "k" } })).json() as Promise<Record<string, unknown>>,
  health: async () => (await fetch(`${emu.url}/v2/ext/health`, { headers: { authorization: "k" } })).json() as Promise<{ jobs: Record<string, number>; workers: Record<string, number> }>,
};

describe("the worker protocol", () => {
  it("a worker takes jobs, streams, reports progress and finishes them", async () => {
    await boot();
    const w = worker("w1");
    expect(await w.take()).toBeUndefined(); // 204: nothing waits
    expect((await client.health()).workers).toMatchObject({ idle: 1, running: 0 });

    const id = await client.run({ prompt: "hello" });
    expect((await client.health()).jobs.inQueue).toBe(1); // no simulated worker took it
    const job = await w.take();
    expect(job).toEqual({ id, input: { prompt: "hello" } });
    expect(await client.status(id)).toMatchObject({ status: "IN_PROGRESS", workerId: "w1" });
    expect((await client.health()).workers).toMatchObject({ running: 1, idle: 0 });

    await emu.clock.advance(400);
    expect((await w.post(id, { status: "IN_PROGRESS", output: { percent: 50 } })).status).toBe(200);
    expect(await client.status(id)).toMatchObject({ status: "IN_PROGRESS", output: { percent: 50 } });
    await w.post(id, { output: "chunk-1" }, true);
    const streamed = await (await fetch(`${emu.url}/v2/ext/stream/${id}`, { headers: { authorization: "k" } })).json();
    expect(streamed).toEqual({ status: "IN_PROGRESS", stream: [{ output: "chunk-1" }] });

    await emu.clock.advance(600);
    expect((await w.post(id, { output: { text: "hi there" } })).body).toEqual({ id, status: "COMPLETED" });
    expect(await client.status(id)).toMatchObject({ status: "COMPLETED", output: { text: "hi there" }, executionTime: 1000, workerId: "w1" });
  });

  it("reports a worker's error as FAILED, and a retried job goes back to the workers", async () => {
    await boot();
    const w = worker("w1");
    const id = await client.run({});
    await w.take();
    await w.post(id, { error: "CUDA out of memory" });
    expect(await client.status(id)).toMatchObject({ status: "FAILED", error: "CUDA out of memory" });
    await fetch(`${emu.url}/v2/ext/retry/${id}`, { method: "POST", headers: { authorization: "k" } });
    expect((await w.take())?.id).toBe(id);
  });

  it("hands out batches, oldest first", async () => {
    await boot();
    const ids = [await client.run({ n: 1 }), await client.run({ n: 2 }), await client.run({ n: 3 })];
    const res = await fetch(`${emu.url}/v2/ext/job-take-batch/w9?batch_size=2`, { headers: { authorization: KEY } });
    expect(((await res.json()) as Array<{ id: string }>).map((j) => j.id)).toEqual(ids.slice(0, 2));
    expect((await client.health()).jobs).toMatchObject({ inProgress: 2, inQueue: 1 });
  });

  it("times out a worker that goes silent past the execution timeout", async () => {
    await boot();
    const w = worker("w1");
    const id = await client.run({}, { policy: { executionTimeout: 10_000 } });
    await w.take();
    await emu.clock.advance(10_000);
    expect(await client.status(id)).toMatchObject({ status: "TIMED_OUT" });
    const late = await w.post(id, { output: "too late" });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatch(/TIMED_OUT/);
    expect(await client.status(id)).toMatchObject({ status: "TIMED_OUT" });
  });

  it("refuses unknown jobs, double completion, another worker's job and a cancelled job, leaving them unchanged", async () => {
    await boot();
    const w1 = worker("w1");
    const w2 = worker("w2");
    expect((await w1.post("no-such-job", { output: 1 })).status).toBe(404);

    const a = await client.run({});
    await w1.take();
    expect((await w2.post(a, { output: "stolen" })).status).toBe(409);
    await w1.post(a, { output: "first" });
    const twice = await w1.post(a, { output: "second" });
    expect(twice.status).toBe(409);
    expect(await client.status(a)).toMatchObject({ status: "COMPLETED", output: "first" });

    const b = await client.run({});
    await w1.take();
    await fetch(`${emu.url}/v2/ext/cancel/${b}`, { method: "POST", headers: { authorization: "k" } });
    expect((await w1.post(b, { output: "after cancel" })).status).toBe(409);
    expect(await client.status(b)).toMatchObject({ status: "CANCELLED" });
    expect((await client.status(b)).output).toBeUndefined();
  });

  it("explains that simulated endpoints do not hand out jobs", async () => {
    await boot();
    const res = await fetch(`${emu.url}/v2/sim/job-take/w1`, { headers: { authorization: KEY } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/"handler": "external"/);
  });

  it("forgets idle workers not seen for a minute", async () => {
    await boot();
    await worker("w1").take();
    expect((await client.health()).workers.idle).toBe(1);
    await emu.clock.advance(60_001);
    expect((await client.health()).workers.idle).toBe(0);
  });
});
