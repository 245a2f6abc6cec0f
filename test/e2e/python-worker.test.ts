import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { eventually, pythonAvailable, queue, startPyWorker, type PyWorker } from "../support/python.js";
import { recorder, via, type Recorder } from "../support/recorder.js";
import { RECORDING } from "../support/recording.js";

/**
 * The service's own worker runtime (`runpod.serverless.start`, as published, unchanged) under
 * Debian's python3, started with the environment the platform gives a worker (createEmulator's
 * `startWorker`, as `minipod worker` does). The clock is manual: the worker side runs on wall
 * time, so jobs complete as the Python process answers, and nothing virtual moves unless told.
 */
const available = pythonAvailable();

describe.skipIf(!available)("the service's worker runtime against minipod", { timeout: 60_000 }, () => {
  let emu: Emulator;
  let rec: Recorder;
  const workers: Record<string, PyWorker> = {};
  const endpoints = ["plain", "gen", "agg", "batch"];
  const config = { endpoints: endpoints.map((id) => ({ id, handler: "external" })), externalWorkers: { pingIntervalMs: 1000 } };

  beforeAll(async () => {
    emu = await createEmulator({ clock: "manual", config });
    // The exchanges of the worker runtime (and of the test's own requests) with minipod, recorded by `npm run contracts:record`.
    rec = await recorder(emu.url, { client: "runpod-python 1.12.0: the worker runtime (runpod.serverless.start)", test: "test/e2e/python-worker.test.ts", clock: "manual", config });
    rec.scenario("python-worker-idle", { endpoints: ["plain"], idle: true, about: "an idle worker: heartbeats, empty job-take polls, the stop channel" });
    workers.plain = startPyWorker(emu, { endpoint: "plain", workerId: "plain-1" });
    workers.gen = startPyWorker(emu, { endpoint: "gen", workerId: "gen-1", env: { TEST_GENERATOR: "1" } });
    workers.agg = startPyWorker(emu, { endpoint: "agg", workerId: "agg-1", env: { TEST_GENERATOR: "1", TEST_AGGREGATE: "1" } });
    workers.batch = startPyWorker(emu, { endpoint: "batch", workerId: "batch-1", env: { TEST_CONCURRENCY: "3" } });
    if (RECORDING) {
      // Recorded once each: a heartbeat, and an empty job-take and stop-channel poll (each held for the hold time).
      for (const operation of ["ping", "job-take", "job-stop"]) {
        await eventually(() => (rec.seen(new RegExp(`/${operation}/`), operation === "ping" ? 200 : 204) > 0 ? true : undefined), 45_000, `an idle ${operation}`);
      }
    }
    rec.pause();
  }, 60_000);
  afterAll(async () => {
    await rec?.close();
    await emu?.close();
  });

  it("completes a job with a plain handler's result, on /run and /runsync", async () => {
    rec.scenario("python-worker-sync", { endpoints: ["plain"], about: "a plain handler's job, on /run and /runsync, its result on job-done" });
    const q = queue(emu, "plain");
    const id = await q.run({ do: "echo", value: "hello" });
    expect(await q.final(id)).toMatchObject({ id, status: "COMPLETED", output: { echo: "hello" }, workerId: "plain-1" });
    const res = await fetch(`${via(emu.url)}/v2/plain/runsync`, {
      method: "POST",
      headers: { authorization: "k" },
      body: JSON.stringify({ input: { do: "echo", value: 2 } }),
      signal: AbortSignal.timeout(30_000),
    });
    expect(await res.json()).toMatchObject({ status: "COMPLETED", output: { echo: 2 } });
    // The result went to the platform's URL form, job id in the path, isStream added by the library.
    const done = emu.requests({ endpoint: "plain", operation: "job-done" }).requests.find((r) => r.path.endsWith(id))!;
    expect(done).toMatchObject({ method: "POST", status: 200, path: `/v2/plain/job-done/plain-1/${id}`, body: { output: { echo: "hello" } } });
  });

  it("takes a 5 MB input and posts a 5 MB result (both past the size stored in parts), and status-sync answers the result whole", async () => {
    rec.pause();
    const q = queue(emu, "plain");
    const value = "x".repeat(5 * 1024 * 1024);
    const id = await q.run({ do: "echo", value });
    const job = await q.final(id);
    expect(job.status).toBe("COMPLETED");
    expect((job.output as { echo: string }).echo === value).toBe(true);
  });

  it("fails a job whose handler raises, with the library's error report", async () => {
    rec.scenario("python-worker-error", { endpoints: ["plain"], about: "a handler that raises: the library's error report on job-done" });
    const q = queue(emu, "plain");
    const id = await q.run({ do: "raise", message: "CUDA out of memory" });
    const job = await q.final(id);
    expect(job.status).toBe("FAILED");
    const report = JSON.parse(job.error!) as Record<string, string>;
    expect(report).toMatchObject({ error_message: "CUDA out of memory", worker_id: "plain-1" });
    expect(report.error_type).toContain("ValueError");
    expect(report.error_traceback).toContain("Traceback");
  });

  it("fails a job whose handler returns an error field, keeping the rest as output", async () => {
    rec.scenario("python-worker-error-field", { endpoints: ["plain"], about: "a handler that returns an error field beside its output" });
    const q = queue(emu, "plain");
    const id = await q.run({ do: "error-field" });
    expect(await q.final(id)).toMatchObject({ status: "FAILED", error: "the handler said no", output: { detail: 1 } });
  });

  it("streams a generator's chunks; without return_aggregate_stream they are on /stream only, as on the service", async () => {
    rec.scenario("python-worker-generator", { endpoints: ["gen"], about: "a generator's chunks on job-stream, its end on job-done with isStream=true" });
    const q = queue(emu, "gen");
    const id = await q.run({ n: 3 });
    const job = await q.final(id);
    // The output is what the runtime sent at the end (an empty list), not the chunks: a worker
    // author who forgot the flag sees here what the service's /status and /runsync would show.
    expect(job).toMatchObject({ status: "COMPLETED", output: [] });
    expect((await q.stream(id)).stream).toEqual([{ output: { piece: 0 } }, { output: { piece: 1 } }, { output: { piece: 2 } }]);
    // The chunks went to job-stream; the end came on job-done with isStream=true and an empty output.
    expect(emu.requests({ endpoint: "gen", operation: "job-stream" }).requests.filter((r) => r.path.endsWith(id))).toHaveLength(3);
    const end = emu.requests({ endpoint: "gen", operation: "job-done" }).requests.find((r) => r.path.includes(id))!;
    expect(end.body).toEqual({ output: [] });
  });

  it("completes a job with the aggregate the worker sends (return_aggregate_stream)", async () => {
    rec.scenario("python-worker-aggregate", { endpoints: ["agg"], about: "a generator with return_aggregate_stream: the aggregate on job-done" });
    const q = queue(emu, "agg");
    const id = await q.run({ n: 2 });
    expect(await q.final(id)).toMatchObject({ status: "COMPLETED", output: [{ piece: 0 }, { piece: 1 }] });
    const end = emu.requests({ endpoint: "agg", operation: "job-done" }).requests.find((r) => r.path.includes(id))!;
    expect(end.body).toEqual({ output: [{ piece: 0 }, { piece: 1 }] });
  });

  it("answers an OpenAI-style job with a streaming generator: chunks on /stream, the aggregate as output", async () => {
    rec.scenario("python-worker-openai-stream", { endpoints: ["agg"], about: "an OpenAI-style job streamed by a generator" });
    const q = queue(emu, "agg");
    const id = await q.run({ openai_route: "/v1/chat/completions", openai_input: { model: "m", stream: true, messages: [{ role: "user", content: "two words" }] } });
    const chunk = (content: string) => ({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] });
    expect(await q.final(id)).toMatchObject({ status: "COMPLETED", output: [chunk("two"), chunk("words")] });
    expect((await q.stream(id)).stream).toEqual([{ output: chunk("two") }, { output: chunk("words") }]);
  });

  it("fails a job whose generator raises; what it streamed before stays", async () => {
    rec.scenario("python-worker-generator-error", { endpoints: ["gen"], about: "a generator that raises after one chunk" });
    const q = queue(emu, "gen");
    const id = await q.run({ n: 3, fail_at: 1 });
    const job = await q.final(id);
    expect(job.status).toBe("FAILED");
    expect(job.error).toMatch(/^handler: generator broke/);
    expect((await q.stream(id)).stream).toEqual([{ output: { piece: 0 } }]);
  });

  it("shows progress_update on /status while the job runs", async () => {
    rec.scenario("python-worker-progress", { endpoints: ["plain"], about: "progress_update while the job runs, seen on /status" });
    const q = queue(emu, "plain");
    const gate = join(mkdtempSync(join(tmpdir(), "minipod-gate-")), "go");
    const id = await q.run({ do: "progress", gate });
    await workers.plain!.waitForLine(new RegExp(`TEST progress-sent ${id}`));
    // The update reached minipod (the library posts it on its own): the polls below see it.
    await eventually(() => (emu.requests({ endpoint: "plain", operation: "job-done" }).requests.some((r) => r.path.endsWith(id)) ? true : undefined), 20_000, "the progress post");
    expect(await eventually(async () => {
      const s = await q.status(id);
      return s.output !== undefined ? s : undefined;
    }, 20_000, "the progress update")).toMatchObject({ status: "IN_PROGRESS", output: { percent: 50 } });
    writeFileSync(gate, "");
    expect(await q.final(id)).toMatchObject({ status: "COMPLETED", output: { done: true } });
  });

  it("with concurrency_modifier > 1, takes jobs in batches and runs them at once", async () => {
    rec.scenario("python-worker-concurrency", { endpoints: ["batch"], about: "concurrency_modifier 3: jobs held by a no-workers fault, then taken together on job-take-batch" });
    const q = queue(emu, "batch");
    // The jobs wait while the endpoint has no capacity, then go out together in one batch.
    // (The fault is set through the control API, so that a recording of this exchange replays it.)
    const control = `${via(emu.url)}/_emulator/faults`;
    const fault = { endpoint: "batch", fault: { type: "no-workers" } };
    const block = (await (await fetch(control, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(fault) })).json()) as { id: string };
    const ids = [await q.run({ do: "sleep", seconds: 1 }), await q.run({ do: "sleep", seconds: 1 }), await q.run({ do: "sleep", seconds: 1 })];
    expect((await q.health()).jobs.inQueue).toBe(3);
    expect((await fetch(`${control}/${block.id}`, { method: "DELETE" })).ok).toBe(true);
    const jobs = await Promise.all(ids.map((id) => q.final(id)));
    for (const j of jobs) expect(j).toMatchObject({ status: "COMPLETED", workerId: "batch-1" });
    const spans = jobs.map((j) => j.output as { start: number; end: number });
    // Every job started before any ended: they ran side by side on the one worker.
    expect(Math.max(...spans.map((s) => s.start))).toBeLessThan(Math.min(...spans.map((s) => s.end)));
    // The library asks job-take-batch for what its concurrency leaves room for.
    expect(emu.requests({ endpoint: "batch", operation: "job-take-batch", status: 200 }).count).toBeGreaterThan(0);
  });
});

describe.skipIf(!available)("the service's worker runtime after a quiet spell", { timeout: 60_000 }, () => {
  let emu: Emulator;

  beforeAll(async () => {
    // The platform's ping interval (10 s): nothing else uses the library's connections meanwhile.
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "gen", handler: "external" }] } });
    startPyWorker(emu, { endpoint: "gen", env: { TEST_GENERATOR: "1" } });
  });
  afterAll(() => emu?.close());

  it("loses no chunk after a quiet spell longer than Node's default keep-alive (5 s) and shorter than the library's pool (15 s)", async () => {
    const q = queue(emu, "gen");
    // Wall time on purpose: what is tested is a socket's idle timeout against the library's pool.
    const id = await q.run({ n: 3, quiet: 6.5 });
    expect(await q.final(id, 40_000)).toMatchObject({ status: "COMPLETED" });
    expect((await q.stream(id)).stream).toEqual([{ output: { piece: 0 } }, { output: { piece: 1 } }, { output: { piece: 2 } }]);
    expect(emu.requests({ endpoint: "gen", operation: "job-stream" }).requests.filter((r) => r.path.endsWith(id))).toHaveLength(3);
  });
});
