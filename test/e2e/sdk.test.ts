import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import runpodSdk from "runpod-sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { forStarts, startCli, type RunningCli } from "../support/cli.js";
import { recorder, via, type Recorder } from "../support/recorder.js";

const KEY = "test-key";
const dir = mkdtempSync(join(tmpdir(), "minipod-e2e-"));
const configFile = join(dir, "emulator.config.json");
const config = {
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, workersMax: 2 },
    { id: "work", handler: "scripted", workersMin: 1, workersMax: 1, coldStartMs: 0 },
  ],
};
writeFileSync(configFile, JSON.stringify(config));

describe("the real CLI driven by runpod-sdk", () => {
  let cli: RunningCli;
  let rec: Recorder;
  let sdk: ReturnType<typeof runpodSdk>;
  beforeAll(async () => {
    cli = await startCli(["--config", configFile, "--clock", "manual"]);
    // runpod-sdk's exchanges with minipod, recorded by `npm run contracts:record`.
    rec = await recorder(cli.url, { client: "runpod-sdk (JavaScript)", test: "test/e2e/sdk.test.ts", clock: "manual", config });
    sdk = runpodSdk(KEY, { baseUrl: `${rec.url}/v2` });
    vi.spyOn(console, "log").mockImplementation(() => {}); // runSync prints its polls
  });
  afterAll(async () => {
    await rec.close();
    expect(await cli.stop("SIGINT")).toBe(0);
  });

  it("prints a banner with the URL, the endpoints and the docs", () => {
    expect(cli.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(cli.stdout()).toContain(`${cli.url}/v2/echo`);
    expect(cli.stdout()).toContain(`${cli.url}/docs`);
    expect(cli.stdout()).toContain(`dashboard   ${cli.url}/`);
    expect(cli.stdout()).toContain("auth        open: any non-empty API key is accepted");
    expect(cli.stdout()).toContain("clock       manual");
  });

  it("run → status → COMPLETED", async () => {
    rec.scenario("runpod-sdk-run-status", { about: "run, then status once the job is done" });
    const ep = sdk.endpoint("echo")!;
    const run = await ep.run({ input: { prompt: "hi" } });
    expect(run).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9_-]+$/), status: "IN_QUEUE" });
    await cli.advance(0);
    const status = await ep.status(run.id);
    expect(status).toMatchObject({ id: run.id, status: "COMPLETED", output: { prompt: "hi" }, completed: true, succeeded: true });
  });

  it("runSync answers at once for a quick job and follows /status-sync for a slow one", async () => {
    rec.scenario("runpod-sdk-runsync", { about: "runSync of a quick job, and of a slow one (its runsync held while the test moves the clock, then followed on /status-sync)" });
    const quick = await sdk.endpoint("echo")!.runSync({ input: { n: 1 } });
    expect(quick).toMatchObject({ status: "COMPLETED", output: { n: 1 } });
    expect(quick.id).toMatch(/^sync-/);

    const slow = sdk.endpoint("work")!.runSync({ input: { sleepMs: 120_000, output: "slow done" } }, 300_000);
    // The clock moves once the runsync waits on it (its job started at 0): asked of minipod itself, not recorded.
    for (const until = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 20))) {
      const clock = (await (await fetch(`${cli.url}/_emulator/clock`)).json()) as { waiting: number };
      if (clock.waiting >= 1) break;
      if (Date.now() > until) throw new Error("the runsync never waited on the clock");
    }
    for (let i = 0; i < 12; i++) await cli.advance(10_000);
    expect(await slow).toMatchObject({ status: "COMPLETED", output: "slow done", executionTime: 120_000, completed: true });
  });

  it("runSync and status carry a 15 MB input and its output whole (stored in parts, answered in pieces)", async () => {
    rec.pause();
    const image = "iVBORw0KGgo".repeat(Math.floor((15 * 1024 * 1024) / 11));
    const done = await sdk.endpoint("echo")!.runSync({ input: { image } });
    expect(done.status).toBe("COMPLETED");
    expect((done.output as { image: string }).image === image).toBe(true);
    const again = (await sdk.endpoint("echo")!.status(done.id)) as { output: { image: string } };
    expect(again.output.image === image).toBe(true);
  });

  it("stream yields every chunk in order", async () => {
    rec.scenario("runpod-sdk-stream", { about: "a job's stream, chunk by chunk" });
    const ep = sdk.endpoint("work")!;
    const { id } = await ep.run({ input: { stream: ["a", "b", "c"], streamIntervalMs: 1000 } });
    const got: unknown[] = [];
    const reading = (async () => {
      for await (const item of ep.stream(id)) got.push(item);
    })();
    for (let i = 0; i < 5; i++) await cli.advance(1000);
    await reading;
    expect(got).toEqual([{ output: "a" }, { output: "b" }, { output: "c" }]);
  });

  it("cancel, health, purgeQueue, and retry over plain fetch", async () => {
    rec.scenario("runpod-sdk-cancel-health-purge-retry", { about: "cancel, health, purgeQueue, a failed job's status, retry" });
    const ep = sdk.endpoint("work")!;
    const running = await ep.run({ input: { sleepMs: 60_000 } });
    const queued1 = await ep.run({ input: {} });
    const queued2 = await ep.run({ input: {} });
    await cli.advance(0);
    expect(await ep.health()).toMatchObject({ jobs: { inProgress: 1, inQueue: 2 }, workers: { running: 1 } });
    expect(await ep.cancel(queued1.id)).toMatchObject({ id: queued1.id, status: "CANCELLED" });
    expect(await ep.purgeQueue()).toEqual({ removed: 1, status: "completed" });
    await expect(ep.status(queued2.id)).rejects.toThrow(/404/); // the SDK's HTTP client throws on 4xx
    expect(await ep.cancel(running.id)).toMatchObject({ status: "CANCELLED" });

    const failing = await ep.run({ input: { fail: "bad luck" } });
    await cli.advance(0);
    expect(await ep.status(failing.id)).toMatchObject({ status: "FAILED", error: "bad luck" });
    const retry = await fetch(`${via(cli.url)}/v2/work/retry/${failing.id}`, { method: "POST", headers: { authorization: KEY } });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ id: failing.id, status: "IN_QUEUE" });
  });
});

