import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";
import { startReceiver } from "../../support/receiver.js";

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({
    config: { endpoints: [{ id: "ep", handler: "scripted", workersMax: 1, batchWorkersMax: 2, coldStartMs: 0 }], templates: [{ id: "tpl", name: "scripted", handler: "scripted" }] },
  });
});
afterEach(() => e.close());

const B = "/v2/ep/batch";
const put = (path: string, body: unknown) => e.request("PUT", path, body);
const del = (path: string) => e.request("DELETE", path);
const statuses = (page: { requests: { status: string }[] }) => page.requests.map((r) => r.status);
const draft = async (requests: unknown[] = []) => (await e.post(B, requests)).body as { id: string; requestIds: string[] };

describe("a batch from draft to results", () => {
  it("creates a DRAFT, takes requests, finalizes, runs them on batch workers and counts them", async () => {
    const created = await e.post(B, [{ input: { n: 1 } }, { input: { n: 2 } }]);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: "DRAFT", endpointId: "ep", requestTotal: 2, requestInProgress: 0, requestCompleted: 0, requestFailed: 0, createdAt: e.now() });
    expect(created.body.id).toMatch(/^batch_[a-z0-9]+$/);
    expect(created.body.requestIds).toHaveLength(2);
    const id = created.body.id as string;
    const more = await e.post(`${B}/${id}/requests`, { requests: [{ input: { n: 3, sleepMs: 1000 } }, { input: { n: 4, fail: "boom" } }] });
    expect(more.status).toBe(200);
    expect(more.body).toMatchObject({ requestTotal: 4, status: "DRAFT" });
    const page = await e.get(`${B}/${id}/requests`);
    expect(page.body).toMatchObject({ total: 4, offset: 0, limit: 50, hasMore: false });
    expect(statuses(page.body)).toEqual(["PENDING", "PENDING", "PENDING", "PENDING"]);
    expect(page.body.requests.map((r: { id: string }) => r.id)).toEqual([...created.body.requestIds, ...more.body.requestIds]);

    const fin = await e.post(`${B}/${id}/finalize`);
    expect(fin.body).toMatchObject({ status: "FINALIZED", finalizedAt: e.now() });
    await e.advance(0);
    // Two batch workers: the first two requests, then the sleeper and the failing one.
    expect((await e.get(`${B}/${id}`)).body).toMatchObject({ status: "FINALIZED", requestTotal: 4, requestInProgress: 1, requestCompleted: 2, requestFailed: 1 });
    expect((await e.get(`${B}/${id}`)).body.endedAt).toBeUndefined();
    await e.advance(1000);
    const done = (await e.get(`${B}/${id}`)).body;
    // Done: it stays FINALIZED, and completed + failed == total.
    expect(done).toMatchObject({ status: "FINALIZED", requestInProgress: 0, requestCompleted: 3, requestFailed: 1, endedAt: e.now() });
    const results = (await e.get(`${B}/${id}/requests?limit=2&offset=2`)).body;
    expect(results).toMatchObject({ total: 4, offset: 2, limit: 2, hasMore: false });
    expect(results.requests[0]).toEqual({
      id: more.body.requestIds[0],
      status: "COMPLETED",
      output: { n: 3, sleepMs: 1000 },
      workerId: expect.any(String),
      startedAt: new Date(e.now() - 1000).toISOString(),
      completedAt: new Date(e.now()).toISOString(),
    });
    expect(results.requests[1]).toMatchObject({ id: more.body.requestIds[1], status: "FAILED", error: "boom" });
    expect((await e.get(`${B}/${id}/requests?limit=3`)).body).toMatchObject({ offset: 0, limit: 3, hasMore: true });
    // Each request is a job carrying the batch id, with the same id.
    const job = e.core.jobStore.get(created.body.requestIds[0])!;
    expect(job).toMatchObject({ batchId: id, status: "COMPLETED", output: { n: 1 } });
    expect((await e.get(`/v2/ep/status/${job.id}`)).body).toMatchObject({ id: job.id, status: "COMPLETED", output: { n: 1 } });
  });

  it("takes the object form of a create (name, webhook, requests), lists newest first, and renames", async () => {
    const a = await e.post(B, { name: "nightly", requests: [{ input: { x: 1 } }] });
    expect(a.body).toMatchObject({ name: "nightly", requestTotal: 1 });
    await e.advance(5);
    const b = await draft();
    expect((await e.get(B)).body.batches.map((x: { id: string }) => x.id)).toEqual([b.id, a.body.id]);
    expect((await put(`${B}/${b.id}`, { name: "renamed" })).body).toMatchObject({ id: b.id, name: "renamed", status: "DRAFT" });
    expect((await e.get(`${B}/${b.id}`)).body.name).toBe("renamed");
  });

  it("changes and removes requests of a draft; reads one with its input", async () => {
    const b = await draft([{ input: { a: 1 } }, { input: { b: 2 } }, { input: { c: 3 } }]);
    const [r1, r2, r3] = b.requestIds;
    expect((await e.get(`${B}/${b.id}/requests/${r2}`)).body).toEqual({ id: r2, status: "PENDING", input: { b: 2 } });
    expect((await put(`${B}/${b.id}/requests/${r2}`, { input: { b: 20 } })).body).toEqual({ id: r2, status: "PENDING", input: { b: 20 } });
    const removed = await del(`${B}/${b.id}/requests/${r1}`);
    expect(removed.body).toMatchObject({ requestTotal: 2 });
    expect((await e.get(`${B}/${b.id}/requests`)).body.requests.map((r: { id: string }) => r.id)).toEqual([r2, r3]);
    await e.post(`${B}/${b.id}/finalize`);
    await e.advance(0);
    expect((await e.get(`${B}/${b.id}/requests/${r2}`)).body).toMatchObject({ id: r2, status: "COMPLETED", input: { b: 20 }, output: { b: 20 } });
    expect((await e.get(`${B}/${b.id}`)).body).toMatchObject({ requestTotal: 2, requestCompleted: 2 });
  });

  it("finalizes an empty batch as done at once", async () => {
    const b = await draft();
    const fin = (await e.post(`${B}/${b.id}/finalize`)).body;
    expect(fin).toMatchObject({ status: "FINALIZED", requestTotal: 0, requestCompleted: 0, requestFailed: 0, endedAt: e.now() });
  });
});

