import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
beforeAll(async () => {
  e = await inProcess({ config: { endpoints: [{ id: "echo" }, { id: "gpu", handler: "external" }] } });
});
afterAll(() => e.close());

/** Every route of /openapi.json that takes a body, with its parameters filled in. */
async function bodyRoutes(): Promise<Array<{ method: string; path: string; url: string }>> {
  const doc = (await e.get("/openapi.json")).body as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.requestBody !== undefined)
      .map(([method, _op]) => ({
        method: method.toUpperCase(),
        path,
        url: path.replace("{endpoint_id}", path.includes("job-") ? "gpu" : "echo").replace(/\{[^}]+\}/g, "x1") + (path.includes("/job-") ? "?jobId=x1" : ""),
      })),
  );
}

describe("a body that is not JSON", () => {
  it("is answered with what that route takes: an input on the routes that submit a job, and only there", async () => {
    const routes = await bodyRoutes();
    expect(routes.length).toBeGreaterThan(15);
    const hints: Record<string, string> = {};
    for (const r of routes) {
      const res = await e.request(r.method, r.url, "{not json", { "content-type": "application/json" });
      expect(res.status, `${r.method} ${r.path}`).toBe(400);
      // The OpenAI routes answer with OpenAI's error object, whose message is the detail.
      if (r.path.includes("/openai/")) res.body = { detail: res.body.error?.message };
      expect(res.body.detail, `${r.method} ${r.path}`).toMatch(/^the request body is not valid JSON; send /);
      hints[`${r.method} ${r.path}`] = res.body.detail;
      const submits = /\/(run|runsync)$/.test(r.path);
      expect(res.body.detail.includes('"input"'), `${r.method} ${r.path}: ${res.body.detail}`).toBe(submits);
    }
    expect(hints).toMatchObject({
      "POST /v2/{endpoint_id}/run": 'the request body is not valid JSON; send a JSON object such as {"input": {...}}',
      "POST /v2/network-volumes": 'the request body is not valid JSON; send a JSON object such as {"name": "...", "size": ..., "dataCenter": "..."}',
      "POST /_emulator/clock/advance": 'the request body is not valid JSON; send a JSON object such as {"ms": ...}',
      "POST /_emulator/faults": 'the request body is not valid JSON; send a JSON object such as {"fault": ...}',
      "POST /v2/{endpoint_id}/job-done/{worker_id}": 'the request body is not valid JSON; send a JSON object such as {"output": ...}',
    });
  });
});

describe("an endpoint that does not exist", () => {
  it("is answered with the endpoints there are, on the queue and the worker routes", async () => {
    const expected = 'endpoint "ecoh" not found; the endpoints are "echo", "gpu" (add one under "endpoints" in the config, or create it with POST /v1/endpoints)';
    expect((await e.post("/v2/ecoh/run", { input: {} })).body).toMatchObject({ status: 404, detail: expected });
    expect((await e.get("/v2/ecoh/status/x")).body).toMatchObject({ status: 404, detail: expected });
    expect((await e.get("/v2/ecoh/job-take/w1")).body).toMatchObject({ status: 404, detail: expected });
  });
});
