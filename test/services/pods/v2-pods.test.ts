import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";
import { sseEventReader } from "../../support/sse.js";

const START = Date.parse("2026-05-04T10:00:00Z");
const config = {
  clock: { mode: "manual" as const, start: START },
  templates: [
    { id: "tpl-pod", name: "pod template", imageName: "me/pod:1", isServerless: false, env: { FROM: "tpl" }, ports: ["8888/http"], volumeInGb: 40, volumeMountPath: "/data" },
    { id: "tpl-sls", name: "serverless template", imageName: "me/sls:1" },
  ],
  networkVolumes: [{ id: "vol", name: "datasets", size: 50, dataCenter: "US-KS-2" }],
  pricing: { gpuPerHour: { "NVIDIA GeForce RTX 4090": 0.5 } },
};
const iso = (ms: number) => new Date(ms).toISOString();

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config });
});
afterEach(() => e.close());

const gpuPod = (extra: Record<string, unknown> = {}) => e.post("/v2/pods", { name: "trainer", image: "me/train:1", gpu: { id: "NVIDIA GeForce RTX 4090", count: 2 }, ...extra });
const action = (id: string, a: string) => e.post(`/v2/pods/${id}/action`, { action: a });

describe("/v2/pods", () => {
  it("creates a RUNNING pod with 201 in the v2 shape; the same pod on v1", async () => {
    const res = await gpuPod({ ports: ["8888/http", "22/tcp"], env: { A: "1" }, args: "python train.py", mounts: { persistent: { size: 20, path: "/workspace" } } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[a-z0-9]+$/),
      name: "trainer",
      status: "RUNNING",
      actions: ["stop", "restart", "terminate"],
      image: "me/train:1",
      args: "python train.py",
      disk: 50,
      mounts: { persistent: { size: 20, path: "/workspace" } },
      ports: ["8888/http", "22/tcp"],
      env: { A: "1" },
      registry: null,
      gpu: { id: "NVIDIA GeForce RTX 4090", count: 2 },
      cloud: "SECURE",
      dataCenterId: "EU-RO-1",
      cudaVersion: "13.0",
      ssh: { proxy: null, direct: null },
      template: null,
      cost: 1,
      locked: false,
      globalNetworking: { enabled: false },
      runtime: {
        uptime: 0,
        gpus: [
          { util: 0, memoryUtil: 0 },
          { util: 0, memoryUtil: 0 },
        ],
        cpu: { util: 0 },
        memory: { util: 0 },
        ports: [
          { private: 8888, public: null, type: "http", ip: null },
          { private: 22, public: null, type: "tcp", ip: null },
        ],
      },
      createdAt: iso(START),
      startedAt: iso(START),
    });
    const v1 = (await e.get(`/v1/pods/${res.body.id}`)).body;
    expect(v1).toMatchObject({ name: "trainer", image: "me/train:1", desiredStatus: "RUNNING", dockerStartCmd: ["python", "train.py"], volumeInGb: 20, costPerHr: 1 });
    expect((await e.get(`/v2/pods/${res.body.id}`)).body).toEqual(res.body);
    expect((await e.get("/v2/pods")).body).toEqual({ pods: [res.body] });
  });

  it("creates CPU pods, with memory from the flavor, and pods on a network volume", async () => {
    const cpu = await e.post("/v2/pods", { name: "cpu", image: "alpine", cpu: { id: "cpu3m", vcpuCount: 4 } });
    expect(cpu.status).toBe(201);
    expect(cpu.body).toMatchObject({ cpu: { id: "cpu3m", vcpuCount: 4, memory: 32 }, cudaVersion: null, mounts: {} });
    expect(cpu.body.gpu).toBeUndefined();
    const net = await gpuPod({ mounts: { network: [{ volumeId: "vol", path: "/runpod-volume" }] } });
    expect(net.body).toMatchObject({ dataCenterId: "US-KS-2", mounts: { network: [{ volumeId: "vol", path: "/runpod-volume" }] } });
  });

  it("picks the machine's CUDA version from the constraints, and refuses what no machine has", async () => {
    expect((await gpuPod({ gpu: { id: "NVIDIA L4", allowedCudaVersions: ["12.4", "12.8"] } })).body.cudaVersion).toBe("12.4");
    expect((await gpuPod({ gpu: { id: "NVIDIA L4", minCudaVersion: "12.6" } })).body.cudaVersion).toBe("13.0");
    const none = await gpuPod({ gpu: { id: "NVIDIA L4", allowedCudaVersions: ["10.2"] } });
    expect(none.status).toBe(400);
    expect(none.body.errors[0]).toMatch(/^\$\.gpu\.allowedCudaVersions: no machine has CUDA 10\.2/);
  });

  it("takes settings from a pod template once: body fields win, env merges, no link kept", async () => {
    const res = await gpuPod({ image: undefined, templateId: "tpl-pod", env: { A: "1" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ image: "me/pod:1", env: { FROM: "tpl", A: "1" }, ports: ["8888/http"], mounts: { persistent: { size: 40, path: "/data" } }, template: null });
    expect((await gpuPod({ image: undefined, templateId: "tpl-sls" })).status).toBe(400);
    expect((await gpuPod({ image: undefined, templateId: "nope" })).status).toBe(404);
  });

  it("puts the account's SSH keys and a Jupyter password in the env of pods that ask", async () => {
    const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHello me@example.com";
    expect((await e.request("PUT", "/v2/account/ssh-keys", { keys: [key] })).status).toBe(200);
    const res = await gpuPod({ startSsh: true, startJupyter: true });
    expect(res.body.env).toEqual({ PUBLIC_KEY: key, JUPYTER_PASSWORD: expect.stringMatching(/^[a-z0-9]{14}$/) });
    expect((await gpuPod({ startSsh: true, env: { PUBLIC_KEY: "mine" } })).body.env).toEqual({ PUBLIC_KEY: "mine" });
  });

  it("refuses what a pod cannot be, saying why", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ bogus: true }, "$: additional properties 'bogus' not allowed"],
      [{ gpu: undefined }, "$: expected exactly one of gpu and cpu"],
      [{ cpu: { id: "cpu3c", vcpuCount: 2 } }, "$: expected exactly one of gpu and cpu"],
      [{ gpu: { id: "NVIDIA Voodoo 2" } }, '$.gpu.id: unknown GPU type "NVIDIA Voodoo 2"; the ids are listed by GET /v2/catalog/gpus'],
      [{ gpu: undefined, cpu: { id: "cpu3c", vcpuCount: 3 } }, "$.cpu: cpu3c takes a power of two from 2 to 32 vCPUs, not 3"],
      [
        { gpu: undefined, cpu: { id: "cpu3c", vcpuCount: 2 }, mounts: { persistent: { size: 10, path: "/w" } } },
        "$.mounts.persistent: CPU pods have no persistent volume; attach a network volume instead",
      ],
      [{ mounts: { persistent: { size: 10, path: "/w" }, network: [{ volumeId: "vol", path: "/v" }] } }, "$.mounts: persistent and network exclude each other; attach one"],
      [{ mounts: { network: [{ volumeId: "gone", path: "/v" }] } }, '$.networkVolumeId: network volume "gone" not found'],
      [{ image: undefined }, "$.image: expected image, or a templateId to take it from"],
      [{ name: "" }, "$.name: expected length >= 1"],
    ];
    for (const [extra, error] of cases) {
      const res = await gpuPod(extra);
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.errors, JSON.stringify(extra)).toContain(error);
    }
  });

  it("updates only what is given; a change beyond name and locked restarts the container", async () => {
    const { id } = (await gpuPod({ mounts: { persistent: { size: 20, path: "/workspace" } } })).body;
    await e.advance(60_000);
    const renamed = await e.request("PATCH", `/v2/pods/${id}`, { name: "renamed", locked: true });
    expect(renamed.body).toMatchObject({ name: "renamed", locked: true, startedAt: iso(START) });
    const changed = await e.request("PATCH", `/v2/pods/${id}`, { image: "me/train:2", env: { B: "2" }, mounts: { persistent: { size: 30, path: "/w2" } } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ image: "me/train:2", env: { B: "2" }, mounts: { persistent: { size: 30, path: "/w2" } }, startedAt: iso(START + 60_000) });
    const wrongKind = await e.request("PATCH", `/v2/pods/${id}`, { mounts: { network: [{ volumeId: "vol", path: "/v" }] } });
    expect(wrongKind.body.errors).toEqual(["$.mounts: the pod was created with a persistent mount; the kind of mount is fixed at creation"]);
    expect((await e.request("PATCH", `/v2/pods/${id}`, { templateId: "tpl-pod" })).body).toMatchObject({ image: "me/pod:1", env: { FROM: "tpl" } });
  });

  it("acts by status: stop, start, restart; 409 for what the status does not allow; terminate answers 204", async () => {
    const { id } = (await gpuPod()).body;
    await e.advance(3_600_000);
    const stopped = await action(id, "stop");
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: "EXITED", actions: ["start", "terminate"], cost: 0, runtime: null });
    expect((await e.get(`/v1/pods/${id}`)).body.desiredStatus).toBe("EXITED");
    const conflict = await action(id, "restart");
    expect(conflict.status).toBe(409);
    expect(conflict.body.detail).toBe(`pod "${id}" is EXITED: restart is not valid now; the pod allows start, terminate`);
    // A pod stopped on v1 is stopped on v2, and started on v2 is running on v1.
    expect((await action(id, "start")).body).toMatchObject({ status: "RUNNING", startedAt: iso(START + 3_600_000) });
    await e.post(`/v1/pods/${id}/stop`);
    expect((await e.get(`/v2/pods/${id}`)).body.status).toBe("EXITED");
    expect((await action(id, "bogus")).status).toBe(400);
    expect((await action(id, "terminate")).status).toBe(204);
    expect((await e.get(`/v2/pods/${id}`)).status).toBe(404);
    // Billing saw one running hour at 2 x 0.5 USD.
    const billed = await e.get("/v1/billing/pods?bucketSize=day&grouping=podId");
    expect(billed.body).toEqual([expect.objectContaining({ podId: id, amount: 1, timeBilledMs: 3_600_000 })]);
  });

  it("refuses stop on a locked pod", async () => {
    const { id } = (await gpuPod()).body;
    await e.request("PATCH", `/v2/pods/${id}`, { locked: true });
    const res = await action(id, "stop");
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/locked/);
  });

  it("streams its lifecycle as its log, backfill then live, until it is terminated", async () => {
    const { id } = (await gpuPod()).body;
    await e.advance(1000);
    await action(id, "stop");
    const res = await e.stream(`/v2/pods/${id}/logs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const events = sseEventReader(res);
    const backfill = await events.next(3);
    expect(backfill.map((ev) => ev.data)).toEqual([
      { source: "system", line: "pod created: image me/train:1, 2 x NVIDIA GeForce RTX 4090, data center EU-RO-1", ts: iso(START) },
      { source: "system", line: "container started (minipod runs no container: the pod is RUNNING at once)", ts: iso(START) },
      { source: "system", line: "container stopped: the pod is EXITED, its GPUs released, its disk kept", ts: iso(START + 1000) },
    ]);
    expect(backfill[2]!.id).toBe(iso(START + 1000));
    await e.advance(1000);
    await action(id, "start");
    expect((await events.next()).map((ev) => ev.data)).toEqual([{ source: "system", line: "container started", ts: iso(START + 2000) }]);
    await action(id, "terminate");
    expect((await events.rest()).map((ev) => ev.data.line)).toEqual(["pod terminated: its container disk is gone"]);
  });

  it("backfills from tail, since or Last-Event-ID, and filters by source", async () => {
    const { id } = (await gpuPod()).body;
    for (let i = 1; i <= 3; i++) {
      await e.advance(1000);
      await action(id, i % 2 ? "stop" : "start");
    }
    // Lines at START (created, started), START+1000 (stopped), +2000 (started), +3000 (stopped).
    const open = (query: string, headers: Record<string, string> = {}) =>
      e.stream(`/v2/pods/${id}/logs${query}`, headers).then(sseEventReader);
    const times = async (query: string, n: number, headers: Record<string, string> = {}) => {
      const reader = await open(query, headers);
      const got = (await reader.next(n)).map((ev) => ev.data.ts);
      await reader.close();
      return got;
    };
    expect(await times("?tail=2", 2)).toEqual([iso(START + 2000), iso(START + 3000)]);
    expect(await times(`?since=${iso(START + 2000)}`, 2)).toEqual([iso(START + 2000), iso(START + 3000)]);
    expect(await times(`?since=${iso(START + 2000)}`, 1, { "last-event-id": iso(START + 2000) })).toEqual([iso(START + 3000)]);
    // Nothing runs in a pod: it has no container lines. A terminated pod's stream ends.
    const container = await open("?source=container");
    const tailZero = await open("?tail=0");
    await action(id, "terminate");
    expect(await container.rest()).toEqual([]);
    expect((await tailZero.rest()).map((ev) => ev.data.line)).toEqual(["pod terminated: its container disk is gone"]);
  });

  it("validates the log query", async () => {
    const { id } = (await gpuPod()).body;
    expect((await e.get(`/v2/pods/${id}/logs?tail=5001`)).body.errors).toEqual(["query.tail: expected number <= 5000"]);
    expect((await e.get(`/v2/pods/${id}/logs?source=stdout`)).status).toBe(400);
    expect((await e.get("/v2/pods/nope/logs")).status).toBe(404);
  });
});