describe("states and their refusals", () => {
  it("locks a finalized batch: no append, change, removal or second finalize (409 naming the state)", async () => {
    const b = await draft([{ input: { sleepMs: 5000 } }]);
    await e.post(`${B}/${b.id}/finalize`);
    for (const res of [
      await e.post(`${B}/${b.id}/requests`, { requests: [{ input: {} }] }),
      await put(`${B}/${b.id}/requests/${b.requestIds[0]}`, { input: {} }),
      await del(`${B}/${b.id}/requests/${b.requestIds[0]}`),
      await e.post(`${B}/${b.id}/finalize`),
    ]) {
      expect(res.status).toBe(409);
      expect(res.body.detail).toContain("is FINALIZED; only a DRAFT batch can");
    }
  });

  it("answers 404 for an unknown endpoint, batch or request", async () => {
    const b = await draft([{ input: {} }]);
    expect((await e.get("/v2/nope/batch")).status).toBe(404);
    const unknown = await e.get(`${B}/batch_zzz`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain('batch "batch_zzz" not found on endpoint "ep"');
    expect((await e.get(`${B}/${b.id}/requests/req_zzz`)).status).toBe(404);
    expect((await del(`${B}/${b.id}/requests/req_zzz`)).status).toBe(404);
    expect((await e.post(`${B}/batch_zzz/finalize`)).status).toBe(404);
  });

  it("refuses bodies that are not requests (400, naming the field)", async () => {
    const bad = await e.post(B, [{ nope: 1 }]);
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(["$.requests[0]: expected required property input to be present"]);
    const b = await draft();
    expect((await e.post(`${B}/${b.id}/requests`, { requests: [{ input: "text" }] })).status).toBe(400);
    expect((await put(`${B}/${b.id}`, { name: "" })).status).toBe(400);
    expect((await put(`${B}/${b.id}`, { webhook: "ftp://x" })).status).toBe(400);
    expect((await e.get(`${B}/${b.id}/requests?limit=0`)).status).toBe(400);
    expect((await e.get(`${B}/${b.id}/requests?limit=1001`)).status).toBe(400);
    expect((await e.get(`${B}/${b.id}/requests?offset=-1`)).status).toBe(400);
  });
});

describe("limits", () => {
  it("holds at most 5,000 requests per batch (400 with the counts)", async () => {
    const many = Array.from({ length: 4999 }, (_, i) => ({ input: { i } }));
    const b = await draft(many);
    const over = await e.post(`${B}/${b.id}/requests`, [{ input: {} }, { input: {} }]);
    expect(over.status).toBe(400);
    expect(over.body.detail).toBe("a batch holds at most 5000 requests; it has 4999 and 2 more were sent");
    expect((await e.post(`${B}/${b.id}/requests`, [{ input: {} }])).body.requestTotal).toBe(5000);
    expect((await e.post(B, Array.from({ length: 5001 }, () => ({ input: {} })))).status).toBe(400);
  });

  it("takes at most 10 MiB per call (413)", async () => {
    const b = await draft();
    const big = await e.post(`${B}/${b.id}/requests`, { requests: [{ input: { blob: "x".repeat(10 * 1024 * 1024) } }] });
    expect(big.status).toBe(413);
    expect((await e.get(`${B}/${b.id}`)).body.requestTotal).toBe(0);
  });

  it("keeps at most 10 active batches per endpoint (429); an ended one frees its place", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await draft()).id);
    const refused = await e.post(B, []);
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toContain('endpoint "ep" has 10 active batches');
    await e.post(`${B}/${ids[0]}/finalize`); // empty: done at once
    expect((await e.post(B, [])).status).toBe(200);
    expect((await e.post(B, [])).status).toBe(429);
    await e.post(`${B}/${ids[1]}/cancel`);
    expect((await e.post(B, [])).status).toBe(200);
  });
});

