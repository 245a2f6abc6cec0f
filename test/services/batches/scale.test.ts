import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: { logLevel: "warn", endpoints: [{ id: "ep", handler: "scripted", workersMax: 1, batchWorkersMax: 50, coldStartMs: 0 }] } });
});
afterEach(() => e.close());

describe("a batch of 5,000 requests", () => {
  it("runs on the simulated handler in virtual time, one failing, every result listed page by page", async () => {
    const requests = Array.from({ length: 5000 }, (_, i) => ({ input: i === 1234 ? { i, fail: "bad row" } : { i, sleepMs: 100 } }));
    // Built in pieces, as a client under the 10 MiB limit would.
    const b = (await e.post("/v2/ep/batch", requests.slice(0, 2500))).body;
    await e.post(`/v2/ep/batch/${b.id}/requests`, { requests: requests.slice(2500) });
    const started = e.now();
    expect((await e.post(`/v2/ep/batch/${b.id}/finalize`)).body).toMatchObject({ status: "FINALIZED", requestTotal: 5000 });
    await e.advance(0);
    // 50 batch workers: 100 rounds of 100 ms.
    expect((await e.get(`/v2/ep/batch/${b.id}`)).body).toMatchObject({ requestInProgress: 50, requestCompleted: 0, requestFailed: 0 });
    await e.advance(10_000);
    const done = (await e.get(`/v2/ep/batch/${b.id}`)).body;
    expect(done).toMatchObject({ status: "FINALIZED", requestTotal: 5000, requestCompleted: 4999, requestFailed: 1, requestInProgress: 0 });
    expect(done.endedAt - started).toBe(10_000);

    const seen: number[] = [];
    const failed: string[] = [];
    for (let offset = 0, more = true; more; offset += 1000) {
      const page = (await e.get(`/v2/ep/batch/${b.id}/requests?offset=${offset}&limit=1000`)).body;
      more = page.hasMore;
      for (const r of page.requests) {
        if (r.status === "FAILED") failed.push(r.error);
        else seen.push(r.output.i);
      }
    }
    expect(failed).toEqual(["bad row"]);
    expect(seen).toEqual(Array.from({ length: 5000 }, (_, i) => i).filter((i) => i !== 1234));
  });
});
