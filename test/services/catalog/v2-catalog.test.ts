import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

let e: InProcess;
beforeAll(async () => {
  e = await inProcess({ config: { pricing: { gpuPerHour: { "NVIDIA L4": 0.4 }, cpuPerVcpuHour: 0.03 } } });
});
afterAll(() => e.close());

const enc = encodeURIComponent;

describe("/v2/catalog/gpus", () => {
  it("lists every GPU type with its pool, memory, machine sizes and the configured prices", async () => {
    const res = await e.get("/v2/catalog/gpus");
    expect(res.status).toBe(200);
    expect(res.body.gpus).toHaveLength(49);
    const l4 = res.body.gpus.find((g: { id: string }) => g.id === "NVIDIA L4");
    expect(l4).toEqual({
      id: "NVIDIA L4",
      name: "L4",
      pool: "AMPERE_24",
      manufacturer: "NVIDIA",
      memory: 24,
      secure: true,
      community: true,
      price: { secure: 0.4, community: 0.4, serverless: 0.4 },
      maxCount: { secure: 8, community: 8 },
    });
    const t4 = res.body.gpus.find((g: { id: string }) => g.id === "Tesla T4");
    expect(t4).toMatchObject({ pool: null, secure: false, community: true });
    expect(t4.price.serverless).toBeUndefined();
    // Every pool a GPU type names is a pool an endpoint can be created on.
    const pools = [...new Set(res.body.gpus.map((g: { pool: string | null }) => g.pool).filter(Boolean))];
    for (const pool of pools) {
      const ep = await e.post("/v2/serverless", { name: `on ${pool}`, type: "QUEUE", scaling: { type: "QUEUE_DELAY", queueDelay: 4 }, image: "x", gpu: { pools: [pool] } });
      expect(ep.status, String(pool)).toBe(201);
      await e.request("DELETE", `/v2/serverless/${ep.body.id}`);
    }
  });

  it("adds availability when asked, for the product contexts and filters given", async () => {
    const res = await e.get(`/v2/catalog/gpus/${enc("NVIDIA H100 80GB HBM3")}?include=AVAILABILITY&product=POD,SERVERLESS&minCudaVersion=12.8`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: "NVIDIA H100 80GB HBM3",
      pool: "ADA_80_PRO",
      availability: "HIGH",
      cudaVersions: [
        { version: "13.0", available: true },
        { version: "12.9", available: true },
        { version: "12.8", available: true },
      ],
    });
    expect(res.body.dataCenters).toHaveLength(26);
    const community = await e.get(`/v2/catalog/gpus/${enc("NVIDIA H100 80GB HBM3")}?include=AVAILABILITY&product=POD&cloud=COMMUNITY`);
    expect(community.body.availability).toBe("NONE");
    expect(community.body.dataCenters).toBeUndefined();
    const tooMany = await e.get(`/v2/catalog/gpus/${enc("NVIDIA L4")}?include=AVAILABILITY&product=POD&count=9`);
    expect(tooMany.body.availability).toBe("NONE");
    const france = await e.get(`/v2/catalog/gpus/${enc("NVIDIA L4")}?include=AVAILABILITY&product=POD&countryCodes=FR`);
    expect(france.body.dataCenters).toEqual([{ id: "EU-FR-1", name: "EU France 1", availability: "HIGH" }]);
    const nowhere = await e.get("/v2/catalog/gpus?include=AVAILABILITY&product=POD&countryCodes=BR");
    expect(nowhere.body.gpus).toEqual([]);
    const amd = await e.get(`/v2/catalog/gpus/${enc("AMD Instinct MI300X OAM")}?include=AVAILABILITY&product=POD`);
    expect(amd.body).toMatchObject({ availability: "HIGH", manufacturer: "AMD" });
    expect(amd.body.cudaVersions).toBeUndefined();
  });

  it("refuses filters without include=AVAILABILITY, include without product, and both CUDA filters", async () => {
    expect((await e.get("/v2/catalog/gpus?include=AVAILABILITY")).body.errors).toEqual(["query.product: expected the product contexts availability is for (include=AVAILABILITY needs it)"]);
    expect((await e.get("/v2/catalog/gpus?product=POD")).body.errors).toEqual(["query.product: valid only with include=AVAILABILITY"]);
    expect((await e.get("/v2/catalog/gpus?include=AVAILABILITY&product=POD&cudaVersions=12.8&minCudaVersion=12")).status).toBe(400);
    expect((await e.get("/v2/catalog/gpus?include=AVAILABILITY&product=POD&countryCodes=france")).status).toBe(400);
    expect((await e.get("/v2/catalog/gpus/NVIDIA%20Voodoo")).status).toBe(404);
  });
});

describe("/v2/catalog/cpus and /datacenters and /templates", () => {
  it("lists CPU flavors with their RAM per vCPU and price", async () => {
    const res = await e.get("/v2/catalog/cpus");
    expect(res.body.cpus.map((c: { id: string }) => c.id)).toEqual(["cpu3c", "cpu3g", "cpu3m", "cpu5c", "cpu5g", "cpu5m"]);
    expect((await e.get("/v2/catalog/cpus/cpu5g")).body).toEqual({
      id: "cpu5g",
      name: "General Purpose",
      group: "Gen 5",
      vcpu: { min: 2, max: 32 },
      ramGbPerVcpu: 4,
      price: { securePerVcpu: 0.03, serverlessPerVcpu: 0.03 },
    });
    expect((await e.get("/v2/catalog/cpus/cpu5g?include=AVAILABILITY&product=POD&vcpuCount=6")).body.availability).toBe("NONE");
    expect((await e.get("/v2/catalog/cpus/cpu5g?include=AVAILABILITY&product=POD&vcpuCount=8")).body.availability).toBe("HIGH");
    expect((await e.get("/v2/catalog/cpus/cpu9x")).status).toBe(404);
  });

  it("lists data centers, filtered, with availability when asked", async () => {
    const all = (await e.get("/v2/catalog/datacenters")).body.dataCenters;
    expect(all).toHaveLength(26);
    expect((await e.get("/v2/catalog/datacenters/EU-RO-1")).body).toEqual({
      id: "EU-RO-1",
      name: "EU Romania 1",
      region: "EUROPE",
      globalNetwork: true,
      networkVolumeTypes: ["STANDARD", "HIGH_PERFORMANCE"],
      compliance: ["GDPR", "ISO_IEC_27001", "SOC_2_TYPE_2"],
    });
    const hp = (await e.get("/v2/catalog/datacenters?regions=EUROPE&networkVolumeTypes=STANDARD,HIGH_PERFORMANCE&globalNetwork=true")).body.dataCenters;
    expect(hp.map((d: { id: string }) => d.id).sort()).toEqual(["EU-RO-1", "EU-SE-1", "EUR-IS-1"]);
    const withGpus = (await e.get("/v2/catalog/datacenters/US-TX-3?include=GPU_AVAILABILITY")).body;
    expect(withGpus.gpuAvailability).toHaveLength(49);
    expect(withGpus.cpuAvailability).toBeUndefined();
    expect((await e.get("/v2/catalog/datacenters/MARS-1")).status).toBe(404);
  });

  it("has no public templates", async () => {
    for (const source of ["official", "verified", "community"]) expect((await e.get(`/v2/catalog/templates?source=${source}`)).body).toEqual({ templates: [] });
    expect((await e.get("/v2/catalog/templates?source=mine")).status).toBe(400);
  });
});
