import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator, type ExternalWorkerView } from "../../src/index.js";
import { FakeWall } from "../support/fake-wall.js";

/**
 * The worker side's rules, request by request, in the shapes the service's worker library sends
 * (bare key, form content type with a JSON body, its own query parameters appended). The library
 * itself is driven in python-worker*.test.ts; here are the cases it cannot be made to produce on
 * demand. Wall time is a FakeWall: holds and heartbeat deadlines move only when told.
 */
let emu: Emulator;
let wall: FakeWall;
afterEach(() => emu?.close());

const boot = (externalWorkers: Record<string, number> = {}) => {
  wall = new FakeWall();
  return createEmulator({
    clock: { mode: "manual", wall },
    config: { endpoints: [{ id: "ext", handler: "external" }, { id: "sim", handler: "echo", workersMin: 1 }], externalWorkers: { pingIntervalMs: 1000, ...externalWorkers } },
  }).then((x) => (emu = x));
};

const KEY = { authorization: "worker-key" };
const FORM = { ...KEY, "content-type": "application/x-www-form-urlencoded" };
type Reply = { status: number; body: any };
const reply = async (res: Response): Promise<Reply> => {
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};
const get = (path: string) => fetch(`${emu.url}/v2/ext/${path}`, { headers: KEY }).then(reply);
const post = (path: string, body: unknown) => fetch(`${emu.url}/v2/ext/${path}`, { method: "POST", headers: FORM, body: JSON.stringify(body) }).then(reply);
const run = async (input: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  ((await (await fetch(`${emu.url}/v2/ext/run`, { method: "POST", headers: KEY, body: JSON.stringify({ input, ...extra }) })).json()) as { id: string }).id;
const status = async (id: string) => (await fetch(`${emu.url}/v2/ext/status/${id}`, { headers: KEY })).json() as Promise<Record<string, any>>;
const health = async () => ((await (await fetch(`${emu.url}/v2/ext/health`, { headers: KEY })).json()) as { workers: Record<string, number> }).workers;
const workers = async () => ((await (await fetch(`${emu.url}/_emulator/workers`)).json()) as { workers: ExternalWorkerView[] }).workers;
/** Resolves once `worker` has `n` requests held open (bounded). */
async function heldOpen(worker: string, n = 1): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (((await workers()).find((w) => w.id === worker)?.openPolls ?? 0) >= n) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`${worker} never had ${n} poll(s) held open`);
}
/** A take that has a job waiting answers at once. */
const take = async (worker: string, query = "?gpu=x&job_in_progress=0") => (await get(`job-take/${worker}${query}`)).body as { id: string; input: unknown };

