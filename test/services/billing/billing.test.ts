import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

const H = 3_600_000;
const DAY = 24 * H;
// A Monday, 2024-07-15T00:00:00Z.
const MONDAY = Date.parse("2024-07-15T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

// Round prices so amounts are exact: $3.6/h is $0.001 per second; $0.72/GB-month is $0.001/GB-hour.
const pricing = {
  gpuPerHour: { "NVIDIA A40": 3.6, "NVIDIA GeForce RTX 4090": 1.8, "NVIDIA L4": 0.36 },
  cpuPerVcpuHour: 0.1,
  volumePerGbMonth: 0.72,
  highPerformanceVolumePerGbMonth: 1.44,
};

let e: InProcess;
afterEach(() => e?.close());

const start = (at: number, config: Record<string, unknown> = {}) => inProcess({ clock: { mode: "manual", start: at }, config: { pricing, ...config } });

describe("/v1/billing/endpoints", () => {
  const endpoints = [
    { id: "flex", handler: "scripted", workersMin: 0, workersMax: 1, coldStartMs: 1000, idleTimeout: 5, gpuTypeIds: ["NVIDIA A40", "NVIDIA L4"] },
    { id: "warm", workersMin: 1, workersMax: 1, gpuTypeIds: ["NVIDIA L4"], gpuCount: 2 },
  ];

  it("bills a worker's whole life: cold start, job and idle time until scale-down", async () => {
    e = await start(MONDAY + 10 * H, { endpoints: [endpoints[0]] });
    await e.post("/v2/flex/run", { input: { sleepMs: 10_000 } });
    await e.advance(60_000);
    const res = await e.get("/v1/billing/endpoints?bucketSize=hour");
    expect(res.status).toBe(200);
    // 1 s cold start + 10 s job + 5 s idle = 16 s at $0.001/s.
    expect(res.body).toEqual([{ time: iso(MONDAY + 10 * H), endpointId: "flex", amount: 0.016, timeBilledMs: 16_000 }]);
    // No worker left: more time adds nothing.
    await e.advance(H);
    expect((await e.get("/v1/billing/endpoints?bucketSize=hour")).body).toEqual(res.body);
  });

  it("bills a warm worker up to now, per GPU, and splits time at bucket boundaries", async () => {
    e = await start(MONDAY + 23 * H + 30 * 60_000, { endpoints: [endpoints[1]] });
    await e.advance(H);
    const day = await e.get("/v1/billing/endpoints");
    // 2 × L4 at $0.36/h: 30 min on Monday, 30 min on Tuesday.
    expect(day.body).toEqual([
      { time: iso(MONDAY), endpointId: "warm", amount: 0.36, timeBilledMs: H / 2 },
      { time: iso(MONDAY + DAY), endpointId: "warm", amount: 0.36, timeBilledMs: H / 2 },
    ]);
    const week = await e.get("/v1/billing/endpoints?bucketSize=week");
    expect(week.body).toEqual([{ time: iso(MONDAY), endpointId: "warm", amount: 0.72, timeBilledMs: H }]);
    const month = await e.get("/v1/billing/endpoints?bucketSize=month");
    expect(month.body).toEqual([{ time: "2024-07-01T00:00:00.000Z", endpointId: "warm", amount: 0.72, timeBilledMs: H }]);
    const year = await e.get("/v1/billing/endpoints?bucketSize=year");
    expect(year.body).toEqual([{ time: "2024-01-01T00:00:00.000Z", endpointId: "warm", amount: 0.72, timeBilledMs: H }]);
  });

  it("groups by endpoint, GPU type or worker, and filters", async () => {
    e = await start(MONDAY, { endpoints });
    await e.post("/v2/flex/run", { input: { sleepMs: 4000 } });
    await e.advance(60_000);
    const workerId = (await e.get("/v1/pods?includeWorkers=true&endpointId=warm")).body[0].id;
    const q = (query: string) => e.get(`/v1/billing/endpoints?bucketSize=day&${query}`).then((r) => r.body);

    // flex: 1 + 4 + 5 = 10 s of an A40 ($0.01); warm: 60 s of 2 × L4 ($0.012).
    expect(await q("")).toEqual([
      { time: iso(MONDAY), endpointId: "flex", amount: 0.01, timeBilledMs: 10_000 },
      { time: iso(MONDAY), endpointId: "warm", amount: 0.012, timeBilledMs: 60_000 },
    ]);
    expect(await q("grouping=gpuTypeId")).toEqual([
      { time: iso(MONDAY), gpuTypeId: "NVIDIA A40", amount: 0.01, timeBilledMs: 10_000 },
      { time: iso(MONDAY), gpuTypeId: "NVIDIA L4", amount: 0.012, timeBilledMs: 60_000 },
    ]);
    const byWorker = await q("grouping=podId");
    expect(byWorker).toHaveLength(2);
    expect(byWorker).toContainEqual({ time: iso(MONDAY), podId: workerId, amount: 0.012, timeBilledMs: 60_000 });
    expect(await q("endpointId=flex")).toEqual([{ time: iso(MONDAY), endpointId: "flex", amount: 0.01, timeBilledMs: 10_000 }]);
    expect(await q("gpuTypeId=NVIDIA%20L4")).toEqual([{ time: iso(MONDAY), endpointId: "warm", amount: 0.012, timeBilledMs: 60_000 }]);
    expect(await q("gpuTypeId=NVIDIA%20L4,NVIDIA%20A40")).toHaveLength(2);
    expect(await q("dataCenterId=EU-RO-1")).toHaveLength(2);
    expect(await q("dataCenterId=US-TX-3")).toEqual([]);
    expect(await q("templateId=none")).toEqual([]);
  });

  it("gives an endpoint without gpuTypeIds the default GPU type", async () => {
    e = await start(MONDAY, { endpoints: [{ id: "plain", workersMin: 1, workersMax: 1 }] });
    await e.advance(1000);
    expect((await e.get("/v1/billing/endpoints?grouping=gpuTypeId")).body).toEqual([
      { time: iso(MONDAY), gpuTypeId: "NVIDIA GeForce RTX 4090", amount: 0.0005, timeBilledMs: 1000 },
    ]);
  });

  it("bills an endpoint created with POST /v1/endpoints at its first GPU type, after it is deleted too", async () => {
    e = await start(MONDAY, { templates: [{ id: "tpl", name: "worker", imageName: "me/worker:1", isServerless: true }] });
    const created = await e.post("/v1/endpoints", { name: "api", templateId: "tpl", gpuTypeIds: ["NVIDIA L4"], workersMin: 1, workersMax: 1 });
    expect(created.status).toBe(200);
    const id = created.body.id;
    await e.advance(10_000);
    expect((await e.request("DELETE", `/v1/endpoints/${id}`)).status).toBe(204);
    await e.advance(10_000);
    const expected = [{ time: iso(MONDAY), endpointId: id, amount: 0.001, timeBilledMs: 10_000 }];
    expect((await e.get("/v1/billing/endpoints")).body).toEqual(expected);
    expect((await e.get("/v1/billing/endpoints?templateId=tpl")).body).toEqual(expected);
    expect((await e.get("/v1/billing/endpoints?imageName=me/worker:1")).body).toEqual(expected);
    expect((await e.get("/v1/billing/endpoints?imageName=other:1")).body).toEqual([]);
  });
});

describe("/v1/billing/pods", () => {
  it("bills a pod's running time only, per GPU type or per pod", async () => {
    e = await start(MONDAY);
    const a = (await e.post("/v1/pods", { imageName: "img", gpuTypeIds: ["NVIDIA GeForce RTX 4090"] })).body.id;
    const b = (await e.post("/v1/pods", { imageName: "img", computeType: "CPU", vcpuCount: 2 })).body.id;
    await e.advance(H);
    await e.post(`/v1/pods/${a}/stop`);
    await e.advance(H);
    await e.post(`/v1/pods/${a}/start`);
    await e.advance(H / 2);
    await e.request("DELETE", `/v1/pods/${b}`);
    await e.advance(H / 2);

    // a: 1 h + 1 h at $1.8/h; b (CPU, 2 vCPU at $0.1/h): 2.5 h until deleted.
    expect((await e.get("/v1/billing/pods")).body).toEqual([
      { time: iso(MONDAY), amount: 0.5, timeBilledMs: 2.5 * H },
      { time: iso(MONDAY), gpuTypeId: "NVIDIA GeForce RTX 4090", amount: 3.6, timeBilledMs: 2 * H },
    ]);
    expect((await e.get(`/v1/billing/pods?grouping=podId&bucketSize=hour&podId=${a}`)).body).toEqual([
      { time: iso(MONDAY), podId: a, amount: 1.8, timeBilledMs: H },
      { time: iso(MONDAY + 2 * H), podId: a, amount: 1.8, timeBilledMs: H },
    ]);
    expect((await e.get(`/v1/billing/pods?grouping=podId&podId=${b}`)).body).toEqual([{ time: iso(MONDAY), podId: b, amount: 0.5, timeBilledMs: 2.5 * H }]);
    expect((await e.get("/v1/billing/pods?gpuTypeId=NVIDIA%20GeForce%20RTX%204090&grouping=podId")).body).toEqual([
      { time: iso(MONDAY), podId: a, amount: 3.6, timeBilledMs: 2 * H },
    ]);
  });

  it("bills seeded pods from start and a pod started stopped not at all", async () => {
    e = await start(MONDAY, {
      pods: [
        { id: "on", name: "on", imageName: "img", gpuTypeIds: ["NVIDIA A40"] },
        { id: "off", name: "off", imageName: "img", desiredStatus: "EXITED" },
      ],
    });
    await e.advance(1000);
    expect((await e.get("/v1/billing/pods?grouping=podId")).body).toEqual([{ time: iso(MONDAY), podId: "on", amount: 0.001, timeBilledMs: 1000 }]);
  });
});

describe("/v1/billing/networkvolumes", () => {
  it("bills GB-hours at each volume's size over time, high-performance storage apart", async () => {
    e = await start(MONDAY);
    const std = (await e.post("/v2/network-volumes", { name: "std", size: 100, dataCenter: "EU-RO-1" })).body.id;
    await e.post("/v2/network-volumes", { name: "fast", size: 10, dataCenter: "EU-RO-1", type: "HIGH_PERFORMANCE" });
    await e.advance(10 * H);
    expect((await e.request("PATCH", `/v2/network-volumes/${std}`, { size: 200 })).status).toBe(200);
    await e.advance(10 * H);
    expect((await e.request("DELETE", `/v2/network-volumes/${std}`)).status).toBe(204);
    await e.advance(10 * H);

    // std: 100 GB × 10 h + 200 GB × 10 h at $0.001/GB-h = $3; fast: 10 GB × 30 h at $0.002 = $0.6,
    // of which 24 h fall on Monday and 6 h on Tuesday.
    const day = await e.get("/v1/billing/networkvolumes");
    expect(day.status).toBe(200);
    expect(day.body).toEqual([
      { time: iso(MONDAY), amount: 3.48, diskSpaceBilledGb: 210, highPerformanceStorageAmount: 0.48, highPerformanceStorageDiskSpaceBilledGb: 10 },
      { time: iso(MONDAY + DAY), amount: 0.12, diskSpaceBilledGb: 10, highPerformanceStorageAmount: 0.12, highPerformanceStorageDiskSpaceBilledGb: 10 },
    ]);
    const week = await e.get("/v1/billing/networkvolumes?bucketSize=week");
    expect(week.body).toEqual([
      { time: iso(MONDAY), amount: 3.6, diskSpaceBilledGb: 210, highPerformanceStorageAmount: 0.6, highPerformanceStorageDiskSpaceBilledGb: 10 },
    ]);
    const hours = (await e.get("/v1/billing/networkvolumes?bucketSize=hour")).body;
    expect(hours).toHaveLength(30);
    expect(hours[0]).toEqual({ time: iso(MONDAY), amount: 0.12, diskSpaceBilledGb: 110, highPerformanceStorageAmount: 0.02, highPerformanceStorageDiskSpaceBilledGb: 10 });
    expect(hours[10]).toMatchObject({ amount: 0.22, diskSpaceBilledGb: 210 });
    expect(hours[29]).toMatchObject({ time: iso(MONDAY + 29 * H), amount: 0.02, diskSpaceBilledGb: 10 });
  });

  it("bills configured volumes from start", async () => {
    e = await start(MONDAY, { networkVolumes: [{ id: "v", name: "v", size: 50, dataCenter: "EU-RO-1" }] });
    await e.advance(2 * H);
    expect((await e.get("/v1/billing/networkvolumes")).body).toEqual([
      { time: iso(MONDAY), amount: 0.1, diskSpaceBilledGb: 50, highPerformanceStorageAmount: 0, highPerformanceStorageDiskSpaceBilledGb: 0 },
    ]);
  });
});

describe("billing history and the emulator's state", () => {
  const warm = { endpoints: [{ id: "warm", workersMin: 1, workersMax: 1, gpuTypeIds: ["NVIDIA A40"] }] };

  it("is emptied by a reset", async () => {
    e = await start(MONDAY, warm);
    await e.post("/v1/pods", { imageName: "img" });
    await e.advance(H);
    expect((await e.post("/_emulator/reset")).status).toBe(200);
    await e.advance(60_000);
    expect((await e.get("/v1/billing/endpoints")).body).toEqual([{ time: iso(MONDAY), endpointId: "warm", amount: 0.06, timeBilledMs: 60_000 }]);
    expect((await e.get("/v1/billing/pods")).body).toEqual([]);
  });

  it("follows a snapshot restore without counting the abandoned future", async () => {
    e = await start(MONDAY, warm);
    await e.advance(10 * 60_000);
    expect((await e.post("/_emulator/snapshots/s")).status).toBe(200);
    await e.advance(50 * 60_000);
    expect((await e.post("/_emulator/snapshots/s/restore")).status).toBe(200);
    expect(e.now()).toBe(MONDAY + 10 * 60_000);
    await e.advance(5 * 60_000);
    // 10 min of the worker before the snapshot, 5 min of the one started at the restore.
    expect((await e.get("/v1/billing/endpoints")).body).toEqual([{ time: iso(MONDAY), endpointId: "warm", amount: 0.9, timeBilledMs: 15 * 60_000 }]);
  });
});

describe("billing windows", () => {
  it("snaps startTime down and endTime up to buckets, defaults to the last 30 days, and checks the query", async () => {
    e = await start(MONDAY - 40 * DAY, { endpoints: [{ id: "warm", workersMin: 1, workersMax: 1, gpuTypeIds: ["NVIDIA A40"] }] });
    await e.advance(40 * DAY + 2 * H);
    const q = (query: string) => e.get(`/v1/billing/endpoints?${query}`);

    const all = (await q("")).body as Array<{ time: string; timeBilledMs: number }>;
    // Now is Monday 02:00; the default window starts 30 days earlier, snapped to midnight.
    expect(all[0]!.time).toBe(iso(MONDAY - 30 * DAY));
    expect(all.at(-1)).toEqual({ time: iso(MONDAY), endpointId: "warm", amount: 7.2, timeBilledMs: 2 * H });
    expect(all).toHaveLength(31);

    const window = (await q(`bucketSize=hour&startTime=${iso(MONDAY + 30 * 60_000)}&endTime=${iso(MONDAY + H + 1)}`)).body;
    expect(window).toEqual([
      { time: iso(MONDAY), endpointId: "warm", amount: 3.6, timeBilledMs: H },
      { time: iso(MONDAY + H), endpointId: "warm", amount: 3.6, timeBilledMs: H },
    ]);
    expect((await q("startTime=2024-07-14&endTime=2024-07-15")).body).toEqual([{ time: iso(MONDAY - DAY), endpointId: "warm", amount: 86.4, timeBilledMs: DAY }]);
    // A window in the future holds nothing yet.
    expect((await q(`startTime=${iso(MONDAY + DAY)}&endTime=${iso(MONDAY + 2 * DAY)}`)).body).toEqual([]);

    const backwards = await q(`startTime=${iso(MONDAY)}&endTime=${iso(MONDAY - DAY)}`);
    expect(backwards.status).toBe(400);
    expect(backwards.body.errors).toEqual(["query.endTime: expected a time after startTime"]);
    const bad = await q("bucketSize=minute&startTime=yesterday&grouping=image");
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^query\.bucketSize: expected value to be one of/),
        "query.startTime: expected an RFC 3339 date-time such as 2023-01-01T00:00:00Z",
        expect.stringMatching(/^query\.grouping: expected value to be one of/),
      ]),
    );
    expect((await q("gpuTypeId=NVIDIA%20Voodoo")).status).toBe(400);
  });

  it("needs an API key", async () => {
    e = await start(MONDAY);
    for (const path of ["/v1/billing/pods", "/v1/billing/endpoints", "/v1/billing/networkvolumes"]) {
      expect((await e.request("GET", path, undefined, { authorization: "" })).status, path).toBe(401);
    }
  });
});
