import Database from "better-sqlite3";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { forStarts, startCli, type RunningCli } from "../../support/cli.js";
import { inProcess } from "../../support/in-process.js";

const AUTH = { authorization: "Bearer test-key", "content-type": "application/json" };
const CONFIG = { logLevel: "warn" as const, rateLimits: { enabled: false }, endpoints: [{ id: "ep", handler: "scripted", workersMax: 1, batchWorkersMax: 2, coldStartMs: 0 }] };

describe("batches on a file database", () => {
  let dir: string;
  const running: RunningCli[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "minipod-batch-"));
    writeFileSync(join(dir, "config.json"), JSON.stringify(CONFIG));
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop("SIGKILL")));
    rmSync(dir, { recursive: true, force: true });
  });

  it("loses no acknowledged request across kill -9 in the middle of a batch, and finishes it after the restart", async () => {
    const args = ["--config", join(dir, "config.json"), "--db", join(dir, "state.db"), "--clock", "manual"];
    const first = await startCli(args);
    running.push(first);
    const call = async (cli: RunningCli, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${cli.url}${path}`, { method, headers: AUTH, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      expect(res.status, `${method} ${path}`).toBe(200);
      return (await res.json()) as any;
    };
    const draft = await call(first, "POST", "/v2/ep/batch", [{ input: { d: 1 } }, { input: { d: 2 } }]);
    const appended = await call(first, "POST", `/v2/ep/batch/${draft.id}/requests`, { requests: [{ input: { d: 3 } }] });
    const running6 = await call(first, "POST", "/v2/ep/batch", { name: "mid", requests: Array.from({ length: 6 }, (_, i) => ({ input: { i, sleepMs: 1000 } })) });
    await call(first, "POST", `/v2/ep/batch/${running6.id}/finalize`);
    await first.advance(1500); // two done, two running, two queued
    expect(await call(first, "GET", `/v2/ep/batch/${running6.id}`)).toMatchObject({ requestCompleted: 2, requestInProgress: 2 });
    first.proc.kill("SIGKILL");
    expect(await first.stop()).toBe(null);

    const second = await startCli(args);
    running.push(second);
    await second.advance(0);
    // The draft and every request it acknowledged.
    const kept = await call(second, "GET", `/v2/ep/batch/${draft.id}/requests`);
    expect(kept.requests.map((r: { id: string }) => r.id)).toEqual([...draft.requestIds, ...appended.requestIds]);
    expect(await call(second, "GET", `/v2/ep/batch/${draft.id}`)).toMatchObject({ status: "DRAFT", requestTotal: 3 });
    // The running requests lost their worker: back in the queue, counted as retries; nothing lost.
    const mid = await call(second, "GET", `/v2/ep/batch/${running6.id}`);
    expect(mid).toMatchObject({ status: "FINALIZED", requestTotal: 6, requestCompleted: 2, requestInProgress: 2, name: "mid" });
    await second.advance(2000);
    expect(await call(second, "GET", `/v2/ep/batch/${running6.id}`)).toMatchObject({ status: "FINALIZED", requestCompleted: 6, requestFailed: 0, endedAt: expect.any(Number) });
    const results = await call(second, "GET", `/v2/ep/batch/${running6.id}/requests`);
    expect(results.requests.map((r: { output: { i: number } }) => r.output.i)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.requests.filter((r: { retries?: number }) => r.retries === 1)).toHaveLength(2);
    // The draft goes on too.
    await call(second, "POST", `/v2/ep/batch/${draft.id}/finalize`);
    await second.advance(0);
    expect(await call(second, "GET", `/v2/ep/batch/${draft.id}`)).toMatchObject({ requestCompleted: 3, endedAt: expect.any(Number) });
  }, forStarts(2));
});

describe("a finalize whose jobs never reached the database", () => {
  it("is completed at the next start: the batch's requests are queued from what it stored", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-batch-"));
    const db = join(dir, "state.db");
    try {
      const first = await inProcess({ db, config: CONFIG });
      const b = (await first.post("/v2/ep/batch", [{ input: { a: 1, sleepMs: 1000 } }, { input: { a: 2, sleepMs: 1000 } }])).body;
      await first.post(`/v2/ep/batch/${b.id}/finalize`);
      first.close();
      // As if the process had died after the batch was marked FINALIZED, before its jobs were written.
      const raw = new Database(db);
      raw.prepare("DELETE FROM jobs WHERE batch_id = ?").run(b.id);
      raw.close();
      const second = await inProcess({ db, config: CONFIG });
      try {
        await second.advance(1000);
        expect((await second.get(`/v2/ep/batch/${b.id}`)).body).toMatchObject({ status: "FINALIZED", requestTotal: 2, requestCompleted: 2, endedAt: expect.any(Number) });
        const page = (await second.get(`/v2/ep/batch/${b.id}/requests`)).body;
        expect(page.requests.map((r: { id: string; output: unknown }) => [r.id, r.output])).toEqual([
          [b.requestIds[0], { a: 1, sleepMs: 1000 }],
          [b.requestIds[1], { a: 2, sleepMs: 1000 }],
        ]);
      } finally {
        second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