describe("the worker side, request by request", () => {
  it("holds an empty job-take until a job comes, and hands it over then", async () => {
    await boot();
    const held = get("job-take/w1?gpu=x&job_in_progress=0");
    const id = await run({ prompt: "hi" });
    expect(await held).toEqual({ status: 200, body: { id, input: { prompt: "hi" } } });
    expect(await status(id)).toMatchObject({ status: "IN_PROGRESS", workerId: "w1" });
  });

  it("ends an empty hold with 204 after pollHoldMs of wall time, and at once on reset, restore and close", async () => {
    await boot({ pollHoldMs: 5000 });
    const bounded = get("job-take/w1?gpu=x");
    await heldOpen("w1");
    wall.advance(4999);
    wall.advance(1);
    expect((await bounded).status).toBe(204);

    const onReset = get("job-take-batch/w1?gpu=x&batch_size=2");
    const stopReset = get("job-stop/w1?gpu=x");
    await heldOpen("w1", 2);
    await emu.reset();
    expect([(await onReset).status, (await stopReset).status]).toEqual([204, 204]);

    emu.snapshot("empty");
    const onRestore = get("job-take/w3?gpu=x");
    await heldOpen("w3");
    await emu.restore("empty");
    expect((await onRestore).status).toBe(204);

    const onClose = fetch(`${emu.url}/v2/ext/job-take/w2?gpu=x`, { headers: KEY });
    await heldOpen("w2");
    await emu.close();
    // Answered, not cut: close did not wait for the hold (nor for its 2 s limit).
    const res = await onClose;
    expect(res.status).toBe(204);
    expect(res.headers.get("connection")).toBe("close");
  });

  it("hands out batches, oldest first", async () => {
    await boot();
    const ids = [await run({ n: 1 }), await run({ n: 2 }), await run({ n: 3 })];
    const batch = (await get("job-take-batch/w9?gpu=x&job_in_progress=0&batch_size=2")).body as Array<{ id: string }>;
    expect(batch.map((j) => j.id)).toEqual(ids.slice(0, 2));
    expect((await get("job-take-batch/w9?gpu=x&job_in_progress=1&batch_size=2")).body.map((j: { id: string }) => j.id)).toEqual([ids[2]]);
  });

  it("takes results in both URL forms; a repeated isStream counts its last value", async () => {
    await boot();
    const a = await run();
    await take("w1");
    expect(await post(`job-done/w1/${a}?gpu=x&isStream=false`, { output: "platform form" })).toEqual({ status: 200, body: { id: a, status: "COMPLETED" } });

    // The query form with isStream already in it, as older instructions had it: the library
    // appends its own, and its value counts.
    const b = await run();
    await take("w1");
    expect((await post(`job-stream/w1?jobId=${b}&isStream=true&isStream=false`, { output: "piece" })).status).toBe(200);
    expect(await post(`job-done/w1?jobId=${b}&isStream=false&isStream=true`, { output: [] })).toEqual({ status: 200, body: { id: b, status: "COMPLETED" } });
    // A stream's end: the output is what job-done sent (the chunks are on /stream only).
    expect((await status(b)).output).toEqual([]);
  });

  it("refuses what a worker could send wrong, with a 4xx saying what", async () => {
    await boot();
    const id = await run();
    await take("w1");
    const noId = await post("job-done/w1?isStream=false", { output: 1 });
    expect(noId.status).toBe(400);
    expect(JSON.stringify(noId.body)).toMatch(/job-done\/\{worker_id\}\/\{job_id\} or \?jobId=/);
    expect((await post(`job-done/w1/${id}?jobId=other`, { output: 1 })).body.detail).toMatch(/given twice and differs/);
    expect((await post(`job-stream/w1/${id}`, { stream: "x" })).body.detail).toMatch(/a stream chunk is \{"output": \.\.\.\}/);
    expect((await post(`job-done/w1/${id}?isStream=maybe`, { output: 1 })).status).toBe(400);
    const noQuery = await get("job-take/w1&job_in_progress=0");
    expect(noQuery.status).toBe(400);
    expect(JSON.stringify(noQuery.body)).toMatch(/RUNPOD_WEBHOOK_GET_JOB.*must end with a query string/);
    expect((await post("job-done/w1/no-such-job", { output: 1 })).status).toBe(404);
    expect((await post(`job-done/w2/${id}`, { output: "stolen" })).status).toBe(409);
    expect((await status(id)).status).toBe("IN_PROGRESS");
  });

  it("refuses a result the service would not take (an error that is not a string, another key, another status), failing its job", async () => {
    await boot();
    // A handler's `return {"error": {...}}`: the library posts the dict as it is; the service does
    // not fail a job on it, so minipod must not turn it into text and fail the job quietly.
    const dict = await run();
    await take("w1");
    const refused = await post(`job-done/w1/${dict}?gpu=x&isStream=false`, { error: { message: "bad prompt" } });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/"error" must be a string, got an object/);
    expect(await status(dict)).toMatchObject({ status: "FAILED", error: expect.stringMatching(/^worker w1's result was refused: "error" must be a string/) });
    expect((await status(dict)).output).toBeUndefined();
    // Posted again, it finds the job already ended.
    expect((await post(`job-done/w1/${dict}?gpu=x&isStream=false`, { error: "bad prompt" })).status).toBe(409);

    for (const [body, message] of [
      [{ error: ["a", "b"] }, /got a list/],
      [{ error: 404 }, /got a number/],
      [{ result: "x" }, /"result" is not among them/],
      [{ status: "COMPLETED", output: 1 }, /only "IN_PROGRESS"/],
    ] as const) {
      const id = await run();
      await take("w1");
      const answer = await post(`job-done/w1/${id}?gpu=x&isStream=false`, body);
      expect([answer.status, answer.body.detail]).toEqual([400, expect.stringMatching(message)]);
      expect((await status(id)).status).toBe("FAILED");
    }

    // What the library can send and the service cannot take: NaN (Python's json.dumps writes it)
    // and a body over the 20 MB the library calls the limit. Refused; the job is not ended by them.
    const raw = (path: string, body: string) => fetch(`${emu.url}/v2/ext/${path}`, { method: "POST", headers: FORM, body }).then(reply);
    const odd = await run();
    await take("w2");
    expect((await raw(`job-done/w2/${odd}?gpu=x&isStream=false`, '{"output": NaN}')).status).toBe(400);
    expect((await raw(`job-done/w2/${odd}?gpu=x&isStream=false`, JSON.stringify({ output: "x".repeat(20 * 1024 * 1024) }))).status).toBe(413);
    expect((await status(odd)).status).toBe("IN_PROGRESS");

    // A progress update of the wrong shape is refused and leaves the job running.
    const running = await run();
    await take("w1");
    expect((await post(`job-done/w1/${running}?gpu=x&isStream=false`, { status: "IN_PROGRESS", output: 1, extra: true })).status).toBe(400);
    expect((await status(running)).status).toBe("IN_PROGRESS");
    // What the library does send is taken: a string error with the rest of the handler's dict.
    expect((await post(`job-done/w1/${running}?gpu=x&isStream=false`, { output: { detail: 1 }, error: "no" })).status).toBe(200);
    expect(await status(running)).toMatchObject({ status: "FAILED", error: "no", output: { detail: 1 } });
  });

  it("answers a plain OpenAI request from the job's output, not from its chunks (a generator without return_aggregate_stream)", async () => {
    await boot();
    const completion = { id: "c", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] };
    const ask = () =>
      fetch(`${emu.url}/v2/ext/openai/v1/chat/completions`, { method: "POST", headers: KEY, body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) }).then(reply);

    const forgot = ask();
    const a = (await take("w1")).id;
    expect((await post(`job-stream/w1/${a}?gpu=x`, { output: completion })).status).toBe(200);
    expect((await post(`job-done/w1/${a}?gpu=x&isStream=true`, { output: [] })).status).toBe(200);
    expect(await forgot).toMatchObject({ status: 500, body: { error: { message: expect.stringContaining("return_aggregate_stream") } } });

    const aggregated = ask();
    const b = (await take("w1")).id;
    expect((await post(`job-stream/w1/${b}?gpu=x`, { output: completion })).status).toBe(200);
    expect((await post(`job-done/w1/${b}?gpu=x&isStream=true`, { output: [completion] })).status).toBe(200);
    expect(await aggregated).toEqual({ status: 200, body: completion });
  });

  it("answers a simulated endpoint's job-take with 400 only after a second, so a misconfigured worker cannot flood", async () => {
    await boot();
    let answered: Reply | undefined;
    const p = fetch(`${emu.url}/v2/sim/job-take/w1?gpu=x`, { headers: KEY }).then(reply).then((r) => (answered = r));
    // The refusal waits on the wall clock, which moves only when told: once its timer is set
    // (however long a busy machine takes to get there; moved before, the clock would not end it).
    while (wall.pending === 0) await new Promise((r) => setTimeout(r, 5));
    expect(answered).toBeUndefined();
    wall.advance(1000);
    await p;
    expect(answered!.status).toBe(400);
    expect(answered!.body.detail).toMatch(/"handler": "external"/);
  });

  it("sends cancels, timeouts and expiries down the stop channel, held or not", async () => {
    await boot();
    const cancelled = await run();
    await take("w1");
    await fetch(`${emu.url}/v2/ext/cancel/${cancelled}`, { method: "POST", headers: KEY });
    expect(await get("job-stop/w1?gpu=x")).toEqual({ status: 200, body: { jobsToStop: [cancelled] } });

    const timedOut = await run({}, { policy: { executionTimeout: 5000 } });
    await take("w1");
    const held = get("job-stop/w1?gpu=x");
    await heldOpen("w1");
    await emu.clock.advance(5000);
    expect(await held).toEqual({ status: 200, body: { jobsToStop: [timedOut] } });
    expect((await post(`job-done/w1/${timedOut}`, { output: "late" })).status).toBe(409);
  });

  it("sends a stop again until the worker lets go of the job: one heard before the worker started the job still reaches it", async () => {
    await boot();
    const id = await run();
    await take("w1");
    // Cancelled the moment it is IN_PROGRESS: the library hears the stop before it has started the
    // job, finds nothing to stop, and starts the job.
    await fetch(`${emu.url}/v2/ext/cancel/${id}`, { method: "POST", headers: KEY });
    expect(await get("job-stop/w1?gpu=x")).toEqual({ status: 200, body: { jobsToStop: [id] } });
    // Still busy with it as far as anyone can tell: shown running it, not idle.
    expect(await workers()).toEqual([expect.objectContaining({ id: "w1", state: "running", jobIds: [], stoppingJobIds: [id] })]);
    expect(await health()).toMatchObject({ idle: 0, running: 1 });
    // Its next stop poll hears the stop again, a moment later (STOP_REPEAT_MS of wall time).
    const again = get("job-stop/w1?gpu=x");
    await heldOpen("w1");
    wall.advance(250);
    expect(await again).toEqual({ status: 200, body: { jobsToStop: [id] } });
    // A heartbeat that still lists it keeps it stopping; one that no longer does lets it go.
    await get(`ping/w1?job_id=${id}&runpod_version=1.12.0`);
    expect((await workers())[0]).toMatchObject({ state: "running", stoppingJobIds: [id] });
    await get("job-stop/w1?gpu=x"); // the stop the heartbeat sent
    await get("ping/w1?runpod_version=1.12.0");
    expect((await workers())[0]).toMatchObject({ state: "idle", jobIds: [] });
    expect((await workers())[0]!.stoppingJobIds).toBeUndefined();
    const quiet = get("job-stop/w1?gpu=x");
    await heldOpen("w1");
    wall.advance(250);
    wall.advance(20_000);
    expect((await quiet).status).toBe(204);

    // So do a job-take saying it holds none, and a result (refused: the job is over).
    const second = await run();
    await take("w1");
    await fetch(`${emu.url}/v2/ext/cancel/${second}`, { method: "POST", headers: KEY });
    expect((await workers())[0]).toMatchObject({ state: "running", stoppingJobIds: [second] });
    const empty = get("job-take/w1?gpu=x&job_in_progress=0");
    await heldOpen("w1");
    expect((await workers())[0]).toMatchObject({ state: "idle" });
    wall.advance(20_000);
    expect((await empty).status).toBe(204);
    const third = await run();
    await take("w1");
    await fetch(`${emu.url}/v2/ext/cancel/${third}`, { method: "POST", headers: KEY });
    expect((await post(`job-done/w1/${third}`, { output: "late" })).status).toBe(409);
    expect((await workers())[0]).toMatchObject({ state: "idle" });
  });

  it("reads the heartbeat: job ids it should no longer run are stopped, an unhealthy start is counted", async () => {
    await boot();
    expect((await get("ping/w1?job_id=gone-job%2Cother-job&runpod_version=1.12.0")).status).toBe(200);
    expect(await get("job-stop/w1?gpu=x")).toEqual({ status: 200, body: { jobsToStop: ["gone-job", "other-job"] } });
    expect(await workers()).toEqual([expect.objectContaining({ id: "w1", state: "idle", reportedJobIds: ["gone-job", "other-job"], runtimeVersion: "1.12.0" })]);

    await get("ping/w2?status=unhealthy&check=gpu&reason=no%20CUDA&runpod_version=1.12.0");
    expect(await health()).toMatchObject({ idle: 1, unhealthy: 1 });
    expect((await workers()).find((w) => w.id === "w2")).toMatchObject({ state: "unhealthy", reason: "gpu failed: no CUDA" });
  });

  it("re-queues the jobs of a worker that asks for work holding none (job_in_progress=0)", async () => {
    await boot();
    const id = await run();
    await take("w1");
    const again = await take("w1", "?gpu=x&job_in_progress=0");
    expect(again.id).toBe(id);
    expect(await status(id)).toMatchObject({ status: "IN_PROGRESS", retries: 1 });
    expect(emu.events(id).map((e) => e.cause)).toContain("worker w1 asked for work holding no job (job_in_progress=0): it no longer has the job; re-queued");
    // job_in_progress=1 leaves them alone.
    const other = await run();
    await take("w1", "?gpu=x&job_in_progress=1");
    expect((await status(other)).retries).toBeUndefined();
  });

  it("loses a silent worker: its job goes back to the queue, up to three times, then fails", async () => {
    await boot();
    const id = await run();
    for (let lost = 1; lost <= 3; lost++) {
      await take(`w${lost}`);
      wall.advance(3000);
      expect(await status(id)).toMatchObject({ status: "IN_QUEUE", retries: lost });
    }
    await take("w4");
    wall.advance(3000);
    const failed = await status(id);
    expect(failed).toMatchObject({ status: "FAILED", retries: 3 });
    expect(failed.error).toMatch(/worker w4 lost: no heartbeat or request for 3 s; the job had already gone back to the queue 3 time\(s\), so it fails instead/);
    expect(await health()).toMatchObject({ idle: 0, running: 0 });
    expect((await workers()).map((w) => w.state)).toEqual(["lost", "lost", "lost", "lost"]);
  });

  it("answers a progress update that arrives after the worker's own result, changing nothing", async () => {
    await boot();
    const id = await run();
    await take("w1");
    await post(`job-done/w1/${id}`, { output: "done" });
    expect(await post(`job-done/w1/${id}?isStream=false`, { status: "IN_PROGRESS", output: { percent: 99 } })).toEqual({ status: 200, body: { id, status: "COMPLETED" } });
    expect((await status(id)).output).toBe("done");
    expect((await post(`job-done/w2/${id}`, { status: "IN_PROGRESS", output: 1 })).status).toBe(409);
    // A second result is not a progress update: refused, the first one stays.
    expect((await post(`job-done/w1/${id}`, { output: "again" })).status).toBe(409);
    expect((await status(id)).output).toBe("done");
  });

  it("stops a worker that asks to be (stopPod): it leaves /health and its polls end until it asks for work again", async () => {
    await boot();
    const id = await run();
    await take("w1");
    const stop = get("job-stop/w1?gpu=x");
    await heldOpen("w1");
    await post(`job-done/w1/${id}?isStream=false`, { output: 1, stopPod: true });
    expect((await stop).status).toBe(204);
    expect((await get("job-stop/w1?gpu=x")).status).toBe(204); // answered at once: it is on its way out
    expect(await health()).toMatchObject({ idle: 0, running: 0 });
    expect((await workers())[0]).toMatchObject({ state: "stopped", reason: `asked to be stopped after job ${id} (stopPod)` });
    const next = await run();
    expect((await take("w1")).id).toBe(next);
    expect((await workers())[0]).toMatchObject({ state: "running" });
  });
});
