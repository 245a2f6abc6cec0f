import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { pythonAvailable, runPyClient } from "../support/python.js";
import { recorder, type Recorder } from "../support/recorder.js";

/**
 * The service's own Python client (`runpod.Endpoint`, `runpod.AsyncioEndpoint`; as published,
 * unchanged) under Debian's python3, against simulated handlers on the real clock (the client
 * sleeps in wall time between its polls).
 */
const available = pythonAvailable();

describe.skipIf(!available)("the service's Python client against minipod", { timeout: 60_000 }, () => {
  let emu: Emulator;
  let rec: Recorder;
  let v2: string;
  beforeAll(async () => {
    const config = {
      endpoints: [
        { id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 },
        { id: "script", handler: "scripted", workersMin: 1, coldStartMs: 0 },
        { id: "parked", handler: "echo", workersMax: 0 },
      ],
    };
    // Real time: the tests measure how long an empty /stream poll is held, which the auto clock would end at once.
    emu = await createEmulator({ clock: "real", config });
    // The client's exchanges with minipod, recorded by `npm run contracts:record`.
    rec = await recorder(emu.url, { client: "runpod-python 1.12.0: the client (runpod.Endpoint, runpod.AsyncioEndpoint)", test: "test/e2e/python-client.test.ts", clock: "real", config });
    v2 = `${rec.url}/v2`;
  });
  afterAll(async () => {
    await rec?.close();
    await emu?.close();
  });

  it("run, status, output, run_sync (with and without timeout) and health", async () => {
    rec.scenario("python-client-endpoint", { about: "runpod.Endpoint: run, status, output, run_sync (with and without timeout), health" });
    const { results, errors } = await runPyClient(["run", "status", "output", "run_sync", "run_sync_timeout", "health"], { v2, endpoint: "echo", input: { value: 1 } });
    expect(errors).toEqual({});
    expect(results.run).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(["IN_QUEUE", "IN_PROGRESS", "COMPLETED"]).toContain(results.status);
    expect(results.output).toEqual({ value: 1 });
    expect(results.run_sync).toEqual({ value: 1 });
    expect(results.run_sync_timeout).toEqual({ value: 1 });
    expect(results.health).toMatchObject({ jobs: { completed: 3 }, workers: { idle: 1 } });
  });

  it("stream yields every chunk", async () => {
    rec.scenario("python-client-stream", { about: "runpod.Endpoint: a job's stream" });
    const { results, errors } = await runPyClient(["run", "stream", "status"], { v2, endpoint: "script", input: { stream: ["a", "b", "c"], streamIntervalMs: 300 } });
    expect(errors).toEqual({});
    expect(results.stream).toEqual(["a", "b", "c"]);
    expect(results.status).toBe("COMPLETED");
  });

  it("cancel and purge_queue", async () => {
    rec.scenario("python-client-cancel-purge", { about: "runpod.Endpoint: cancel, then purge_queue" });
    const cancelled = await runPyClient(["run", "cancel", "status"], { v2, endpoint: "script", input: { sleepMs: 60_000 } });
    expect(cancelled.errors).toEqual({});
    expect(cancelled.results.cancel).toEqual({ id: cancelled.results.run, status: "CANCELLED" });
    expect(cancelled.results.status).toBe("CANCELLED");
    const purged = await runPyClient(["run", "purge_queue"], { v2, endpoint: "parked", input: { n: 1 } });
    expect(purged.errors).toEqual({});
    expect(purged.results.purge_queue).toEqual({ removed: 1, status: "completed" });
  });

  it("the asyncio client: run, status, output, stream, cancel, health, purge_queue", async () => {
    rec.scenario("python-client-asyncio", { about: "runpod.AsyncioEndpoint: run, status, output, stream, cancel, health, purge_queue" });
    const done = await runPyClient(["async", "run", "status", "output", "health"], { v2, endpoint: "echo", input: { value: "async" } });
    expect(done.errors).toEqual({});
    expect(done.results.output).toEqual({ value: "async" });
    expect(done.results.health).toMatchObject({ jobs: expect.any(Object), workers: expect.any(Object) });
    const streamed = await runPyClient(["async", "run", "stream"], { v2, endpoint: "script", input: { stream: [1, 2], streamIntervalMs: 300 } });
    expect(streamed.errors).toEqual({});
    expect(streamed.results.stream).toEqual([1, 2]);
    const cancelled = await runPyClient(["async", "run", "cancel", "status"], { v2, endpoint: "script", input: { sleepMs: 60_000 } });
    expect(cancelled.errors).toEqual({});
    expect(cancelled.results.cancel).toEqual({ id: cancelled.results.run, status: "CANCELLED" });
    expect(cancelled.results.status).toBe("CANCELLED");
    const purged = await runPyClient(["async", "run", "purge_queue"], { v2, endpoint: "parked", input: { n: 2 } });
    expect(purged.results.purge_queue).toEqual({ removed: 1, status: "completed" });
  });

  it("holds an empty /stream poll for less than the client's 10 s read timeout", async () => {
    rec.pause();
    // The chunks come 7 s apart: at least one poll finds nothing and is held; none may time out.
    const { results, errors } = await runPyClient(["run", "stream"], { v2, endpoint: "script", input: { stream: ["x", "y"], streamIntervalMs: 7000 } });
    expect(errors).toEqual({});
    expect(results.stream).toEqual(["x", "y"]);
    const polls = emu.requests({ endpoint: "script", operation: "stream" }).requests.filter((r) => r.path.endsWith(results.run as string));
    expect(Math.max(...polls.map((p) => p.durationMs))).toBeGreaterThanOrEqual(4000);
  });
});