describe("the CLI on a file database", () => {
  it("keeps every job and its state across a restart, and re-queues jobs that were running", async () => {
    const db = join(dir, "state.db");
    const first = await startCli(["--config", configFile, "--clock", "manual", "--db", db]);
    const sdk1 = runpodSdk(KEY, { baseUrl: `${first.url}/v2` });
    const done = await sdk1.endpoint("echo")!.run({ input: { keep: "me" } });
    const running = await sdk1.endpoint("work")!.run({ input: { sleepMs: 600_000 } });
    const waiting = await sdk1.endpoint("work")!.run({ input: { wait: true } });
    await first.advance(10);
    expect(await first.stop("SIGTERM")).toBe(0);

    const second = await startCli(["--config", configFile, "--clock", "manual", "--db", db]);
    try {
      expect(second.stdout()).toContain("recovered   1 job(s)");
      const sdk2 = runpodSdk(KEY, { baseUrl: `${second.url}/v2` });
      expect(await sdk2.endpoint("echo")!.status(done.id)).toMatchObject({ status: "COMPLETED", output: { keep: "me" } });
      const again = await sdk2.endpoint("work")!.status(running.id);
      expect(again).toMatchObject({ retries: 1 });
      expect(["IN_QUEUE", "IN_PROGRESS"]).toContain(again.status);
      expect(await sdk2.endpoint("work")!.status(waiting.id)).toMatchObject({ status: "IN_QUEUE" });
    } finally {
      expect(await second.stop("SIGINT")).toBe(0);
    }
  }, forStarts(2));

  it("stops at startup with a clear message on a bad config", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ endpoints: [{ id: "x", workersMax: "many" }] }));
    await expect(startCli(["--config", bad])).rejects.toThrow(/exited with 2[\s\S]*endpoints\[0\]\.workersMax/);
  });
});
