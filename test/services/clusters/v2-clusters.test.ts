import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: { networkVolumes: [{ id: "vol", name: "shared", size: 100, dataCenter: "US-TX-3" }] } });
});
afterEach(() => e.close());

const cluster = (extra: Record<string, unknown> = {}) =>
  e.post("/v2/clusters", { name: "slurm", type: "SLURM", image: "me/train:1", env: { A: "1" }, compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 3 }, ...extra });

describe("/v2/clusters", () => {
  it("makes its pods: identical, RUNNING, in one data center, ranked with roles", async () => {
    const res = await cluster({ mounts: { network: [{ volumeId: "vol", path: "/shared" }] } });
    expect(res.status).toBe(201);
    const id = res.body.id;
    const pods = (await e.get(`/v2/clusters/${id}/pods`)).body.pods;
    expect(res.body).toEqual({
      id,
      name: "slurm",
      type: "SLURM",
      compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 3 },
      dataCenterId: "US-TX-3",
      pods: { total: 3, byStatus: { RUNNING: 3 } },
      network: { cidr: "10.65.0.0/16" },
      primary: { podId: pods[0].id, status: "RUNNING" },
      createdAt: expect.any(String),
    });
    expect(pods.map((p: { name: string; cluster: unknown; gpu: unknown; dataCenterId: string; env: unknown; mounts: unknown }) => [p.name, p.cluster, p.gpu, p.dataCenterId, p.env, p.mounts])).toEqual(
      [0, 1, 2].map((rank) => [
        `slurm-${rank}`,
        { id, rank, role: rank === 0 ? "SLURM_CONTROLLER" : "SLURM_COMPUTE", ip: `10.65.0.${rank + 2}` },
        { id: "NVIDIA H100 80GB HBM3", count: 8 },
        "US-TX-3",
        { A: "1" },
        { network: [{ volumeId: "vol", path: "/shared" }] },
      ]),
    );
    expect((await e.get(`/v2/clusters/${id}`)).body).toEqual(res.body);
    expect((await e.get("/v2/clusters")).body.clusters).toEqual([res.body]);
  });

  it("keeps its pods out of the pod listing unless asked, and off the pod routes", async () => {
    const { id } = (await cluster()).body;
    const own = (await e.post("/v2/pods", { name: "solo", image: "x", gpu: { id: "NVIDIA L4" } })).body;
    expect((await e.get("/v2/pods")).body.pods.map((p: { id: string }) => p.id)).toEqual([own.id]);
    const all = (await e.get("/v2/pods?includeClusterPods=true")).body.pods;
    expect(all).toHaveLength(4);
    const member = all.find((p: { cluster?: { id: string } }) => p.cluster?.id === id).id;
    for (const [method, path, body] of [
      ["PATCH", `/v2/pods/${member}`, { name: "x" }],
      ["DELETE", `/v2/pods/${member}`, undefined],
      ["POST", `/v2/pods/${member}/action`, { action: "stop" }],
      ["DELETE", `/v1/pods/${member}`, undefined],
    ] as const) {
      const res = await e.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(409);
      expect(res.body.detail).toBe(`pod "${member}" belongs to cluster "${id}"; manage it through /v2/clusters/${id}`);
    }
  });

  it("renames, and deletes with every pod", async () => {
    const { id } = (await cluster()).body;
    const renamed = await e.request("PATCH", `/v2/clusters/${id}`, { name: "renamed" });
    expect(renamed.body).toMatchObject({ id, name: "renamed", type: "SLURM" });
    expect((await e.request("PATCH", `/v2/clusters/${id}`, { type: "RAY" })).body.errors).toContain("$: additional properties 'type' not allowed");
    expect((await e.request("PATCH", `/v2/clusters/${id}`, {})).status).toBe(400);
    expect((await e.request("DELETE", `/v2/clusters/${id}`)).status).toBe(204);
    expect((await e.get("/v2/pods?includeClusterPods=true")).body.pods).toEqual([]);
    for (const path of [`/v2/clusters/${id}`, `/v2/clusters/${id}/pods`]) expect((await e.get(path)).status).toBe(404);
  });

  it("refuses a shape no machine has, and leaves nothing behind", async () => {
    const tooMany = await cluster({ compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 9, podCount: 2 } });
    expect(tooMany.body.errors).toEqual(["$.compute.gpuCountPerPod: machines with NVIDIA H100 80GB HBM3 have at most 8 GPUs (maxCount.secure of GET /v2/catalog/gpus)"]);
    expect((await cluster({ compute: { gpuTypeId: "NVIDIA Voodoo", gpuCountPerPod: 1, podCount: 2 } })).status).toBe(400);
    expect((await cluster({ compute: { gpuTypeId: "NVIDIA L4", gpuCountPerPod: 1, podCount: 1 } })).body.errors).toEqual(["$.compute.podCount: expected number >= 2"]);
    expect((await cluster({ registry: "r" })).body.errors).toEqual(["$: additional properties 'registry' not allowed"]);
    expect((await cluster({ image: undefined })).body.errors).toEqual(["$: expected imageName or templateId"]);
    expect((await e.get("/v2/clusters")).body.clusters).toEqual([]);
    expect((await e.get("/v2/pods?includeClusterPods=true")).body.pods).toEqual([]);
  });

  it("gives a RAY cluster a head and workers; a TRAINING cluster no roles", async () => {
    const ray = (await cluster({ type: "RAY" })).body.id;
    expect((await e.get(`/v2/clusters/${ray}/pods`)).body.pods.map((p: { cluster: { role: string } }) => p.cluster.role)).toEqual(["RAY_HEAD", "RAY_WORKER", "RAY_WORKER"]);
    const training = (await cluster({ type: "TRAINING" })).body.id;
    expect((await e.get(`/v2/clusters/${training}/pods`)).body.pods.map((p: { cluster: { role?: string } }) => p.cluster.role)).toEqual([undefined, undefined, undefined]);
  });
});
