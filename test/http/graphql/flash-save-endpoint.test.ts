import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

/**
 * `saveEndpoint` as runpod-flash sends it for a live @Endpoint (its selection and its input, with
 * the zero "use the default" values it sends), and what it reads back.
 */
let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: {} });
});
afterEach(() => e.close());

const SELECTION = `aiKey gpuIds id idleTimeout locations name networkVolumeId networkVolumeIds { networkVolumeId dataCenterId } flashEnvironmentId
  scalerType scalerValue templateId type userId version workersMax workersMin workersStandby workersPFBTarget gpuCount allowedCudaVersions
  minCudaVersion executionTimeoutMs instanceIds activeBuildid idePodId flashBootType`;
const SAVE = `mutation saveEndpoint($input: EndpointInput!) { saveEndpoint(input: $input) { ${SELECTION} } }`;

const template = (imageName: string) => ({
  advancedStart: false,
  config: {},
  containerDiskInGb: 10,
  containerRegistryAuthId: "",
  dockerArgs: "",
  env: [{ key: "RUNPOD_API_KEY", value: "key1" }],
  imageName,
  name: "LiveServerless_abc__PodTemplate_def",
  ports: "",
  startScript: "",
});

describe("saveEndpoint as runpod-flash sends it", () => {
  it("a CPU endpoint: its instanceIds echoed as sent, executionTimeoutMs 0 taken as the default, the Flash fields answered", async () => {
    const input = {
      ...{ executionTimeoutMs: 0, idleTimeout: 60, name: "live-hello", scalerType: "QUEUE_DELAY", scalerValue: 4, type: "QB", workersMax: 1, workersMin: 0 },
      ...{ workersPFBTarget: 0, allowedCudaVersions: "", instanceIds: ["cpu3c-1-2"], template: template("runpod/flash-cpu:py3.12-latest"), flashBootType: "FLASHBOOT" },
    };
    const res = await e.request("POST", "/graphql", { query: SAVE, variables: { input } });
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    const saved = res.body.data.saveEndpoint;
    expect(saved).toMatchObject({ name: "live-hello", type: "QB", instanceIds: ["cpu3c-1-2"], gpuIds: null, executionTimeoutMs: 600000 });
    expect(saved).toMatchObject({ workersPFBTarget: 0, flashEnvironmentId: null, activeBuildid: null, idePodId: null });
    expect((await e.get(`/v1/endpoints/${saved.id}`)).body).toMatchObject({ computeType: "CPU" });
    // The endpoint of a runpod/flash image runs worker processes (minipod's Flash worker).
    expect(e.core.endpoints.spec(saved.id, "QUEUE")?.handler).toBe("external");
  });

  it("a GPU endpoint in every data center the SDK lists: those minipod's catalog lacks are left out; a list of none known is refused", async () => {
    const locations = "US-CA-2,US-IL-1,US-KS-2,US-MO-1,US-MO-2,US-NC-2,US-NE-1,US-WA-1,EU-CZ-1,EU-RO-1,EUR-NO-1";
    const input = { name: "live-gpu", gpuIds: "ADA_24", gpuCount: 1, locations, executionTimeoutMs: 0, template: template("runpod/flash:py3.12-latest") };
    const res = await e.request("POST", "/graphql", { query: SAVE, variables: { input } });
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    expect(res.body.data.saveEndpoint.locations).toBe("US-CA-2,US-IL-1,US-KS-2,US-WA-1,EU-CZ-1,EU-RO-1,EUR-NO-1");
    const none = await e.request("POST", "/graphql", { query: SAVE, variables: { input: { ...input, locations: "US-MO-1,US-NE-1" } } });
    expect(none.body.errors[0].message).toContain("dataCenterIds.0");
  });

  it("a general-purpose CPU flavor has 4 GB a vCPU; an instance id of no flavor is refused naming it", async () => {
    const input = { name: "g", instanceIds: ["cpu3g-2-8"], template: template("me/worker:1") };
    const ok = await e.request("POST", "/graphql", { query: SAVE, variables: { input } });
    expect(ok.body.data.saveEndpoint.instanceIds).toEqual(["cpu3g-2-8"]);
    const bad = await e.request("POST", "/graphql", { query: SAVE, variables: { input: { ...input, instanceIds: ["gpu9-1-2"] } } });
    expect(bad.body.errors[0]).toMatchObject({ extensions: { code: "VALIDATION_FAILED" } });
    expect(bad.body.errors[0].message).toContain('instanceIds.0: expected <flavor>-<vCPUs>-<memory GB> of a CPU flavor');
  });
});

describe("cpuFlavors, as runpod-flash and the SDK 2.x ask for CPU stock", () => {
  const STOCK = `query SecureCpuTypes($cpuFlavorInput: CpuFlavorInput, $specificsInput: SpecificsInput) {
    cpuFlavors(input: $cpuFlavorInput) { specifics(input: $specificsInput) { stockStatus } } }`;
  const stock = async (flavor: string, dataCenterId: string, instanceId: string) => {
    const res = await e.request("POST", "/graphql", { query: STOCK, variables: { cpuFlavorInput: { id: flavor }, specificsInput: { dataCenterId, instanceId } } });
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    return res.body.data.cpuFlavors.map((f: { specifics: { stockStatus: string | null } }) => f.specifics.stockStatus);
  };

  it("High for an instance of the flavor in a data center minipod has; null elsewhere; no flavor of an unknown id", async () => {
    expect(await stock("cpu3c", "EU-CZ-1", "cpu3c-1-2")).toEqual(["High"]);
    expect(await stock("cpu3c", "", "cpu3c-8-16")).toEqual(["High"]);
    expect(await stock("cpu3c", "US-MO-1", "cpu3c-1-2")).toEqual([null]);
    expect(await stock("cpu3c", "EU-CZ-1", "cpu5c-1-2")).toEqual([null]);
    expect(await stock("gpu9", "EU-CZ-1", "gpu9-1-2")).toEqual([]);
  });
});
