import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

const START = Date.UTC(2026, 0, 1);

describe("GET /v2/{endpoint_id}/requests", () => {
  it("lists the endpoint's jobs newest first, with state and times, one page at a time", async () => {
    e = await inProcess({
      clock: { mode: "manual", start: START },
      config: { endpoints: [{ id: "ep", handler: "scripted", workersMin: 1, workersMax: 1 }, { id: "other", handler: "echo", workersMin: 1 }] },
    });
    const first = (await e.post("/v2/ep/run", { input: { sleepMs: 1000 } })).body.id;
    await e.advance(10);
    const second = (await e.post("/v2/ep/run", { input: { fail: "no" } })).body.id;
    await e.post("/v2/other/run", { input: {} });
    await e.advance(500);
    const held = e.post("/v2/ep/runsync", { input: {} }); // held until its job ends
    await e.advance(0);

    const page = (await e.get("/v2/ep/requests")).body;
    expect(page.total).toBe(3);
    expect(page).toMatchObject({ limit: 20, offset: 0 });
    const [newest, middle, oldest] = page.requests;
    expect(oldest).toEqual({ id: first, status: "IN_PROGRESS", createdAt: "2026-01-01T00:00:00.000Z", delayTime: 0, workerId: expect.any(String) });
    expect(middle).toEqual({ id: second, status: "IN_QUEUE", createdAt: "2026-01-01T00:00:00.010Z", delayTime: 500 });
    expect(newest.id).toMatch(/^sync-/);

    await e.advance(1000);
    expect((await held).body).toMatchObject({ id: newest.id, status: "COMPLETED" });
    const done = (await e.get("/v2/ep/requests?limit=2")).body;
    expect(done.requests.map((r: { id: string }) => r.id)).toEqual([newest.id, second]);
    expect(done.total).toBe(3);
    expect((await e.get("/v2/ep/requests?limit=2&offset=2")).body.requests).toEqual([
      { id: first, status: "COMPLETED", createdAt: "2026-01-01T00:00:00.000Z", delayTime: 0, executionTime: 1000, workerId: oldest.workerId },
    ]);
    expect((await e.get("/v2/ep/requests?status=FAILED")).body).toMatchObject({ total: 1, requests: [{ id: second, status: "FAILED" }] });
    await e.post(`/v2/ep/retry/${second}`);
    expect((await e.get("/v2/ep/requests?status=FAILED")).body.requests).toEqual([expect.objectContaining({ id: second, retries: 1 })]);
  });

  it("forgets jobs past their result retention, refuses bad pages and unknown endpoints", async () => {
    e = await inProcess({ clock: { mode: "manual", start: START }, config: { endpoints: [{ id: "ep", handler: "echo", workersMin: 1 }] } });
    await e.post("/v2/ep/runsync", { input: {} });
    expect((await e.get("/v2/ep/requests")).body.total).toBe(1);
    await e.advance(60_000); // /runsync results are kept one minute
    expect((await e.get("/v2/ep/requests")).body).toMatchObject({ total: 0, requests: [] });
    for (const q of ["limit=0", "limit=101", "offset=-1", "status=DONE"]) {
      const bad = await e.get(`/v2/ep/requests?${q}`);
      expect(bad.status, q).toBe(400);
      expect(bad.headers.get("content-type"), q).toBe("application/problem+json");
    }
    expect((await e.get("/v2/nope/requests")).status).toBe(404);
  });

  it("allows the specification's 10 requests per 10 s", async () => {
    e = await inProcess({ clock: { mode: "manual", start: START }, config: { endpoints: [{ id: "ep", workersMin: 0, workersMax: 0 }] } });
    for (let i = 0; i < 10; i++) expect((await e.get("/v2/ep/requests")).status).toBe(200);
    const limited = await e.get("/v2/ep/requests");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("10");
    expect(limited.body.detail).toContain("10 requests per 10 s");
    await e.advance(10_000);
    expect((await e.get("/v2/ep/requests")).status).toBe(200);
  });
});
