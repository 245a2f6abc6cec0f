import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { API_KEY, inProcess, type InProcess } from "../../support/in-process.js";

/**
 * The operations the service's CLI (runpodctl, Go) sends, with its selections and its variables'
 * shapes (`?api_key=` in the URL, empty strings for what is not set), and REST v1/v2 answering for
 * the same resources afterwards.
 */
let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: { auth: { keys: [{ key: API_KEY }] } } });
});
afterEach(() => e.close());

/** As the CLI sends it: the key in the URL, no Authorization header. */
const cli = async (query: string, variables: Record<string, unknown> | null = null) => {
  const res = await e.app.request(`http://minipod.test/graphql?api_key=${API_KEY}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables }) });
  const body = (await res.json()) as any;
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
};

describe("the CLI's operations", () => {
  it("myself, gpuTypes with lowestPrice, dataCenters, serverlessGpuPools, podTemplates", async () => {
    const me = await cli(`query { myself { id email clientBalance currentSpendPerHr spendLimit notifyPodsStale notifyPodsGeneral notifyLowBalance } }`);
    expect(me.myself).toMatchObject({ id: "user_minipod", currentSpendPerHr: 0 });
    const cloud = await cli(
      `query LowestPrice($input: GpuLowestPriceInput!) { gpuTypes { lowestPrice(input: $input) { gpuName gpuTypeId minimumBidPrice uninterruptablePrice minMemory minVcpu } memoryInGb } }`,
      { input: { gpuCount: 2, secureCloud: null } },
    );
    const rest = (await e.get("/v2/catalog/gpus")).body.gpus as Array<{ id: string; price: { secure: number } }>;
    const a40 = cloud.gpuTypes.find((g: any) => g.lowestPrice.gpuTypeId === "NVIDIA A40");
    expect(a40).toMatchObject({ memoryInGb: 48, lowestPrice: { gpuName: "A40", uninterruptablePrice: rest.find((g) => g.id === "NVIDIA A40")!.price.secure * 2 } });
    const dcs = await cli(`query { dataCenters { id name location gpuAvailability { gpuTypeId displayName stockStatus } } }`);
    expect(dcs.dataCenters.map((d: { id: string }) => d.id)).toEqual((await e.get("/v2/catalog/datacenters")).body.dataCenters.map((d: { id: string }) => d.id));
    const pools = await cli(`query { serverlessGpuPools { id gpuTypeIds } }`);
    expect(pools.serverlessGpuPools).toContainEqual({ id: "ADA_24", gpuTypeIds: ["NVIDIA GeForce RTX 4090"] });
    const templates = await cli(
      `query PodTemplates($input: PodTemplateInput) { podTemplates(input: $input) { id name imageName isServerless isPublic isRunpod category containerDiskInGb volumeInGb volumeMountPath } }`,
      { input: { isRunpod: true } },
    );
    expect(templates.podTemplates).toEqual([]);
  });

  it("saveTemplate, saveEndpoint, updateEndpointTemplate: the resources REST shows, served by the queue", async () => {
    const templateInput = {
      name: "cli-tpl",
      imageName: "me/cli:1",
      dockerArgs: "",
      containerDiskInGb: 5,
      volumeInGb: 0,
      volumeMountPath: "",
      ports: "",
      env: [{ key: "K", value: "v" }],
      isServerless: true,
      startSsh: true,
      isPublic: false,
      readme: "",
    };
    const saved = await cli(
      `mutation saveTemplate($input: SaveTemplateInput) { saveTemplate(input: $input) { advancedStart containerDiskInGb dockerArgs env { key value } id imageName name ports readme startJupyter startScript startSsh volumeInGb volumeMountPath } }`,
      { input: templateInput },
    );
    const tplId = saved.saveTemplate.id;
    expect((await e.get(`/v1/templates/${tplId}`)).body).toMatchObject({ name: "cli-tpl", imageName: "me/cli:1", env: { K: "v" }, containerDiskInGb: 5, isServerless: true });

    const endpointInput = {
      name: "cli-ep",
      templateId: tplId,
      gpuIds: "AMPERE_24",
      networkVolumeId: "",
      locations: "",
      idleTimeout: 5,
      scalerType: "QUEUE_DELAY",
      scalerValue: 4,
      workersMin: 0,
      workersMax: 3,
      flashBootType: "",
      modelReferences: [],
    };
    const ep = await cli(
      `mutation saveEndpoint($input: EndpointInput!) { saveEndpoint(input: $input) { gpuIds id idleTimeout locations name networkVolumeId scalerType scalerValue templateId userId workersMax workersMin } }`,
      { input: endpointInput },
    );
    const id = ep.saveEndpoint.id;
    expect(ep.saveEndpoint).toMatchObject({ name: "cli-ep", gpuIds: "AMPERE_24", templateId: tplId, workersMax: 3, locations: null, networkVolumeId: null });
    expect((await e.get(`/v2/serverless/${id}`)).body).toMatchObject({ name: "cli-ep", gpu: { pools: ["AMPERE_24"] }, workers: { max: 3 } });

    const run = await e.post(`/v2/${id}/run`, { input: { n: 1 } });
    await e.core.runUntilIdle();
    expect((await e.get(`/v2/${id}/status/${run.body.id}`)).body).toMatchObject({ status: "COMPLETED", output: { n: 1 } });

    const other = (await e.post("/v2/templates", { name: "other", image: "me/other:1", serverless: true })).body.id;
    await cli(`mutation Mutation($input: UpdateEndpointTemplateInput) { updateEndpointTemplate(input: $input) { id templateId } }`, { input: { endpointId: id, templateId: other } });
    expect((await e.get(`/v1/endpoints/${id}`)).body).toMatchObject({ templateId: other, version: 1 });

    // saveEndpoint with an id changes that endpoint, as the CLI's update does.
    const changed = await cli(`mutation SaveEndpoint($input: EndpointInput!) { saveEndpoint(input: $input) { id workersMax networkVolumeIds { networkVolumeId } executionTimeoutMs } }`, {
      input: { id, name: "cli-ep", templateId: other, gpuIds: "AMPERE_24", workersMax: 5, networkVolumeIds: [], executionTimeoutMs: 120000, env: [{ key: "MODE", value: "fast" }] },
    });
    expect(changed.saveEndpoint).toEqual({ id, workersMax: 5, networkVolumeIds: [], executionTimeoutMs: 120000 });
    expect((await e.get(`/v2/serverless/${id}`)).body).toMatchObject({ workers: { max: 5 }, timeout: 120000 });
    const one = await cli(`{ myself { endpoint(id: "${id}") { id workersMax env { key value } } } }`);
    expect(one.myself.endpoint).toEqual({ id, workersMax: 5, env: [{ key: "MODE", value: "fast" }] });
    expect((await e.get(`/v1/endpoints/${id}`)).body.env).toEqual({ MODE: "fast" });
  });

  it("podFindAndDeployOnDemand, podStop, podResume, podTerminate with variables", async () => {
    const input = {
      stopAfter: "",
      terminateAfter: "",
      compliance: [],
      cloudType: "SECURE",
      containerDiskInGb: 20,
      dockerArgs: "",
      env: [{ key: "X", value: "1" }],
      gpuCount: 1,
      gpuTypeId: "NVIDIA L4",
      imageName: "me/pod:1",
      minMemoryInGb: 16,
      minVcpuCount: 4,
      name: "cli-pod",
      ports: "8888/http",
      templateId: "",
      volumeInGb: 10,
      volumeMountPath: "/workspace",
    };
    const created = await cli(`mutation createPod($input: PodFindAndDeployOnDemandInput!) { podFindAndDeployOnDemand(input: $input) { id costPerHr desiredStatus lastStatusChange } }`, { input });
    const id = created.podFindAndDeployOnDemand.id;
    const v1 = (await e.get(`/v1/pods/${id}`)).body;
    expect(v1).toMatchObject({ name: "cli-pod", image: "me/pod:1", memoryInGb: 16, vcpuCount: 4, env: { X: "1" }, volumeInGb: 10, desiredStatus: "RUNNING" });
    expect(created.podFindAndDeployOnDemand).toMatchObject({ desiredStatus: "RUNNING", costPerHr: v1.costPerHr, lastStatusChange: v1.lastStatusChange });

    const stopped = await cli(`mutation stopPod($podId: String!) { podStop(input: {podId: $podId}) { id desiredStatus lastStatusChange } }`, { podId: id });
    expect(stopped.podStop.desiredStatus).toBe("EXITED");
    expect((await e.get(`/v2/pods/${id}`)).body.status).toBe("EXITED");
    const resumed = await cli(`mutation podResume($podId: String!) { podResume(input: {podId: $podId}) { id costPerHr desiredStatus lastStatusChange } }`, { podId: id });
    expect(resumed.podResume.desiredStatus).toBe("RUNNING");
    const listed = await cli(`query myPods { myself { pods { id desiredStatus uptimeSeconds runtime { uptimeInSeconds } } } }`);
    expect(listed.myself.pods).toEqual([{ id, desiredStatus: "RUNNING", uptimeSeconds: 0, runtime: { uptimeInSeconds: 0 } }]);
    await e.advance(90_000);
    expect((await cli(`{ pod(input: { podId: "${id}" }) { uptimeSeconds } }`)).pod.uptimeSeconds).toBe(90);

    expect(await cli(`mutation terminatePod($podId: String!) { podTerminate(input: {podId: $podId}) }`, { podId: id })).toEqual({ podTerminate: null });
    expect((await e.get(`/v2/pods/${id}`)).status).toBe(404);
  });

  it("ssh keys through updateUserSettings, a template by id, Hub listings by search", async () => {
    const keys = "ssh-ed25519 AAAAC3Nza one@cli\n\nssh-rsa AAAAB3Nza two@cli";
    await cli(`mutation Mutation($input: UpdateUserSettingsInput) { updateUserSettings(input: $input) { id } }`, { input: { pubKey: keys } });
    expect((await e.get("/v2/account/ssh-keys")).body).toEqual({ keys: ["ssh-ed25519 AAAAC3Nza one@cli", "ssh-rsa AAAAB3Nza two@cli"] });

    const tpl = (await e.post("/v2/templates", { name: "ports", image: "me/p:1", ports: ["8888/http", "22/tcp"], env: { A: "1" } })).body.id;
    const one = await cli(
      `query GetTemplate($id: String!) { podTemplate(id: $id) { id name imageName isServerless isPublic isRunpod category ports portsConfig { port name } env { key value } containerDiskInGb containerRegistryAuthId volumeInGb volumeMountPath readme } }`,
      { id: tpl },
    );
    expect(one.podTemplate).toMatchObject({
      id: tpl,
      name: "ports",
      ports: "8888/http,22/tcp",
      portsConfig: [
        { port: 8888, name: null },
        { port: 22, name: null },
      ],
      env: [{ key: "A", value: "1" }],
      isRunpod: false,
    });

    const hub = await inProcess({
      config: {
        auth: { keys: [{ key: API_KEY }] },
        hub: [
          { repo: "acme/llm", imageName: "acme/llm:1", tags: ["vllm"] },
          { repo: "acme/tts", imageName: "acme/tts:1", category: "audio" },
          { repo: "other/sd", imageName: "o/sd:1", category: "image" },
        ],
      },
    });
    try {
      const search = async (input: Record<string, unknown>) => {
        const res = await hub.request("POST", "/graphql", {
          query: `query Listings($input: ListingsInput!) { listings(input: $input) { id title repoName repoOwner description category type tags stars views deploys language createdAt updatedAt } }`,
          variables: { input },
        });
        return (res.body.data.listings as Array<{ repoName: string }>).map((l) => l.repoName);
      };
      expect(await search({})).toEqual(["llm", "tts", "sd"]);
      expect(await search({ searchQuery: "VLLM" })).toEqual(["llm"]);
      expect(await search({ owner: "acme", limit: 1, offset: 1 })).toEqual(["tts"]);
      expect(await search({ category: "image" })).toEqual(["sd"]);
    } finally {
      hub.close();
    }
  });

  it("shows what REST created: an endpoint and a pod of /v2 in myself", async () => {
    const tpl = (await e.post("/v2/templates", { name: "rest-tpl", image: "me/rest:1", serverless: true, env: { A: "b" } })).body.id;
    const ep = (
      await e.post("/v2/serverless", {
        name: "rest-ep",
        type: "QUEUE",
        scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
        templateId: tpl,
        gpu: { pools: ["ADA_24", "AMPERE_16"], excludedTypes: ["NVIDIA RTX A4000"] },
        dataCenterIds: ["US-KS-2"],
      })
    ).body;
    const pod = (await e.post("/v2/pods", { name: "rest-pod", image: "me/rest:1", gpu: { id: "NVIDIA A40", count: 1 } })).body;
    const data = await cli(`{ myself { endpoints { id name gpuIds locations template { imageName env { key value } } } pods { id name desiredStatus } } }`);
    expect(data.myself.endpoints).toEqual([
      { id: ep.id, name: "rest-ep", gpuIds: "ADA_24,AMPERE_16,-NVIDIA RTX A4000", locations: "US-KS-2", template: { imageName: "me/rest:1", env: [{ key: "A", value: "b" }] } },
    ]);
    expect(data.myself.pods).toEqual([{ id: pod.id, name: "rest-pod", desiredStatus: "RUNNING" }]);
  });
});
