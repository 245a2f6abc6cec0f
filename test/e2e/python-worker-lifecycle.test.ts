import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createEmulator, type Emulator, type ExternalWorkerView } from "../../src/index.js";
import { eventually, pythonAvailable, queue, startPyWorker } from "../support/python.js";
import { recorder, via, type Recorder } from "../support/recorder.js";

/**
 * The service's worker runtime (unchanged) through a job's whole life on minipod: cancel,
 * execution timeout and ttl reaching the running handler through the stop channel, a worker
 * killed with SIGKILL (lost as soon as its launcher sees it exit), a restarted worker,
 * `refresh_worker`, and what an idle worker costs. Manual clock: only the test moves virtual
 * time; the worker processes live in wall time, and the waits on them are bounded.
 */
const available = pythonAvailable();

const workersOf = async (emu: Emulator, endpoint: string) =>
  ((await (await fetch(`${emu.url}/_emulator/workers?endpoint=${endpoint}`)).json()) as { workers: ExternalWorkerView[] }).workers;

describe.skipIf(!available)("a Python worker's jobs, stops and life on minipod", { timeout: 60_000 }, () => {
  let emu: Emulator;
  let rec: Recorder;
  /** Moves virtual time through the control API (so that a recording replays it). */
  const advance = async (ms: number) => {
    const res = await fetch(`${via(emu.url)}/_emulator/clock/advance`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ms }) });
    expect(res.status).toBe(200);
  };
  beforeAll(async () => {
    const ids = ["stop", "refresh", "idle"];
    const config = { endpoints: ids.map((id) => ({ id, handler: "external" })), externalWorkers: { pingIntervalMs: 1000 } };
    emu = await createEmulator({ clock: "manual", config });
    // The worker runtime's exchanges with minipod, recorded by `npm run contracts:record`.
    rec = await recorder(emu.url, { client: "runpod-python 1.12.0: the worker runtime (runpod.serverless.start)", test: "test/e2e/python-worker-lifecycle.test.ts", clock: "manual", config });
  });
  afterAll(async () => {
    await rec?.close();
    await emu?.close();
  });

  it("stops the running handler when its job is cancelled, times out or expires; the worker goes on", async () => {
    rec.scenario("python-worker-stop-channel", { endpoints: ["stop"], about: "the stop channel (job-stop): a running job cancelled, timed out (executionTimeout), expired (ttl)" });
    const w = startPyWorker(emu, { endpoint: "stop", workerId: "s1" });
    const q = queue(emu, "stop");

    const cancelled = await q.run({ do: "sleep", seconds: 60 });
    await w.waitForLine(new RegExp(`TEST started ${cancelled}`));
    expect(await q.cancel(cancelled)).toMatchObject({ status: "CANCELLED" });
    await w.waitForLine(new RegExp(`TEST stopped ${cancelled}`));

    const timedOut = await q.run({ do: "sleep", seconds: 60 }, { policy: { executionTimeout: 5000 } });
    await w.waitForLine(new RegExp(`TEST started ${timedOut}`));
    await advance(5000);
    expect(await q.status(timedOut)).toMatchObject({ status: "TIMED_OUT" });
    await w.waitForLine(new RegExp(`TEST stopped ${timedOut}`));

    const expired = await q.run({ do: "sleep", seconds: 60 }, { policy: { ttl: 10_000 } });
    await w.waitForLine(new RegExp(`TEST started ${expired}`));
    await advance(10_000);
    expect((await fetch(`${via(emu.url)}/v2/stop/status/${expired}`, { headers: { authorization: "k" } })).status).toBe(404);
    await w.waitForLine(new RegExp(`TEST stopped ${expired}`));

    // The stops went out on the library's own channel (a heartbeat sent in the instant before the
    // worker dropped a stopped job may bring one more), and the worker still takes work.
    const stops = emu.requests({ endpoint: "stop", operation: "job-stop", status: 200 }).requests.map((r) => r.path);
    expect(stops.length).toBeGreaterThanOrEqual(3);
    expect(new Set(stops)).toEqual(new Set(["/v2/stop/job-stop/s1"]));
    const after = await q.run({ do: "echo", value: "still here" });
    expect(await q.final(after)).toMatchObject({ status: "COMPLETED", output: { echo: "still here" }, workerId: "s1" });
    rec.pause();
  });

  it("loses a worker whose process is killed at once (its launcher saw it exit): its job goes back to the queue and another worker finishes it", async () => {
    // Heartbeats would take 60 s to call it lost here: only the exit can do it in time.
    const crash = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "crash", handler: "external" }], externalWorkers: { pingIntervalMs: 1000, lostAfterMs: 60_000 } } });
    onTestFinished(() => crash.close());
    const k1 = startPyWorker(crash, { endpoint: "crash", workerId: "k1" });
    const q = queue(crash, "crash");
    const id = await q.run({ do: "sleep", seconds: 2 });
    await k1.waitForLine(new RegExp(`TEST started ${id}`));
    expect((await q.health()).workers).toMatchObject({ running: 1 });

    process.kill(-k1.proc.pid!, "SIGKILL");
    const requeued = await eventually(async () => {
      const s = await q.status(id);
      return s.status === "IN_QUEUE" ? s : undefined;
    }, 10_000, "the job back in the queue");
    expect(requeued).toMatchObject({ status: "IN_QUEUE", retries: 1 });
    expect((await q.health()).workers).toMatchObject({ idle: 0, running: 0 });
    expect(await workersOf(crash, "crash")).toEqual([expect.objectContaining({ id: "k1", state: "lost", jobIds: [], reason: "its process was killed by SIGKILL" })]);
    expect(crash.events(id).map((e) => e.cause)).toContainEqual("worker k1 lost: its process was killed by SIGKILL; re-queued");

    startPyWorker(crash, { endpoint: "crash", workerId: "k2" });
    expect(await q.final(id)).toMatchObject({ status: "COMPLETED", workerId: "k2", retries: 1 });
  });

  it("hands a job back at once when its worker comes back without it (restarted, same id)", async () => {
    // Here a worker is lost only after 60 s: the restarted process is back well before.
    const slow = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "restart", handler: "external" }], externalWorkers: { pingIntervalMs: 1000, lostAfterMs: 60_000 } } });
    onTestFinished(() => slow.close());
    const r1 = startPyWorker(slow, { endpoint: "restart", workerId: "r1", restart: true });
    const q = queue(slow, "restart");
    const id = await q.run({ do: "sleep", seconds: 1 });
    await r1.waitForLine(new RegExp(`TEST started ${id}`));
    process.kill(r1.proc.pid!, "SIGKILL");
    // The new process asks for work saying it holds none (job_in_progress=0): the job it lost is
    // re-queued then and there, and it takes it again.
    expect(await q.final(id)).toMatchObject({ status: "COMPLETED", workerId: "r1", retries: 1 });
    expect(r1.proc.starts).toBe(2);
    // Its launcher saw the process exit: the job went back to the queue then and there.
    expect(slow.events(id).map((e) => e.cause)).toContainEqual("worker r1 lost: its process was killed by SIGKILL; re-queued");
  });

  it("replaces a worker that asks to be stopped after its job (refresh_worker, stopPod)", async () => {
    rec.scenario("python-worker-refresh", { endpoints: ["refresh"], about: "refresh_worker: the result with stopPod, then the fresh worker's first job" });
    const f1 = startPyWorker(emu, { endpoint: "refresh", workerId: "f1" });
    const q = queue(emu, "refresh");
    const first = await q.final(await q.run({ do: "refresh" }));
    expect(first).toMatchObject({ status: "COMPLETED", workerId: "f1" });
    const done = emu.requests({ endpoint: "refresh", operation: "job-done" }).requests.find((r) => r.path.endsWith(first.id))!;
    expect(done.body).toMatchObject({ stopPod: true });
    // The platform then stops the worker and starts a fresh one (no restart option needed).
    await f1.waitForLine(/minipod: replacing the worker/);
    const second = await q.final(await q.run({ do: "refresh" }));
    expect(second).toMatchObject({ status: "COMPLETED", workerId: "f1" });
    expect((second.output as { pid: number }).pid).not.toBe((first.output as { pid: number }).pid);
    expect(f1.proc.starts).toBe(2);
    rec.pause();
  });

  it("keeps an idle worker to a handful of requests: job-take and job-stop are held open", async () => {
    startPyWorker(emu, { endpoint: "idle", workerId: "i1" });
    await eventually(async () => ((await workersOf(emu, "idle"))[0]?.lastHeartbeatAt !== undefined ? true : undefined), 20_000, "the first heartbeat");
    const before = emu.requests({ endpoint: "idle" }).count;
    await new Promise((r) => setTimeout(r, 3000)); // a rate over wall time: three seconds of an idle worker
    const sent = emu.requests({ endpoint: "idle" }).count - before;
    // About three heartbeats (1 s period here), and polls held 20 s; without the holds, thousands.
    expect(sent).toBeLessThanOrEqual(8);
    expect(emu.requests({ endpoint: "idle", operation: "ping" }).count).toBeGreaterThanOrEqual(2);
  });
});
