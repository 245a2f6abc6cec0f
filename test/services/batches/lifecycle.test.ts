import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

// Faults, timeouts, retries, the journal, snapshots, reset and the dashboard, as they meet batches.
let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: { endpoints: [{ id: "ep", handler: "scripted", workersMax: 1, batchWorkersMax: 1, coldStartMs: 0 }] } });
});
afterEach(() => e.close());

const B = "/v2/ep/batch";
const batchOf = async (inputs: Record<string, unknown>[], policy?: Record<string, unknown>) => {
  const b = (await e.post(B, inputs.map((input) => ({ input, ...(policy ? { policy } : {}) })))).body;
  await e.post(`${B}/${b.id}/finalize`);
  return b as { id: string; requestIds: string[] };
};

describe("batches and the engine's rules", () => {
  it("a worker crash re-queues a batch request, which runs again (counted as a retry)", async () => {
    await e.post("/_emulator/faults", { endpoint: "ep", fault: { type: "worker-crash", atMs: 100 }, times: 1 });
    const b = await batchOf([{ sleepMs: 500 }, { sleepMs: 500 }]);
    await e.advance(2000);
    expect((await e.get(`${B}/${b.id}`)).body).toMatchObject({ requestCompleted: 2, requestFailed: 0, endedAt: expect.any(Number) });
    expect((await e.get(`${B}/${b.id}/requests/${b.requestIds[0]}`)).body).toMatchObject({ status: "COMPLETED", retries: 1 });
  });

  it("a request over its execution timeout is TIMED_OUT and counts as failed", async () => {
    const b = await batchOf([{ sleepMs: 60_000 }, {}], { executionTimeout: 5000 });
    await e.advance(5000);
    expect((await e.get(`${B}/${b.id}`)).body).toMatchObject({ requestCompleted: 1, requestFailed: 1, endedAt: expect.any(Number) });
    expect((await e.get(`${B}/${b.id}/requests/${b.requestIds[0]}`)).body).toMatchObject({ status: "TIMED_OUT", error: expect.stringContaining("execution timeout") });
  });

  it("fault rules and the journal name the batch routes by the operation `batch`", async () => {
    await e.post("/_emulator/faults", { endpoint: "ep", operation: "batch", fault: { type: "http", status: 503 }, times: 1 });
    expect((await e.post(B, [])).status).toBe(503);
    expect((await e.post(B, [])).status).toBe(200);
    const journal = (await e.get("/_emulator/requests?endpoint=ep&operation=batch")).body;
    expect(journal.requests.map((r: { status: number }) => r.status).sort()).toEqual([200, 503]);
  });

  it("a snapshot taken mid-batch brings the batch back as it was, and it runs on to its end", async () => {
    const b = await batchOf([{ sleepMs: 1000 }, { sleepMs: 1000 }, { sleepMs: 1000 }]);
    await e.advance(1500);
    expect((await e.post("/_emulator/snapshots/mid")).status).toBe(200);
    await e.advance(5000);
    expect((await e.get(`${B}/${b.id}`)).body).toMatchObject({ requestCompleted: 3, endedAt: expect.any(Number) });
    expect((await e.post("/_emulator/snapshots/mid/restore")).status).toBe(200);
    const back = (await e.get(`${B}/${b.id}`)).body;
    expect(back).toMatchObject({ status: "FINALIZED", requestCompleted: 1 });
    expect(back.endedAt).toBeUndefined();
    await e.advance(5000);
    expect((await e.get(`${B}/${b.id}`)).body).toMatchObject({ requestCompleted: 3, endedAt: expect.any(Number) });
  });

  it("a reset forgets every batch", async () => {
    const b = await batchOf([{ sleepMs: 1000 }]);
    expect((await e.post("/_emulator/reset")).status).toBe(200);
    expect((await e.get(B)).body.batches).toEqual([]);
    expect((await e.get(`${B}/${b.id}`)).status).toBe(404);
  });

  it("the dashboard shows each batch's progress and its requests", async () => {
    const b = await batchOf([{ sleepMs: 1000 }, { fail: "bad" }]);
    await e.advance(0);
    const list = await e.get("/_dashboard/panels/batches");
    expect(list.status).toBe(200);
    expect(list.text).toContain(b.id);
    expect(list.text).toContain("FINALIZED");
    expect(list.text).toMatch(/0\s*\/\s*2 completed/);
    expect(list.text).toContain(b.requestIds[1]);
    expect(list.text).toContain("bad");
    expect((await e.get("/")).text).toContain('id="batches-body"');
  });
});