describe("cancel", () => {
  it("cancels a draft at once", async () => {
    const b = await draft([{ input: {} }]);
    expect((await e.post(`${B}/${b.id}/cancel`)).body).toMatchObject({ status: "CANCELLED", endedAt: e.now() });
    expect((await e.post(`${B}/${b.id}/cancel`)).body.status).toBe("CANCELLED");
    expect((await e.post(`${B}/${b.id}/finalize`)).status).toBe(409);
  });

  it("mid-batch: queued requests are cancelled at once, running ones finish, then the batch is CANCELLED", async () => {
    const b = await draft(Array.from({ length: 6 }, (_, i) => ({ input: { i, sleepMs: 1000 } })));
    await e.post(`${B}/${b.id}/finalize`);
    await e.advance(1500); // two done, two running, two queued
    const asked = (await e.post(`${B}/${b.id}/cancel`)).body;
    expect(asked).toMatchObject({ status: "FINALIZED", cancelRequested: true, requestCompleted: 2, requestInProgress: 2 });
    const page = (await e.get(`${B}/${b.id}/requests`)).body;
    expect(statuses(page)).toEqual(["COMPLETED", "COMPLETED", "IN_PROGRESS", "IN_PROGRESS", "CANCELLED", "CANCELLED"]);
    await e.advance(500);
    const ended = (await e.get(`${B}/${b.id}`)).body;
    expect(ended).toMatchObject({ status: "CANCELLED", requestCompleted: 4, requestFailed: 0, requestInProgress: 0, endedAt: e.now() });
    expect(statuses((await e.get(`${B}/${b.id}/requests`)).body)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED", "COMPLETED", "CANCELLED", "CANCELLED"]);
  });

  it("refuses to cancel a batch whose requests are all done (409)", async () => {
    const b = await draft([{ input: {} }]);
    await e.post(`${B}/${b.id}/finalize`);
    await e.advance(0);
    const res = await e.post(`${B}/${b.id}/cancel`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("has ended (every request is done)");
  });
});

describe("batch workers", () => {
  it("run batch requests apart from /run traffic: a /run job starts at once behind a batch of 50", async () => {
    const b = await draft(Array.from({ length: 50 }, () => ({ input: { sleepMs: 10_000 } })));
    await e.post(`${B}/${b.id}/finalize`);
    await e.advance(0);
    const run = (await e.post("/v2/ep/run", { input: { sleepMs: 10 } })).body;
    await e.advance(10);
    expect((await e.get(`/v2/ep/status/${run.id}`)).body).toMatchObject({ status: "COMPLETED", delayTime: 0 });
    expect(e.core.jobStore.get(run.id)!.batchId).toBeUndefined();
    // At most batchWorkersMax (2) batch requests ran at a time, the /run worker took none.
    expect((await e.get(`${B}/${b.id}`)).body).toMatchObject({ requestInProgress: 2, requestCompleted: 0 });
    const health = (await e.get("/v2/ep/health")).body;
    expect(health.workers.running).toBe(2);
    expect(health.jobs).toMatchObject({ inProgress: 2, inQueue: 48, completed: 1 });
  });

  it("leave batch requests alone on /purge-queue", async () => {
    const b = await draft(Array.from({ length: 5 }, () => ({ input: { sleepMs: 1000 } })));
    await e.post(`${B}/${b.id}/finalize`);
    await e.advance(0);
    expect((await e.post("/v2/ep/purge-queue")).body.removed).toBe(0);
    await e.advance(3000);
    expect((await e.get(`${B}/${b.id}`)).body).toMatchObject({ requestCompleted: 5, endedAt: expect.any(Number) });
  });

  it("retry a failed request under the same id; the counters follow", async () => {
    const b = await draft([{ input: { failAttempts: 1 } }, { input: {} }]);
    await e.post(`${B}/${b.id}/finalize`);
    await e.advance(0);
    expect((await e.get(`${B}/${b.id}`)).body).toMatchObject({ requestCompleted: 1, requestFailed: 1 });
    expect((await e.post(`/v2/ep/retry/${b.requestIds[0]}`)).status).toBe(200);
    await e.advance(0);
    expect((await e.get(`${B}/${b.id}`)).body).toMatchObject({ requestCompleted: 2, requestFailed: 0 });
    // The retried request keeps its place in the listing.
    expect((await e.get(`${B}/${b.id}/requests`)).body.requests.map((r: { id: string; retries?: number }) => [r.id, r.retries])).toEqual([
      [b.requestIds[0], 1],
      [b.requestIds[1], undefined],
    ]);
  });
});

describe("the end of a batch", () => {
  it("is announced once to its webhook, with its counters", async () => {
    const hook = await startReceiver();
    try {
      const b = (await e.post(B, { webhook: hook.url, requests: [{ input: {} }, { input: { fail: "no" } }] })).body;
      await e.post(`${B}/${b.id}/finalize`);
      await e.core.runUntilIdle();
      expect(hook.calls).toHaveLength(1);
      expect(hook.calls[0]!.body).toMatchObject({ event: "batch.completed", id: b.id, endpointId: "ep", status: "FINALIZED", requestTotal: 2, requestCompleted: 1, requestFailed: 1 });
      const c = (await e.post(B, { webhook: hook.url, requests: [{ input: {} }] })).body;
      await e.post(`${B}/${c.id}/cancel`);
      await e.core.runUntilIdle();
      expect(hook.calls[1]!.body).toMatchObject({ event: "batch.cancelled", id: c.id, status: "CANCELLED" });
      expect(hook.calls).toHaveLength(2);
    } finally {
      await hook.close();
    }
  });

  it("is FAILED when its requests are lost (their endpoint deleted), and says so to its webhook", async () => {
    const hook = await startReceiver();
    try {
      const created = await e.post("/v1/endpoints", { name: "tmp", templateId: "tpl" });
      expect(created.status).toBe(200);
      const epId = created.body.id as string;
      const b = (await e.post(`/v2/${epId}/batch`, { webhook: hook.url, requests: [{ input: { sleepMs: 1000 } }] })).body;
      await e.post(`/v2/${epId}/batch/${b.id}/finalize`);
      expect((await e.request("DELETE", `/v1/endpoints/${epId}`)).status).toBe(204);
      expect(e.core.services.batches.all().find((x) => x.id === b.id)).toMatchObject({ status: "FAILED", error: expect.stringContaining("lost") });
      await e.core.runUntilIdle();
      expect(hook.calls.map((c) => c.body)).toEqual([expect.objectContaining({ event: "batch.failed", id: b.id, status: "FAILED" })]);
    } finally {
      await hook.close();
    }
  });
});
