import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

/** `POST /_emulator/endpoints/{endpoint_id}/jobs/{id}/wait`: waitForJob for clients in other languages. */
describe("POST /_emulator/endpoints/{endpoint_id}/jobs/{id}/wait", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config: { endpoints: [{ id: "work", handler: "scripted", workersMin: 0, workersMax: 1, coldStartMs: 2000 }] } });
  });
  afterEach(() => e.close());

  it("advances the manual clock until the job completes, and answers it as /status does", async () => {
    const { id } = (await e.post("/v2/work/run", { input: { sleepMs: 5000, output: { ok: 1 } } })).body;
    const before = e.now();
    const res = await e.post(`/_emulator/endpoints/work/jobs/${id}/wait`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, status: "COMPLETED", delayTime: 2000, executionTime: 5000, output: { ok: 1 } });
    expect(e.now() - before).toBe(7000);
  });

  it("waits for another status when told, and says 400 when time runs out first", async () => {
    const { id } = (await e.post("/v2/work/run", { input: { sleepMs: 5000 } })).body;
    expect((await e.post(`/_emulator/endpoints/work/jobs/${id}/wait`, { status: "IN_PROGRESS" })).body).toMatchObject({ id, status: "IN_PROGRESS" });
    const late = await e.post(`/_emulator/endpoints/work/jobs/${id}/wait`, { withinMs: 1000 });
    expect(late.status).toBe(400);
    expect(late.body.detail).toMatch(/did not reach COMPLETED within 1000 virtual ms/);
  });

  it("says 404 for a job never submitted there, and 400 naming a bad field", async () => {
    const missing = await e.post("/_emulator/endpoints/work/jobs/nope/wait", {});
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/no job nope on endpoint work/);
    const bad = await e.post("/_emulator/endpoints/work/jobs/nope/wait", { status: "DONE" });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("status");
  });
});
