import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

const config = {
  templates: [
    { id: "tpl-scripted", name: "scripted", handler: "scripted" },
    { id: "tpl-plain", name: "plain" },
    { id: "tpl-pod", name: "pod template", isServerless: false },
  ],
  networkVolumes: [{ id: "vol", name: "models", size: 50, dataCenter: "EU-RO-1" }],
  endpoints: [{ id: "configured", handler: "echo", workersMin: 1 }],
};

describe("endpoints, v1", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  const create = (body: Record<string, unknown>) => e.post("/v1/endpoints", { name: "mine", templateId: "tpl-scripted", ...body });
  const patch = (id: string, body: unknown) => e.request("PATCH", `/v1/endpoints/${id}`, body);
  const workers = async (id: string) => (await e.get(`/v1/endpoints/${id}?includeWorkers=true`)).body.workers as Array<{ lastStatusChange: string; gpu?: { id: string } }>;

  it("creates with 200 and the documented defaults", async () => {
    const res = await create({});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      name: "mine",
      templateId: "tpl-scripted",
      gpuTypeIds: [],
      gpuCount: 1,
      workersMin: 0,
      workersMax: 3,
      idleTimeout: 5,
      executionTimeoutMs: 600000,
      scalerType: "QUEUE_DELAY",
      scalerValue: 4,
      dataCenterIds: expect.arrayContaining(["EU-RO-1", "US-KS-2"]),
      env: {},
      computeType: "GPU",
      createdAt: new Date(e.now()).toISOString(),
      userId: "user_minipod",
      version: 0,
    });
    expect(res.body.template).toBeUndefined();
    expect(res.body.workers).toBeUndefined();
  });

  it("keeps what the create body gives", async () => {
    const body = {
      gpuTypeIds: ["NVIDIA L4", "NVIDIA A40"],
      gpuCount: 2,
      workersMin: 1,
      workersMax: 4,
      idleTimeout: 30,
      executionTimeoutMs: 60000,
      scalerType: "REQUEST_COUNT",
      scalerValue: 2,
      networkVolumeId: "vol",
      dataCenterIds: ["EU-RO-1"],
      env: { MODEL: "tiny" },
      flashboot: true,
    };
    const res = await create(body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject(body);
    expect((await e.get(`/v1/endpoints/${res.body.id}`)).body).toEqual(res.body);
  });

  it("refuses bad create bodies with 400 naming each field", async () => {
    const missing = await e.post("/v1/endpoints", {});
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual(expect.arrayContaining(["$: expected required property name to be present", "$: expected required property templateId to be present"]));
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ templateId: "nope" }, '$.templateId: unknown template "nope"; create it with POST /v1/templates first'],
      [{ templateId: "tpl-pod" }, '$.templateId: template "tpl-pod" is not a serverless template (isServerless is false)'],
      [{ workersMin: 3, workersMax: 2 }, "$.workersMin: workersMin (3) must not exceed workersMax (2)"],
      [{ idleTimeout: 0 }, "$.idleTimeout: expected number >= 1"],
      [{ idleTimeout: 3601 }, "$.idleTimeout: expected number <= 3600"],
      [{ gpuCount: 0 }, "$.gpuCount: expected number >= 1"],
      [{ scalerValue: 0 }, "$.scalerValue: expected number >= 1"],
      [{ executionTimeoutMs: 1000 }, "$.executionTimeoutMs: expected number >= 5000"],
      [{ workersMax: 1.5 }, "$.workersMax: expected integer"],
      [{ networkVolumeId: "gone" }, '$.networkVolumeId: unknown network volume "gone"'],
      [{ name: "x".repeat(192) }, "$.name: expected length <= 191"],
    ];
    for (const [body, error] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.body.errors, JSON.stringify(body)).toEqual([error]);
    }
    const gpu = await create({ gpuTypeIds: ["NVIDIA Imaginary 9000"] });
    expect(gpu.status).toBe(400);
    expect(gpu.body.errors[0]).toMatch(/^\$\.gpuTypeIds\[0\]: expected value to be one of "NVIDIA GeForce RTX 4090, /);
    expect((await e.get("/v1/endpoints")).body).toHaveLength(1);
  });

  it("serves the queue at once with its template's handler", async () => {
    const { body: ep } = await create({ workersMax: 1 });
    const run = await e.post(`/v2/${ep.id}/run`, { input: { output: "from scripted" } });
    expect(run.status).toBe(200);
    await e.advance(1000); // cold start of the first worker
    const status = await e.get(`/v2/${ep.id}/status/${run.body.id}`);
    expect(status.body).toMatchObject({ status: "COMPLETED", output: "from scripted", delayTime: 1000 });
  });

  it("runs the config's defaultHandler when the template names none", async () => {
    const custom = await inProcess({ config: { ...config, defaultHandler: "scripted" } });
    try {
      const { body: ep } = await custom.post("/v1/endpoints", { name: "d", templateId: "tpl-plain", workersMin: 1 });
      await custom.advance(1000);
      const res = await custom.post(`/v2/${ep.id}/runsync`, { input: { output: 42 } });
      expect(res.body).toMatchObject({ status: "COMPLETED", output: 42 });
    } finally {
      custom.close();
    }
    const { body: ep } = await create({ templateId: "tpl-plain", workersMin: 1 });
    await e.advance(1000);
    expect((await e.post(`/v2/${ep.id}/runsync`, { input: { output: 42 } })).body.output).toEqual({ output: 42 });
  });

  it("lists every endpoint as a bare array, with template and workers on request", async () => {
    const { body: ep } = await create({ workersMin: 2, gpuTypeIds: ["NVIDIA L4", "NVIDIA A40"] });
    const plain = await e.get("/v1/endpoints");
    expect(plain.status).toBe(200);
    expect(plain.body.map((x: { id: string }) => x.id).sort()).toEqual(["configured", ep.id].sort());
    expect(plain.body[0]).not.toHaveProperty("workers");
    expect(plain.body[0]).not.toHaveProperty("template");
    const full = await e.get("/v1/endpoints?includeTemplate=true&includeWorkers=true");
    const mine = full.body.find((x: { id: string }) => x.id === ep.id);
    expect(mine.template).toMatchObject({ id: "tpl-scripted", name: "scripted", handler: "scripted" });
    expect(mine.workers).toHaveLength(2);
    expect(mine.workers[0]).toMatchObject({
      id: expect.stringMatching(/^[a-z0-9]{14}$/),
      desiredStatus: "RUNNING",
      endpointId: ep.id,
      gpu: { id: "NVIDIA L4", count: 1 },
      lastStatusChange: expect.stringMatching(/^initializing since /),
    });
    await e.advance(1000);
    expect((await workers(ep.id)).map((w) => w.lastStatusChange.split(" ")[0])).toEqual(["idle", "idle"]);
    const configured = full.body.find((x: { id: string }) => x.id === "configured");
    expect(configured.templateId).toBeUndefined();
    expect(configured.workers).toHaveLength(1);
    expect((await e.get("/v1/endpoints?includeWorkers=maybe")).status).toBe(400);
  });

  it("answers 404 for an unknown endpoint on every operation", async () => {
    for (const res of [
      await e.get("/v1/endpoints/nope"),
      await patch("nope", { name: "x" }),
      await e.post("/v1/endpoints/nope/update", { name: "x" }),
      await e.request("DELETE", "/v1/endpoints/nope"),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ title: "Not Found", status: 404, detail: 'endpoint "nope" not found' });
    }
  });

  it("applies workersMin and workersMax changes to the simulated workers at once", async () => {
    const { body: ep } = await create({ workersMin: 0, workersMax: 2 });
    expect(await workers(ep.id)).toHaveLength(0);
    const up = await patch(ep.id, { workersMin: 2 });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ workersMin: 2, workersMax: 2, name: "mine" });
    expect(await workers(ep.id)).toHaveLength(2);
    await e.advance(1000);
    expect((await e.get(`/v2/${ep.id}/health`)).body.workers).toMatchObject({ idle: 2, running: 0 });
    const down = await e.post(`/v1/endpoints/${ep.id}/update`, { workersMin: 0, workersMax: 1 });
    expect(down.status).toBe(200);
    expect((await e.get(`/v2/${ep.id}/health`)).body.workers).toMatchObject({ idle: 1 });
    const none = await patch(ep.id, { workersMax: 0 });
    expect(none.body.workersMax).toBe(0);
    expect((await e.get(`/v2/${ep.id}/health`)).body.workers).toMatchObject({ idle: 0, initializing: 0, running: 0 });
    const run = await e.post(`/v2/${ep.id}/run`, { input: {} });
    await e.advance(60_000);
    expect((await e.get(`/v2/${ep.id}/status/${run.body.id}`)).body.status).toBe("IN_QUEUE");
  });

  it("applies a new idleTimeout to idle workers", async () => {
    const { body: ep } = await create({ workersMin: 0, workersMax: 1, idleTimeout: 600 });
    await e.post(`/v2/${ep.id}/run`, { input: {} });
    await e.advance(1000);
    expect(await workers(ep.id)).toHaveLength(1);
    await patch(ep.id, { idleTimeout: 10 });
    await e.advance(9_999);
    expect(await workers(ep.id)).toHaveLength(1);
    await e.advance(1);
    expect(await workers(ep.id)).toHaveLength(0);
  });

  it("applies a new executionTimeoutMs to jobs submitted after it", async () => {
    const { body: ep } = await create({ workersMin: 1 });
    await e.advance(1000);
    await patch(ep.id, { executionTimeoutMs: 5000 });
    const run = await e.post(`/v2/${ep.id}/run`, { input: { sleepMs: 60_000 } });
    await e.advance(5000);
    expect((await e.get(`/v2/${ep.id}/status/${run.body.id}`)).body.status).toBe("TIMED_OUT");
  });

  it("checks an update against the endpoint as it would become", async () => {
    const { body: ep } = await create({ workersMin: 1, workersMax: 2 });
    const res = await patch(ep.id, { workersMax: 0 });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(["$.workersMin: workersMin (1) must not exceed workersMax (0)"]);
    expect((await patch(ep.id, { templateId: "nope" })).body.errors).toEqual(['$.templateId: unknown template "nope"; create it with POST /v1/templates first']);
    expect((await patch(ep.id, { idleTimeout: "5" })).body.errors).toEqual(["$.idleTimeout: expected integer"]);
    expect((await e.get(`/v1/endpoints/${ep.id}`)).body).toMatchObject({ workersMin: 1, workersMax: 2, templateId: "tpl-scripted" });
  });

  it("counts a release in version when the env or the template changes, and switches handler with the template", async () => {
    const { body: ep } = await create({ workersMin: 1 });
    await e.advance(1000);
    expect((await patch(ep.id, { env: { A: "1" } })).body.version).toBe(1);
    expect((await patch(ep.id, { env: { A: "1" }, name: "same env" })).body.version).toBe(1);
    const moved = await patch(ep.id, { templateId: "tpl-plain" });
    expect(moved.body).toMatchObject({ version: 2, templateId: "tpl-plain" });
    const res = await e.post(`/v2/${ep.id}/runsync`, { input: { output: "x" } });
    expect(res.body.output).toEqual({ output: "x" });
  });

  it("deletes with 204: the queue surface then answers 404 and running work stops", async () => {
    const { body: ep } = await create({ workersMin: 1 });
    await e.advance(1000);
    const running = await e.post(`/v2/${ep.id}/run`, { input: { sleepMs: 60_000 } });
    const queued = await e.post(`/v2/${ep.id}/run`, { input: {} });
    expect((await e.get(`/v2/${ep.id}/status/${running.body.id}`)).body.status).toBe("IN_PROGRESS");
    const del = await e.request("DELETE", `/v1/endpoints/${ep.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    for (const res of [
      await e.get(`/v2/${ep.id}/status/${running.body.id}`),
      await e.get(`/v2/${ep.id}/status/${queued.body.id}`),
      await e.post(`/v2/${ep.id}/run`, { input: {} }),
      await e.get(`/v2/${ep.id}/health`),
      await e.get(`/v1/endpoints/${ep.id}`),
    ]) {
      expect(res.status).toBe(404);
    }
    await e.advance(120_000);
    expect((await e.get("/v1/endpoints")).body.map((x: { id: string }) => x.id)).toEqual(["configured"]);
    expect((await e.request("DELETE", `/v1/endpoints/${ep.id}`)).status).toBe(404);
  });

  it("answers requests held on its jobs with 404 as soon as the endpoint is deleted", async () => {
    const { body: ep } = await create({ workersMin: 1 });
    await e.advance(1000);
    const held = e.post(`/v2/${ep.id}/runsync?wait=300000`, { input: { sleepMs: 60_000 } });
    let answered = false;
    void held.then(() => (answered = true));
    await e.advance(10);
    expect(answered).toBe(false);
    await e.request("DELETE", `/v1/endpoints/${ep.id}`);
    // No clock move: the 5-minute hold ends because the job went with its endpoint.
    const res = await held;
    expect(res.status).toBe(404);
  });

  it("keeps a network volume while an endpoint uses it", async () => {
    const { body: ep } = await create({ networkVolumeId: "vol" });
    const refused = await e.request("DELETE", "/v2/network-volumes/vol");
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe(`network volume "vol" is attached to endpoint ${ep.id}; detach it or delete it first`);
    await e.request("DELETE", `/v1/endpoints/${ep.id}`);
    expect((await e.request("DELETE", "/v2/network-volumes/vol")).status).toBe(204);
  });

  it("returns to the configured endpoints on reset", async () => {
    const { body: ep } = await create({});
    await patch("configured", { workersMax: 9, name: "changed" });
    await e.core.reset();
    const list = (await e.get("/v1/endpoints")).body;
    expect(list.map((x: { id: string; name: string; workersMax: number }) => [x.id, x.name, x.workersMax])).toEqual([["configured", "configured", 3]]);
    expect((await e.get(`/v2/${ep.id}/health`)).status).toBe(404);
  });
});
