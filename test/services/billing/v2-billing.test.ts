import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

const START = Date.parse("2026-05-04T00:00:00Z");
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({
    config: {
      clock: { mode: "manual", start: START },
      pricing: { gpuPerHour: { "NVIDIA GeForce RTX 4090": 0.5, "NVIDIA L4": 0.25 }, cpuPerVcpuHour: 0.02, volumePerGbMonth: 0.072, highPerformanceVolumePerGbMonth: 0.144 },
      endpoints: [{ id: "warm", workersMin: 1, workersMax: 1, idleTimeout: 3600, gpuTypeIds: ["NVIDIA L4"] }],
      networkVolumes: [{ id: "std", name: "std", size: 100, dataCenter: "EU-RO-1" }, { id: "hp", name: "hp", size: 50, dataCenter: "EU-RO-1", type: "HIGH_PERFORMANCE" }],
    },
  });
});
afterEach(() => e.close());

/** A pod of 2 x RTX 4090 (1 USD/h), a CPU pod of 2 vCPU (0.04 USD/h) and a 2-pod cluster of 1 x L4 (0.5 USD/h), two hours. */
async function twoHoursOfEverything() {
  const gpu = (await e.post("/v2/pods", { name: "gpu", image: "x", gpu: { id: "NVIDIA GeForce RTX 4090", count: 2 } })).body.id;
  const cpu = (await e.post("/v2/pods", { name: "cpu", image: "x", cpu: { id: "cpu3c", vcpuCount: 2 } })).body.id;
  const cluster = (await e.post("/v2/clusters", { name: "c", type: "TRAINING", image: "x", compute: { gpuTypeId: "NVIDIA L4", gpuCountPerPod: 1, podCount: 2 } })).body.id;
  await e.advance(2 * HOUR);
  return { gpu, cpu, cluster };
}

describe("/v2/billing", () => {
  it("bills pods by component, per pod and bucket; cluster pods go to their cluster", async () => {
    const { gpu, cpu } = await twoHoursOfEverything();
    const res = await e.get("/v2/billing/pods?bucketSize=hour");
    expect(res.status).toBe(200);
    expect(res.body.records).toEqual([
      { startTime: iso(START), endTime: iso(START + HOUR), podId: expect.any(String), gpuAmount: expect.any(Number), cpuAmount: expect.any(Number), diskAmount: 0, totalAmount: expect.any(Number) },
      expect.anything(),
      expect.anything(),
      expect.anything(),
    ]);
    const ofPod = (id: string) => res.body.records.filter((r: { podId: string }) => r.podId === id);
    expect(ofPod(gpu).map((r: { gpuAmount: number; totalAmount: number }) => [r.gpuAmount, r.totalAmount])).toEqual([
      [1, 1],
      [1, 1],
    ]);
    expect(ofPod(cpu).map((r: { cpuAmount: number }) => r.cpuAmount)).toEqual([0.04, 0.04]);
    expect(res.body.metadata).toEqual({
      query: { startTime: iso(START + 2 * HOUR - 30 * 24 * HOUR), endTime: iso(START + 2 * HOUR), bucketSize: "hour", podId: null },
      recordCount: 4,
      uniquePodCount: 2,
      totals: { totalAmount: 2.08, gpuAmount: 2, cpuAmount: 0.08, diskAmount: 0 },
    });
    const one = await e.get(`/v2/billing/pods?podId=${gpu}`);
    expect(one.body.records).toEqual([{ startTime: iso(START), endTime: iso(START + 24 * HOUR), podId: gpu, gpuAmount: 2, cpuAmount: 0, diskAmount: 0, totalAmount: 2 }]);
    expect(one.body.metadata.query.podId).toBe(gpu);
  });

  it("bills clusters, serverless workers and network volumes, and adds them all up", async () => {
    const { cluster } = await twoHoursOfEverything();
    const clusters = (await e.get("/v2/billing/clusters")).body;
    expect(clusters.records).toEqual([{ startTime: iso(START), endTime: iso(START + 24 * HOUR), clusterId: cluster, gpuAmount: 1, diskAmount: 0, networkingAmount: 0, totalAmount: 1 }]);
    expect(clusters.metadata).toMatchObject({ recordCount: 1, uniqueClusterCount: 1, totals: { totalAmount: 1, gpuAmount: 1 } });
    const serverless = (await e.get("/v2/billing/serverless?serverlessId=warm")).body;
    expect(serverless.records).toEqual([{ startTime: iso(START), endTime: iso(START + 24 * HOUR), serverlessId: "warm", gpuAmount: 0.5, cpuAmount: 0, diskAmount: 0, feeAmount: 0, totalAmount: 0.5 }]);
    // 100 GB at 0.072 and 50 GB at 0.144 per GB-month (720 h): 0.01 and 0.01 USD an hour.
    const volumes = (await e.get("/v2/billing/network-volumes")).body;
    expect(volumes.records).toEqual([
      { startTime: iso(START), endTime: iso(START + 24 * HOUR), networkVolumeId: "hp", standardAmount: 0, highPerformanceAmount: 0.02, totalAmount: 0.02 },
      { startTime: iso(START), endTime: iso(START + 24 * HOUR), networkVolumeId: "std", standardAmount: 0.02, highPerformanceAmount: 0, totalAmount: 0.02 },
    ]);
    expect(volumes.metadata).toMatchObject({ uniqueNetworkVolumeCount: 2, totals: { totalAmount: 0.04, standardAmount: 0.02, highPerformanceAmount: 0.02 } });
    const all = (await e.get("/v2/billing")).body;
    expect(all.records).toEqual([
      {
        startTime: iso(START),
        endTime: iso(START + 24 * HOUR),
        totalAmount: 3.62,
        podGpuAmount: 2,
        podCpuAmount: 0.08,
        podDiskAmount: 0,
        serverlessGpuAmount: 0.5,
        serverlessCpuAmount: 0,
        serverlessDiskAmount: 0,
        serverlessFeeAmount: 0,
        storageStandardAmount: 0.02,
        storageHighPerformanceAmount: 0.02,
        endpointAmount: 0,
        clusterGpuAmount: 1,
        clusterDiskAmount: 0,
        clusterNetworkingAmount: 0,
      },
    ]);
    expect(all.metadata.totals.totalAmount).toBe(3.62);
    expect((await e.get("/v2/billing/endpoints")).body).toMatchObject({ records: [], metadata: { recordCount: 0, totals: { totalAmount: 0 } } });
  });

  it("takes the last N buckets, and refuses lastN with a start or end", async () => {
    await twoHoursOfEverything();
    const res = await e.get("/v2/billing/pods?bucketSize=hour&lastN=1");
    expect(res.body.metadata.query).toMatchObject({ startTime: iso(START + 2 * HOUR), endTime: iso(START + 3 * HOUR) });
    expect(res.body.records).toEqual([]);
    expect((await e.get("/v2/billing/pods?bucketSize=hour&lastN=3")).body.records).toHaveLength(4);
    const both = await e.get(`/v2/billing?lastN=2&startTime=${iso(START)}`);
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual(["query.lastN: lastN and startTime/endTime exclude each other; send one or the other"]);
    expect((await e.get("/v2/billing?bucketSize=minute")).status).toBe(400);
  });
});
