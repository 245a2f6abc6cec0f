import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: { endpoints: [{ id: "ep", handler: "scripted", workersMax: 2, batchWorkersMax: 2, coldStartMs: 0 }] } });
});
afterEach(() => e.close());

const B = "/v2/ep/batch";
const put = (path: string, body: unknown) => e.request("PUT", path, body);
const del = (path: string) => e.request("DELETE", path);

describe("a batch from draft to results", () => {
  it("creates a DRAFT, takes requests, finalizes, runs them on batch workers and counts them", async () => {
    const created = await e.post(B, [{ input: { n: 1 } }, { input: { n: 2 } }]);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: "DRAFT", endpointId: "ep", requestTotal: 2, requestInProgress: 0, requestCompleted: 0, requestFailed: 0 });
    expect(created.body.id).toMatch(/^batch_[a-z0-9]+$/);
    expect(created.body.requestIds).toHaveLength(2);
    const id = created.body.id as string;
    const more = await e.post(`${B}/${id}/requests`, { requests: [{ input: { n: 3, sleepMs: 1000 } }, { input: { n: 4, fail: "boom" } }] });
    expect(more.status).toBe(200);
    expect(more.body).toMatchObject({ requestTotal: 4, status: "DRAFT" });
    const page = await e.get(`${B}/${id}/requests`);
    expect(page.body).toMatchObject({ total: 4, offset: 0, limit: 50, hasMore: false });
    expect(page.body.requests.map((r: { status: string }) => r.status)).toEqual(["PENDING", "PENDING", "PENDING", "PENDING"]);

    const fin = await e.post(`${B}/${id}/finalize`);
    expect(fin.status).toBe(200);
    expect(fin.body.status).toBe("FINALIZED");
    await e.advance(0);
    const mid = (await e.get(`${B}/${id}`)).body;
    expect(mid).toMatchObject({ status: "FINALIZED", requestTotal: 4, requestInProgress: 1, requestCompleted: 2, requestFailed: 1 });
    await e.advance(1000);
    const done = (await e.get(`${B}/${id}`)).body;
    expect(done).toMatchObject({ status: "FINALIZED", requestTotal: 4, requestInProgress: 0, requestCompleted: 3, requestFailed: 1, endedAt: expect.any(Number) });
    const results = (await e.get(`${B}/${id}/requests?limit=2&offset=2`)).body;
    expect(results).toMatchObject({ total: 4, offset: 2, limit: 2, hasMore: false });
    expect(results.requests[0]).toMatchObject({ id: more.body.requestIds[0], status: "COMPLETED", startedAt: expect.any(String), completedAt: expect.any(String) });
    expect(results.requests[1]).toMatchObject({ id: more.body.requestIds[1], status: "FAILED", error: expect.stringContaining("boom") });
    console.log(JSON.stringify(results, null, 1));
  });
});
