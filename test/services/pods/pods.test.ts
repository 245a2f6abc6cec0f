import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

const START = Date.parse("2024-07-12T19:14:40.144Z");
const iso = (ms: number) => new Date(ms).toISOString();

const config = {
  templates: [{ id: "tpl", name: "torch", imageName: "runpod/pytorch:2.1.0", isServerless: false }],
  networkVolumes: [{ id: "vol", name: "data", size: 50, dataCenter: "US-TX-3" }],
  containerRegistryAuths: [{ id: "creds", name: "my creds", username: "me", password: "hunter2" }],
  endpoints: [{ id: "ep", workersMin: 1, workersMax: 1, gpuTypeIds: ["NVIDIA A40"] }],
  pricing: { gpuPerHour: { "NVIDIA GeForce RTX 4090": 0.5, "NVIDIA A40": 0.25 } },
};

describe("/v1/pods", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config, clock: { mode: "manual", start: START } });
  });
  afterEach(() => e.close());

  const create = (body: Record<string, unknown> = {}) => e.post("/v1/pods", { imageName: "img:1", ...body });

  it("creates a running pod (201) with the v1 defaults and virtual timestamps", async () => {
    const res = await create({ name: "trainer", gpuTypeIds: ["NVIDIA GeForce RTX 4090", "NVIDIA A40"], gpuCount: 2 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^[a-z0-9]{14}$/),
      name: "trainer",
      image: "img:1",
      desiredStatus: "RUNNING",
      lastStartedAt: iso(START),
      lastStatusChange: "Rented by User: Fri Jul 12 2024 19:14:40 GMT+0000 (Coordinated Universal Time)",
      gpu: { id: "NVIDIA GeForce RTX 4090", count: 2, displayName: "RTX 4090", securePrice: 0.5 },
      costPerHr: 1,
      adjustedCostPerHr: 1,
      containerDiskInGb: 50,
      volumeInGb: 20,
      volumeMountPath: "/workspace",
      ports: ["8888/http", "22/tcp"],
      env: {},
      locked: false,
      interruptible: false,
      memoryInGb: 16,
      vcpuCount: 4,
      publicIp: null,
      portMappings: null,
    });
    const got = await e.get(`/v1/pods/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it("creates CPU pods with a CPU flavor and no GPU, priced per vCPU", async () => {
    const res = await create({ computeType: "CPU", cpuFlavorIds: ["cpu5g"], vcpuCount: 4, gpuTypeIds: ["NVIDIA A40"] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ cpuFlavorId: "cpu5g", vcpuCount: 4, memoryInGb: 16, costPerHr: 0.08 });
    expect(res.body.gpu).toBeUndefined();
  });

  it("takes the image from the template and the data center from the network volume", async () => {
    const res = await e.post("/v1/pods", { templateId: "tpl", networkVolumeId: "vol", containerRegistryAuthId: "creds" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ image: "runpod/pytorch:2.1.0", templateId: "tpl", networkVolumeId: "vol", containerRegistryAuthId: "creds" });
    const full = await e.get(`/v1/pods/${res.body.id}?includeNetworkVolume=true&includeTemplate=true&includeMachine=true&includeSavingsPlans=true`);
    expect(full.body.networkVolume).toEqual({ id: "vol", name: "data", size: 50, dataCenterId: "US-TX-3" });
    expect(full.body.template).toMatchObject({ id: "tpl", name: "torch", imageName: "runpod/pytorch:2.1.0" });
    expect(full.body.template.handler).toBeUndefined();
    expect(full.body.machine).toMatchObject({ dataCenterId: "US-TX-3", gpuTypeId: "NVIDIA GeForce RTX 4090", secureCloud: true });
    expect(full.body.savingsPlans).toEqual([]);
    const plain = await e.get(`/v1/pods/${res.body.id}`);
    expect(plain.body.networkVolume).toBeUndefined();
    expect(plain.body.machine).toBeUndefined();
  });

  it("refuses bodies that break a rule with 400 naming each field", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ imageName: undefined }, "$: expected imageName or templateId"],
      [{ gpuCount: 1.5 }, "$.gpuCount: expected integer"],
      [{ gpuCount: 0 }, "$.gpuCount: expected number >= 1"],
      [{ name: "x".repeat(192) }, "$.name: expected length <= 191"],
      [{ ports: ["8888/udp"] }, "$.ports[0]: expected a port such as 8888/http or 22/tcp"],
      [{ templateId: "nope" }, '$.templateId: template "nope" not found'],
      [{ networkVolumeId: "nope" }, '$.networkVolumeId: network volume "nope" not found'],
      [{ containerRegistryAuthId: "nope" }, '$.containerRegistryAuthId: container registry auth "nope" not found'],
      [{ networkVolumeId: "vol", dataCenterIds: ["EU-RO-1"] }, '$.dataCenterIds: network volume "vol" is in US-TX-3, which is not listed'],
    ];
    for (const [body, error] of cases) {
      const res = await create(body);
      expect(res.status, error).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.body.errors, error).toContain(error);
    }
    const gpu = await create({ gpuTypeIds: ["NVIDIA Voodoo 2"] });
    expect(gpu.status).toBe(400);
    expect(gpu.body.errors[0]).toMatch(/^\$\.gpuTypeIds\[0\]: expected value to be one of/);
    expect((await e.get("/v1/pods")).body).toEqual([]);
  });

  it("accepts ports as the v1 comma-separated string", async () => {
    const res = await create({ ports: "8080/http, 22/tcp" });
    expect(res.body.ports).toEqual(["8080/http", "22/tcp"]);
  });

  it("answers 404 problem+json for an unknown pod on every operation", async () => {
    for (const [method, path] of [
      ["GET", "/v1/pods/nope"],
      ["PATCH", "/v1/pods/nope"],
      ["POST", "/v1/pods/nope/update"],
      ["DELETE", "/v1/pods/nope"],
      ["POST", "/v1/pods/nope/start"],
      ["POST", "/v1/pods/nope/stop"],
      ["POST", "/v1/pods/nope/reset"],
      ["POST", "/v1/pods/nope/restart"],
    ] as const) {
      const res = await e.request(method, path, method === "PATCH" || path.endsWith("update") ? { name: "x" } : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ title: "Not Found", status: 404, detail: 'pod "nope" not found' });
    }
  });

  it("stops, starts, restarts and resets on the virtual clock", async () => {
    const { id } = (await create()).body;
    await e.advance(60_000);
    const stopped = await e.post(`/v1/pods/${id}/stop`);
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ desiredStatus: "EXITED", lastStartedAt: iso(START), lastStatusChange: expect.stringMatching(/^Stopped by User: Fri Jul 12 2024 19:15:40 /) });
    expect((await e.post(`/v1/pods/${id}/stop`)).body.desiredStatus).toBe("EXITED");

    const restartStopped = await e.post(`/v1/pods/${id}/restart`);
    expect(restartStopped.status).toBe(400);
    expect(restartStopped.body.detail).toMatch(/is EXITED, not RUNNING; start it instead/);

    await e.advance(60_000);
    const started = await e.post(`/v1/pods/${id}/start`);
    expect(started.body).toMatchObject({ desiredStatus: "RUNNING", lastStartedAt: iso(START + 120_000), lastStatusChange: expect.stringMatching(/^Started by User: /) });
    expect((await e.post(`/v1/pods/${id}/start`)).body.lastStartedAt).toBe(iso(START + 120_000));

    await e.advance(1000);
    const restarted = await e.post(`/v1/pods/${id}/restart`);
    expect(restarted.body).toMatchObject({ desiredStatus: "RUNNING", lastStartedAt: iso(START + 121_000), lastStatusChange: expect.stringMatching(/^Restarted by User: /) });

    await e.post(`/v1/pods/${id}/stop`);
    await e.advance(1000);
    const reset = await e.post(`/v1/pods/${id}/reset`);
    expect(reset.body).toMatchObject({ desiredStatus: "RUNNING", lastStartedAt: iso(START + 122_000), lastStatusChange: expect.stringMatching(/^Reset by User: /) });
    expect((await e.get(`/v1/pods/${id}`)).body.desiredStatus).toBe("RUNNING");
  });

  it("refuses to stop, reset or restart a locked pod until it is unlocked", async () => {
    const { id } = (await create({ locked: true })).body;
    for (const action of ["stop", "reset", "restart"]) {
      const res = await e.post(`/v1/pods/${id}/${action}`);
      expect(res.status, action).toBe(400);
      expect(res.body.detail).toMatch(/is locked/);
    }
    expect((await e.request("PATCH", `/v1/pods/${id}`, { locked: false })).body.locked).toBe(false);
    expect((await e.post(`/v1/pods/${id}/stop`)).body.desiredStatus).toBe("EXITED");
  });

  it("updates in place (name, locked) or with a reset (anything else), by PATCH or POST /update", async () => {
    const { id } = (await create()).body;
    await e.advance(5000);
    const renamed = await e.request("PATCH", `/v1/pods/${id}`, { name: "renamed", locked: true });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "renamed", locked: true, lastStartedAt: iso(START) });
    const changed = await e.post(`/v1/pods/${id}/update`, { env: { A: "1" }, imageName: "img:2", containerDiskInGb: null });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ env: { A: "1" }, image: "img:2", containerDiskInGb: 50, lastStartedAt: iso(START + 5000), lastStatusChange: expect.stringMatching(/^Reset by User/) });
    expect((await e.get(`/v1/pods/${id}`)).body).toEqual(changed.body);

    expect((await e.request("PATCH", `/v1/pods/${id}`, {})).body.errors).toEqual(["$: expected at least one field to update"]);
    expect((await e.request("PATCH", `/v1/pods/${id}`, { volumeInGb: -1 })).body.errors).toEqual(["$.volumeInGb: expected number >= 0"]);
    expect((await e.request("PATCH", `/v1/pods/${id}`, { containerRegistryAuthId: "nope" })).status).toBe(400);
  });

  it("deletes a pod with 204 and no body; it is gone afterwards", async () => {
    const { id } = (await create()).body;
    const res = await e.request("DELETE", `/v1/pods/${id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await e.get(`/v1/pods/${id}`)).status).toBe(404);
    expect((await e.get("/v1/pods")).body).toEqual([]);
  });

  it("lists a bare array with the v1 filters", async () => {
    const a = (await create({ name: "a", gpuTypeIds: ["NVIDIA A40"] })).body;
    const b = (await create({ name: "b", imageName: "other:1", dataCenterIds: ["EU-SE-1"] })).body;
    const c = (await create({ name: "c", computeType: "CPU", templateId: "tpl", networkVolumeId: "vol" })).body;
    await e.post(`/v1/pods/${b.id}/stop`);
    const ids = async (query: string) => ((await e.get(`/v1/pods${query}`)).body as Array<{ id: string }>).map((p) => p.id);

    expect(await ids("")).toEqual([a.id, b.id, c.id]);
    expect(await ids("?desiredStatus=EXITED")).toEqual([b.id]);
    expect(await ids("?desiredStatus=RUNNING")).toEqual([a.id, c.id]);
    expect(await ids("?gpuTypeId=NVIDIA%20A40")).toEqual([a.id]);
    expect(await ids("?gpuTypeId=NVIDIA%20A40&gpuTypeId=NVIDIA%20GeForce%20RTX%204090")).toEqual([a.id, b.id]);
    expect(await ids("?gpuTypeId=NVIDIA%20A40,NVIDIA%20GeForce%20RTX%204090")).toEqual([a.id, b.id]);
    expect(await ids("?computeType=CPU")).toEqual([c.id]);
    expect(await ids("?cpuFlavorId=cpu3c")).toEqual([c.id]);
    expect(await ids("?dataCenterId=EU-SE-1")).toEqual([b.id]);
    expect(await ids("?dataCenterId=US-TX-3,EU-SE-1")).toEqual([b.id, c.id]);
    expect(await ids(`?id=${a.id}`)).toEqual([a.id]);
    expect(await ids("?imageName=other:1")).toEqual([b.id]);
    expect(await ids("?name=c")).toEqual([c.id]);
    expect(await ids("?networkVolumeId=vol")).toEqual([c.id]);
    expect(await ids("?templateId=tpl")).toEqual([c.id]);
    expect(await ids("?templateId=tpl&name=a")).toEqual([]);

    const bad = await e.get("/v1/pods?desiredStatus=SLEEPING&includeMachine=yes");
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(expect.arrayContaining(["query.includeMachine: expected true or false", expect.stringMatching(/^query\.desiredStatus: expected value to be one of/)]));
  });

  it("shows serverless workers as pods of their endpoint only with includeWorkers, and will not act on them", async () => {
    expect((await e.get("/v1/pods")).body).toEqual([]);
    const workers = (await e.get("/v1/pods?includeWorkers=true")).body;
    expect(workers).toHaveLength(1);
    expect(workers[0]).toMatchObject({ endpointId: "ep", aiApiId: "ep", name: "ep", desiredStatus: "RUNNING", gpu: { id: "NVIDIA A40", count: 1 }, lastStartedAt: iso(START) });
    expect((await e.get("/v1/pods?includeWorkers=true&endpointId=ep")).body).toHaveLength(1);
    expect((await e.get("/v1/pods?includeWorkers=true&endpointId=other")).body).toEqual([]);
    const id = workers[0].id;
    expect((await e.get(`/v1/pods/${id}`)).status).toBe(404);
    expect((await e.get(`/v1/pods/${id}?includeWorkers=true`)).body.endpointId).toBe("ep");
    const stop = await e.post(`/v1/pods/${id}/stop`);
    expect(stop.status).toBe(400);
    expect(stop.body.detail).toMatch(/serverless worker of endpoint "ep"; manage it through the endpoint/);
  });

  it("needs an API key", async () => {
    const res = await e.request("GET", "/v1/pods", undefined, { authorization: "" });
    expect(res.status).toBe(401);
  });

  it("documents every pod, registry-auth and billing operation in /openapi.json", async () => {
    const doc = (await e.get("/openapi.json")).body;
    const ops = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) => Object.values(p).map((o) => o.operationId));
    for (const op of [
      "ListPods", "CreatePod", "GetPod", "UpdatePod", "UpdatePodByPost", "DeletePod", "StartPod", "StopPod", "ResetPod", "RestartPod",
      "ListContainerRegistryAuths", "CreateContainerRegistryAuth", "GetContainerRegistryAuth", "DeleteContainerRegistryAuth",
      "PodBilling", "EndpointBilling", "NetworkVolumeBilling",
    ]) {
      expect(ops, op).toContain(op);
    }
    expect(doc.paths["/v1/pods"].post.responses).toHaveProperty("201");
  });
});

