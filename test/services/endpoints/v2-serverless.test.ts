import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

const config = {
  templates: [
    { id: "tpl-scripted", name: "scripted worker", handler: "scripted", imageName: "me/scripted:1", env: { FROM: "template", KEEP: "yes" } },
    { id: "tpl-pod", name: "pod template", imageName: "me/pod:1", isServerless: false },
  ],
  networkVolumes: [{ id: "vol", name: "models", size: 20, dataCenter: "EU-RO-1" }],
  // An empty job-take answers 204 at once rather than after 10 s of wall time (the test's workers
  // poll only to be seen).
  externalWorkers: { pollHoldMs: 0 },
  endpoints: [
    { id: "ext", handler: "external" },
    { id: "scripted-ep", handler: "scripted", workersMin: 1 },
  ],
};

const body = (extra: Record<string, unknown> = {}) => ({
  name: "inference",
  type: "QUEUE",
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  gpu: { pools: ["ADA_24"] },
  image: "me/worker:1",
  ...extra,
});

describe("/v2/serverless", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  const create = (extra: Record<string, unknown> = {}) => e.post("/v2/serverless", body(extra));
  const patch = (id: string, b: unknown) => e.request("PATCH", `/v2/serverless/${id}`, b);

  it("creates with 201 in the v2 shape, with queue URLs on this host", async () => {
    const res = await create({ env: { A: "1" }, workers: { min: 1, max: 2 }, gpu: { pools: ["ADA_24", "AMPERE_48"], excludedTypes: ["NVIDIA A40"], count: 2 } });
    expect(res.status).toBe(201);
    const id = res.body.id;
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^[a-z0-9]+$/),
      name: "inference",
      type: "QUEUE",
      image: "me/worker:1",
      args: "",
      env: { A: "1" },
      ports: [],
      registry: null,
      gpu: { pools: ["ADA_24", "AMPERE_48"], excludedTypes: ["NVIDIA A40"], count: 2, allowedCudaVersions: [], minCudaVersion: null },
      workers: { min: 1, max: 2, idleTimeout: 10 },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      networkVolumes: [],
      timeout: 600000,
      flashboot: "OFF",
      createdAt: new Date(e.now()).toISOString(),
    });
    expect(res.body.cpu).toBeUndefined();
    expect(res.body.requestUrls).toEqual({
      run: `http://minipod.test/v2/${id}/run`,
      runSync: `http://minipod.test/v2/${id}/runsync`,
      status: `http://minipod.test/v2/${id}/status/{job_id}`,
      stream: `http://minipod.test/v2/${id}/stream/{job_id}`,
      cancel: `http://minipod.test/v2/${id}/cancel/{job_id}`,
      retry: `http://minipod.test/v2/${id}/retry/{job_id}`,
      purgeQueue: `http://minipod.test/v2/${id}/purge-queue`,
      health: `http://minipod.test/v2/${id}/health`,
    });
    expect((await e.get(`/v2/serverless/${id}`)).body).toEqual(res.body);
    expect((await e.get("/v2/serverless")).body.endpoints.map((x: { id: string }) => x.id)).toContain(id);
  });

  it("is the same endpoint on v1: its own template, the GPU types of its pools", async () => {
    const { id } = (await create({ gpu: { pools: ["ADA_24", "AMPERE_48"], excludedTypes: ["NVIDIA A40"] } })).body;
    const v1 = await e.get(`/v1/endpoints/${id}?includeTemplate=true`);
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({ id, name: "inference", gpuTypeIds: ["NVIDIA GeForce RTX 4090", "NVIDIA RTX A6000"], workersMin: 0, workersMax: 3, idleTimeout: 10, version: 0 });
    expect(v1.body.template).toMatchObject({ id: v1.body.templateId, imageName: "me/worker:1", isServerless: true, volumeInGb: 0, ports: [] });
    // The endpoint's own template is listed on request only; it is readable by id on both versions.
    expect((await e.get("/v1/templates")).body.map((t: { id: string }) => t.id)).not.toContain(v1.body.templateId);
    expect((await e.get("/v1/templates?includeEndpointBoundTemplates=true")).body.map((t: { id: string }) => t.id)).toContain(v1.body.templateId);
    expect((await e.get("/v2/templates")).body.templates.map((t: { id: string }) => t.id)).not.toContain(v1.body.templateId);
    expect((await e.get(`/v2/templates/${v1.body.templateId}`)).body).toMatchObject({ image: "me/worker:1", serverless: true });
    // And a v1 change shows on v2.
    await e.request("PATCH", `/v1/endpoints/${id}`, { workersMax: 7, gpuTypeIds: ["NVIDIA L4"], flashboot: true });
    expect((await e.get(`/v2/serverless/${id}`)).body).toMatchObject({
      workers: { max: 7 },
      gpu: { pools: ["AMPERE_24"], excludedTypes: expect.arrayContaining(["NVIDIA RTX A5000"]) },
      flashboot: "FLASHBOOT",
    });
  });

  it("serves the queue at once on simulated workers", async () => {
    const { id } = (await create()).body;
    const run = await e.post(`/v2/${id}/run`, { input: { hello: "v2" } });
    expect(run.status).toBe(200);
    await e.advance(1000); // the cold start
    expect((await e.get(`/v2/${id}/status/${run.body.id}`)).body).toMatchObject({ status: "COMPLETED", output: { hello: "v2" } });
  });

  it("takes container settings and the handler from a serverless template, once", async () => {
    const res = await create({ image: undefined, templateId: "tpl-scripted", env: { A: "1", KEEP: "body" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ image: "me/scripted:1", env: { FROM: "template", KEEP: "body", A: "1" } });
    const id = res.body.id;
    // The scripted handler runs: `fail` fails the job.
    const run = await e.post(`/v2/${id}/run`, { input: { fail: "as scripted" } });
    await e.advance(1000);
    expect((await e.get(`/v2/${id}/status/${run.body.id}`)).body).toMatchObject({ status: "FAILED", error: "as scripted" });
    // Later edits of the template do not reach the endpoint.
    await e.request("PATCH", "/v2/templates/tpl-scripted", { image: "me/scripted:2" });
    expect((await e.get(`/v2/serverless/${id}`)).body.image).toBe("me/scripted:1");
    expect((await e.get(`/v2/serverless/${id}/releases`)).body.releases).toHaveLength(1);
  });

  it("refuses a template that is unknown (404) or not serverless (400)", async () => {
    const unknown = await create({ image: undefined, templateId: "nope" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/template "nope" not found/);
    const pod = await create({ image: undefined, templateId: "tpl-pod" });
    expect(pod.status).toBe(400);
    expect(pod.body.errors).toEqual(['$.templateId: template "tpl-pod" is not a serverless template (serverless is false); endpoints take serverless templates only']);
  });

  it("refuses bodies the description or minipod cannot take, saying why", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ bogus: 1 }, "$: additional properties 'bogus' not allowed"],
      [{ image: undefined }, "$.image: expected image, or a templateId to take it from"],
      [{ cpu: [{ id: "cpu3c", vcpuCount: 2 }] }, "$: expected exactly one of gpu and cpu"],
      [{ gpu: undefined }, "$: expected exactly one of gpu and cpu"],
      [
        { type: "LOAD_BALANCER", scaling: { type: "QUEUE_DELAY", queueDelay: 2 } },
        "$.scaling.type: LOAD_BALANCER endpoints scale on REQUEST_COUNT (requests in flight per worker); QUEUE_DELAY is for queue endpoints",
      ],
      [{ gpu: { pools: ["NO_SUCH_POOL"] } }, '$.gpu.pools[0]: unknown GPU pool "NO_SUCH_POOL"; the pools are the pool field of GET /v2/catalog/gpus'],
      [{ gpu: { pools: ["ADA_24"], excludedTypes: ["NVIDIA A40"] } }, '$.gpu.excludedTypes: "NVIDIA A40" is not a GPU type of the selected pools'],
      [{ gpu: { pools: ["ADA_24"], excludedTypes: ["NVIDIA GeForce RTX 4090"] } }, "$.gpu.excludedTypes: the exclusions leave no GPU type in the selected pools; keep at least one"],
      [
        { gpu: { pools: ["ADA_24"], allowedCudaVersions: ["12.8"], minCudaVersion: "12.1" } },
        '$.gpu: allowedCudaVersions (non-empty) and minCudaVersion exclude each other; send one of them ([] clears the set, "" the floor)',
      ],
      [{ gpu: { pools: ["ADA_24"], minCudaVersion: "12" } }, "$.gpu.minCudaVersion: expected a CUDA version as major.minor, such as 12.8"],
      [{ scaling: { type: "REQUEST_COUNT", requestCount: 2 }, workers: { idleTimeout: 5 } }, "$.workers.idleTimeout: queue endpoints scaling on REQUEST_COUNT have no idle timeout; leave it out"],
      [{ gpu: undefined, cpu: [{ id: "cpu3c", vcpuCount: 6 }] }, "$.cpu[0]: cpu3c takes a power of two from 2 to 32 vCPUs, not 6"],
      [{ timeout: 1000 }, "$.timeout: expected number >= 5000"],
      [{ workers: { min: 3, max: 1 } }, "$.workersMin: workersMin (3) must not exceed workersMax (1)"],
    ];
    for (const [extra, error] of cases) {
      const res = await create(extra);
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.body.errors, JSON.stringify(extra)).toContain(error);
    }
    expect((await e.get("/v2/serverless")).body.endpoints.map((x: { id: string }) => x.id).sort()).toEqual(["ext", "scripted-ep"]);
  });

  it("creates CPU endpoints with their CPU configurations", async () => {
    const res = await create({ gpu: undefined, cpu: [{ id: "cpu5g", vcpuCount: 4 }, { id: "cpu5g", vcpuCount: 8 }], scaling: { type: "REQUEST_COUNT", requestCount: 3 } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      gpu: null,
      cpu: [
        { id: "cpu5g", vcpuCount: 4, memory: 16 },
        { id: "cpu5g", vcpuCount: 8, memory: 32 },
      ],
      workers: { min: 0, max: 3 },
      scaling: { type: "REQUEST_COUNT", requestCount: 3 },
    });
    expect(res.body.workers.idleTimeout).toBeUndefined();
    expect((await e.get(`/v1/endpoints/${res.body.id}`)).body).toMatchObject({ computeType: "CPU", scalerType: "REQUEST_COUNT", scalerValue: 3 });
    expect((await patch(res.body.id, { gpu: { count: 2 } })).body.errors).toEqual(["$.gpu: this is a CPU endpoint; its compute family cannot change (send cpu)"]);
  });

  it("updates only what is given; worker settings reach the workers at once", async () => {
    const { id } = (await create({ workers: { min: 0, max: 1 } })).body;
    const res = await patch(id, { name: "renamed", workers: { min: 2, max: 2 }, timeout: 60_000, scaling: { type: "QUEUE_DELAY", queueDelay: 0.5 }, networkVolumes: ["vol"] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "renamed", workers: { min: 2, max: 2, idleTimeout: 10 }, timeout: 60_000, scaling: { queueDelay: 0.5 }, networkVolumes: ["vol"], image: "me/worker:1" });
    const workers = (await e.get(`/v2/serverless/${id}/workers`)).body;
    expect(workers.summary).toEqual({ running: 0, idle: 0, initializing: 2, throttled: 0, unhealthy: 0, total: 2 });
    expect((await e.get(`/v1/endpoints/${id}`)).body).toMatchObject({ name: "renamed", workersMin: 2, executionTimeoutMs: 60_000, networkVolumeIds: ["vol"] });
    expect((await patch(id, { networkVolumes: ["missing"] })).body.errors).toEqual(['$.networkVolumeIds[0]: unknown network volume "missing"']);
    expect((await patch(id, { cpu: [{ id: "cpu3c", vcpuCount: 2 }] })).status).toBe(400);
    expect((await patch(id, { gpu: { excludedTypes: ["NVIDIA L4"] } })).body.errors).toEqual(["$.gpu.excludedTypes: expected pools with excludedTypes (the two are one selection)"]);
  });

  it("changes CUDA constraints: a floor, then a set once the floor is cleared", async () => {
    const { id } = (await create()).body;
    expect((await patch(id, { gpu: { minCudaVersion: "12.4" } })).body.gpu).toMatchObject({ pools: ["ADA_24"], minCudaVersion: "12.4", allowedCudaVersions: [] });
    expect((await patch(id, { gpu: { allowedCudaVersions: ["12.8"] } })).status).toBe(400);
    const both = await patch(id, { gpu: { allowedCudaVersions: ["12.8"], minCudaVersion: "" } });
    expect(both.body.gpu).toMatchObject({ allowedCudaVersions: ["12.8"], minCudaVersion: null });
    expect((await e.get(`/v1/endpoints/${id}`)).body.minCudaVersion).toBeUndefined();
  });

  it("makes a container change a release: version up, recorded with its diff", async () => {
    const { id } = (await create({ env: { A: "1" } })).body;
    await e.advance(5000);
    const res = await patch(id, { image: "me/worker:2", env: { B: "2" } });
    expect(res.body).toMatchObject({ image: "me/worker:2", env: { B: "2" } });
    const { body } = await e.get(`/v2/serverless/${id}/releases`);
    expect(body.endpointVersion).toBe(1);
    expect(body.releases.map((r: { version: number }) => r.version)).toEqual([1, 0]);
    expect(body.releases[0]).toMatchObject({ source: "MANUAL", buildId: null, createdAt: new Date(e.now()).toISOString() });
    expect(body.releases[0].diff).toEqual([
      { field: "template.env", old: { A: "1" }, new: { B: "2" } },
      { field: "template.imageName", old: "me/worker:1", new: "me/worker:2" },
    ]);
    expect(body.releases[1].diff).toContainEqual({ field: "template.imageName", old: null, new: "me/worker:1" });
    expect((await e.get(`/v1/endpoints/${id}`)).body.version).toBe(1);
    // Worker settings are no release.
    await patch(id, { workers: { max: 4 } });
    expect((await e.get(`/v2/serverless/${id}/releases`)).body.releases).toHaveLength(2);
  });

  it("gives an endpoint made on v1 a template of its own at its first container change", async () => {
    const v1 = await e.post("/v1/endpoints", { name: "v1-made", templateId: "tpl-scripted" });
    const id = v1.body.id;
    const res = await patch(id, { image: "me/own:1" });
    expect(res.body).toMatchObject({ image: "me/own:1", env: { FROM: "template", KEEP: "yes" } });
    const now = (await e.get(`/v1/endpoints/${id}`)).body;
    expect(now.templateId).not.toBe("tpl-scripted");
    expect(now.version).toBe(1);
    expect((await e.get("/v1/templates/tpl-scripted")).body.imageName).toBe("me/scripted:1");
    // The scripted handler still runs the jobs.
    const run = await e.post(`/v2/${id}/run`, { input: { fail: "still scripted" } });
    await e.advance(1000);
    expect((await e.get(`/v2/${id}/status/${run.body.id}`)).body.status).toBe("FAILED");
  });

  it("applies a template's settings and handler with PATCH templateId, once", async () => {
    const { id } = (await create({ env: { A: "1" } })).body;
    const res = await patch(id, { templateId: "tpl-scripted", env: { B: "2" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ image: "me/scripted:1", env: { FROM: "template", KEEP: "yes", B: "2" } });
    expect(res.body.env.A).toBeUndefined();
    const run = await e.post(`/v2/${id}/run`, { input: { fail: "now scripted" } });
    await e.advance(1000);
    expect((await e.get(`/v2/${id}/status/${run.body.id}`)).body).toMatchObject({ status: "FAILED", error: "now scripted" });
    expect((await patch(id, { templateId: "tpl-pod" })).status).toBe(400);
    expect((await patch(id, { templateId: "nope" })).status).toBe(404);
  });

  it("keeps a configured endpoint's own handler when v2 gives it container settings", async () => {
    const res = await patch("scripted-ep", { image: "me/configured:2" });
    expect(res.body).toMatchObject({ id: "scripted-ep", image: "me/configured:2" });
    const run = await e.post("/v2/scripted-ep/run", { input: { fail: "still scripted" } });
    await e.advance(0);
    expect((await e.get(`/v2/scripted-ep/status/${run.body.id}`)).body).toMatchObject({ status: "FAILED", error: "still scripted" });
    expect((await e.get("/v1/endpoints")).body.map((x: { id: string }) => x.id).sort()).toEqual(["ext", "scripted-ep"]);
  });

  it("lists simulated workers by state, and worker processes of an external endpoint", async () => {
    const { id } = (await create({ workers: { min: 1, max: 2 }, image: undefined, templateId: "tpl-scripted" })).body;
    const cold = (await e.get(`/v2/serverless/${id}/workers`)).body;
    expect(cold.workers).toEqual([
      {
        id: expect.any(String),
        status: "INITIALIZING",
        isStale: false,
        version: 0,
        gpuCount: 1,
        image: "me/scripted:1",
        uptimeSeconds: 0,
        gpuTypeId: "NVIDIA GeForce RTX 4090",
        dataCenterId: "EU-RO-1",
        startedAt: new Date(e.now()).toISOString(),
      },
    ]);
    await e.advance(1000);
    await e.post(`/v2/${id}/run`, { input: { sleepMs: 60_000 } });
    const busy = (await e.get(`/v2/serverless/${id}/workers`)).body;
    expect(busy.summary).toMatchObject({ running: 1, idle: 0, total: 1 });
    expect(busy.workers[0].uptimeSeconds).toBe(1);

    await e.get("/v2/ext/job-take/proc-1");
    const ext = (await e.get("/v2/serverless/ext/workers")).body;
    expect(ext.workers).toMatchObject([{ id: "proc-1", status: "IDLE", uptimeSeconds: 0, startedAt: new Date(e.now()).toISOString(), gpuTypeId: null }]);
    await e.post("/v2/ext/run", { input: {} });
    await e.get("/v2/ext/job-take/proc-2");
    expect((await e.get("/v2/serverless/ext/workers")).body.summary).toMatchObject({ running: 1, idle: 1, total: 2 });
  });

  it("deletes the endpoint, its jobs and its own template", async () => {
    const { id } = (await create()).body;
    const templateId = (await e.get(`/v1/endpoints/${id}`)).body.templateId;
    const run = await e.post(`/v2/${id}/run`, { input: {} });
    expect((await e.request("DELETE", `/v2/serverless/${id}`)).status).toBe(204);
    expect((await e.get(`/v2/serverless/${id}`)).status).toBe(404);
    expect((await e.get(`/v1/endpoints/${id}`)).status).toBe(404);
    expect((await e.get(`/v2/${id}/status/${run.body.id}`)).status).toBe(404);
    expect((await e.get(`/v2/templates/${templateId}`)).status).toBe(404);
  });

  it("answers 404 for an unknown endpoint on every route, and has no builds", async () => {
    for (const [method, path] of [
      ["GET", "/v2/serverless/nope"],
      ["PATCH", "/v2/serverless/nope"],
      ["DELETE", "/v2/serverless/nope"],
      ["GET", "/v2/serverless/nope/workers"],
      ["GET", "/v2/serverless/nope/releases"],
      ["GET", "/v2/serverless/nope/builds"],
    ] as const) {
      const res = await e.request(method, path, method === "PATCH" ? { name: "x" } : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.detail).toMatch(/endpoint "nope" not found/);
    }
    expect((await e.get("/v2/serverless/ext/builds")).body).toEqual({ builds: [] });
    expect((await e.get("/v2/serverless/ext/builds/b1")).status).toBe(404);
  });
});