describe("/v1/pods seeded from the config", () => {
  const seeded = {
    ...config,
    pods: [
      { name: "notebook", imageName: "jupyter:1" },
      { id: "parked", name: "parked", templateId: "tpl", desiredStatus: "EXITED" as const, containerRegistryAuthId: "creds" },
    ],
  };

  it("creates the configured pods, and reset brings them back as configured", async () => {
    const e = await inProcess({ config: seeded, clock: { mode: "manual", start: START } });
    try {
      const list = (await e.get("/v1/pods")).body;
      expect(list.map((p: { name: string; desiredStatus: string }) => [p.name, p.desiredStatus])).toEqual([
        ["notebook", "RUNNING"],
        ["parked", "EXITED"],
      ]);
      expect(list[1]).toMatchObject({ id: "parked", image: "runpod/pytorch:2.1.0" });
      expect(list[1].lastStartedAt).toBeUndefined();
      const notebook = list[0].id;
      expect(notebook).toMatch(/^[a-z0-9]{12}$/);

      await e.post(`/v1/pods/${notebook}/stop`);
      await e.request("DELETE", "/v1/pods/parked");
      await e.post("/v1/pods", { imageName: "extra:1" });
      await e.advance(1000);
      expect((await e.post("/_emulator/reset")).status).toBe(200);

      const after = (await e.get("/v1/pods")).body;
      expect(after.map((p: { id: string; desiredStatus: string }) => [p.id, p.desiredStatus])).toEqual([
        [notebook, "RUNNING"],
        ["parked", "EXITED"],
      ]);
      expect(after[0].lastStartedAt).toBe(iso(START + 1000));
    } finally {
      e.close();
    }
  });
});
