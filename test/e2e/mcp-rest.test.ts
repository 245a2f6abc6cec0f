import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contract, DESCRIPTION_FILE, DESCRIPTION_MISSING } from "../contract/v2-contract.js";
import { startCli, type RunningCli } from "../support/cli.js";
import { callTool, connectMcp } from "../support/mcp.js";
import { recorder, type Recorder } from "../support/recorder.js";

/**
 * Every REST tool of the service's MCP server (`@runpod/mcp-server`, unchanged, over stdio) against
 * the real CLI: create → read → update → action → delete of each resource, each result checked
 * for what it says, and each success body of a generated tool checked against the service's v2
 * description.
 */

const KEY = "mcp-rest-key";
const START = Date.parse("2026-06-01T00:00:00Z");
const HOUR = 3_600_000;
const SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMcpRest mcp@example.com";

/** Tools that are not REST: the queue operations (tested in mcp.test.ts) and the GraphQL ones. */
const NOT_REST = new Set([
  "run-endpoint",
  "runsync-endpoint",
  "get-job-status",
  "stream-job",
  "cancel-job",
  "retry-job",
  "endpoint-health",
  "purge-endpoint-queue",
  "get-capacity",
  "list-hub-repos",
  "deploy-hub-repo",
  "list-public-endpoints",
]);

const dir = mkdtempSync(join(tmpdir(), "minipod-mcp-rest-"));
const configFile = join(dir, "emulator.config.json");
const config = {
  clock: { mode: "manual", start: new Date(START).toISOString() },
  auth: { keys: [{ key: KEY }] },
  rateLimits: { rest: { minute: 10_000 } },
  pricing: { gpuPerHour: { "NVIDIA L4": 0.5, "NVIDIA GeForce RTX 4090": 0.75 } },
  templates: [{ id: "echo-tpl", name: "echo worker", imageName: "me/echo:1", handler: "echo" }],
};
writeFileSync(configFile, JSON.stringify(config));

describe("every REST tool of the service's MCP server against the real CLI", () => {
  let cli: RunningCli;
  let rec: Recorder;
  let client: Client;
  const called = new Set<string>();
  // The bodies are checked against the published description where it is kept (../shared/spec/).
  const checkSuccessBody = DESCRIPTION_FILE ? contract().checkSuccessBody : undefined;
  if (!checkSuccessBody) console.warn(`test/e2e/mcp-rest.test.ts: the tools' bodies are not checked against the description, ${DESCRIPTION_MISSING}`);

  /** A tool's result: its JSON payload, and whether the server flagged it as an error. */
  async function tool(name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; payload: any }> {
    called.add(name);
    return callTool(client, name, args);
  }

  /** A tool that must succeed; a generated one's body must match the description's success schema. */
  async function ok(name: string, args: Record<string, unknown> = {}, operationId?: string): Promise<any> {
    const res = await tool(name, args);
    expect(res.isError, `${name}: ${JSON.stringify(res.payload)}`).toBe(false);
    if (operationId && checkSuccessBody) expect(checkSuccessBody(operationId, res.payload), name).toEqual([]);
    return res.payload;
  }

  /**
   * A tool that must fail with the status given: a generated tool hands on minipod's problem+json
   * (with the server's hint), a curated one wraps it ("Runpod API error (404)").
   */
  async function fails(name: string, args: Record<string, unknown>, status: number): Promise<any> {
    const res = await tool(name, args);
    expect(res.isError, `${name} should fail: ${JSON.stringify(res.payload)}`).toBe(true);
    const said = res.payload.status === status || JSON.stringify(res.payload).includes(`(${status})`);
    expect(said, `${name}: ${JSON.stringify(res.payload)}`).toBe(true);
    return res.payload;
  }

  beforeAll(async () => {
    cli = await startCli(["--config", configFile]);
    // The MCP server's exchanges with minipod, recorded by `npm run contracts:record`.
    rec = await recorder(cli.url, { client: "@runpod/mcp-server: its REST tools", test: "test/e2e/mcp-rest.test.ts", clock: "manual", config });
    rec.scenario("mcp-rest-tools", { about: "every REST tool: create, read, update, act on and delete each resource" });
    client = (await connectMcp(rec.url, KEY, dir)).client;
  });
  afterAll(async () => {
    await client?.close();
    await rec?.close();
    expect(await cli?.stop("SIGINT")).toBe(0);
  });

  it("manages the account's SSH keys", async () => {
    expect(await ok("get-ssh-keys", {}, "getSshKeys")).toEqual({ keys: [] });
    expect(await ok("update-ssh-keys", { body: { keys: [SSH_KEY] } }, "updateSshKeys")).toEqual({ keys: [SSH_KEY] });
    expect(await ok("get-ssh-keys", {}, "getSshKeys")).toEqual({ keys: [SSH_KEY] });
    await fails("update-ssh-keys", { body: { keys: ["not a key"] } }, 400);
  });

  it("reads the catalog", async () => {
    const gpus = (await ok("list-gpu-types", {}, "listGpuTypes")).gpus;
    expect(gpus.find((g: { id: string }) => g.id === "NVIDIA L4")).toMatchObject({ pool: "AMPERE_24", price: { secure: 0.5 } });
    const l4 = await ok("get-gpu-type", { id: "NVIDIA L4", include: ["AVAILABILITY"], product: ["POD", "SERVERLESS"], countryCodes: ["FR", "RO"] }, "getGpuType");
    expect(l4).toMatchObject({ availability: "HIGH", dataCenters: [{ id: "EU-RO-1" }, { id: "EU-FR-1" }] });
    await fails("list-gpu-types", { product: ["POD"] }, 400);
    expect((await ok("list-cpu-types", { include: ["AVAILABILITY"], product: ["POD"] }, "listCpuTypes")).cpus).toHaveLength(6);
    expect(await ok("get-cpu-type", { id: "cpu5c" }, "getCpuType")).toMatchObject({ id: "cpu5c", ramGbPerVcpu: 2 });
    const europe = (await ok("list-data-centers", { regions: ["EUROPE"], include: ["CPU_AVAILABILITY"] }, "listDataCenters")).dataCenters;
    expect(europe.every((d: { region: string; cpuAvailability: unknown[] }) => d.region === "EUROPE" && d.cpuAvailability.length === 6)).toBe(true);
    expect(await ok("get-data-center", { id: "US-TX-3" }, "getDataCenter")).toMatchObject({ id: "US-TX-3", region: "NORTH_AMERICA" });
    expect(await ok("list-public-templates", { source: "official" }, "listPublicTemplates")).toEqual({ templates: [] });
  });

  it("creates, reads, updates and deletes network volumes, registries and delegations", async () => {
    const vol = await ok("create-network-volume", { body: { name: "datasets", size: 50, dataCenter: "EU-RO-1" } }, "createNetworkVolume");
    expect(vol).toEqual({ id: expect.any(String), name: "datasets", size: 50, dataCenter: "EU-RO-1", type: "STANDARD" });
    expect(await ok("get-network-volume", { id: vol.id }, "getNetworkVolume")).toEqual(vol);
    expect(await ok("update-network-volume", { id: vol.id, body: { size: 80 } }, "updateNetworkVolume")).toMatchObject({ size: 80 });
    expect((await ok("list-network-volumes", {}, "listNetworkVolumes")).networkVolumes).toEqual([{ ...vol, size: 80 }]);
    await fails("update-network-volume", { id: vol.id, body: { size: 20 } }, 400);

    const reg = await ok("create-registry", { body: { name: "ghcr", username: "me", password: "hunter2" } }, "createRegistry");
    expect(reg).toEqual({ id: expect.any(String), name: "ghcr" });
    expect(await ok("get-registry", { id: reg.id }, "getRegistry")).toEqual(reg);
    expect(await ok("list-registries", {}, "listRegistries")).toEqual({ registries: [reg] });

    const deleg = await ok("create-delegation", { body: { resource: "arn:aws:ecr:us-east-2:123456789012:repository/team/app", name: "app" } }, "createDelegation");
    expect(deleg).toMatchObject({ awsUser: "123456789012", repository: "team/app", awsRegion: "us-east-2", dockerRegistryUri: "123456789012.dkr.ecr.us-east-2.amazonaws.com" });
    expect((await ok("list-delegations", {}, "listDelegations")).delegations).toEqual([deleg]);
    expect(await ok("revoke-delegation", { id: deleg.id })).toEqual({ status: 204 });
    expect((await ok("list-delegations", {}, "listDelegations")).delegations).toEqual([]);

    expect(await ok("delete-registry", { id: reg.id })).toEqual({ status: 204 });
    await fails("get-registry", { id: reg.id }, 404);
    // An hour of 80 GB at the default 0.07 USD per GB-month (720 h).
    await cli.advance(HOUR);
    const billed = await ok("list-network-volume-billing", { networkVolumeId: vol.id, bucketSize: "day" }, "listNetworkVolumeBilling");
    expect(billed.records).toEqual([expect.objectContaining({ networkVolumeId: vol.id, standardAmount: 0.007778, highPerformanceAmount: 0, totalAmount: 0.007778 })]);
    expect(await ok("delete-network-volume", { id: vol.id })).toEqual({ status: 204 });
    await fails("get-network-volume", { id: vol.id }, 404);
  });

  it("runs a serverless endpoint made from a template, and follows its workers, logs, releases and billing", async () => {
    const tpl = await ok("create-template", { body: { name: "worker", image: "me/worker:1", serverless: true, env: { MODEL: "small" } } }, "createTemplate");
    expect(tpl).toMatchObject({ name: "worker", image: "me/worker:1", serverless: true, env: { MODEL: "small" }, startSsh: true });
    expect(await ok("get-template", { id: tpl.id }, "getTemplate")).toEqual(tpl);
    expect(await ok("update-template", { id: tpl.id, body: { env: { MODEL: "large" } } }, "updateTemplate")).toMatchObject({ env: { MODEL: "large" } });
    expect((await ok("list-templates")).templates).toContainEqual({ id: tpl.id, name: "worker", image: "me/worker:1", serverless: true });

    const ep = await ok(
      "create-endpoint",
      { body: { name: "inference", type: "QUEUE", templateId: tpl.id, gpu: { pools: ["AMPERE_24"] }, workers: { min: 1, max: 2 }, scaling: { type: "QUEUE_DELAY", queueDelay: 2 } } },
      "createEndpoint",
    );
    expect(ep).toMatchObject({ name: "inference", image: "me/worker:1", env: { MODEL: "large" }, gpu: { pools: ["AMPERE_24"] }, workers: { min: 1, max: 2 } });
    expect(await ok("get-endpoint", { id: ep.id }, "getEndpoint")).toEqual(ep);
    const listed = await ok("list-endpoints");
    expect(listed.items).toContainEqual(expect.objectContaining({ id: ep.id, name: "inference", image: "me/worker:1" }));

    const updated = await ok("update-endpoint", { id: ep.id, body: { image: "me/worker:2", workers: { max: 3 } } }, "updateEndpoint");
    expect(updated).toMatchObject({ image: "me/worker:2", workers: { min: 1, max: 3 } });
    const gpus = await ok("set-endpoint-gpus", { endpointId: ep.id, pools: ["ADA_24", "AMPERE_24"], excludeGpuTypeIds: ["NVIDIA L4"], gpuCount: 2 });
    expect(gpus).toMatchObject({ previousGpuIds: "AMPERE_24", endpoint: { id: ep.id, gpuCount: 2, workersMin: 1, workersMax: 3 } });
    expect(gpus.endpoint.gpuIds).toMatch(/^ADA_24,AMPERE_24,-NVIDIA L4/);

    // The endpoint serves the queue: its worker starts cold (1 s of virtual time), then runs a job.
    const workersCold = await ok("list-endpoint-workers", { id: ep.id }, "listEndpointWorkers");
    expect(workersCold.summary).toMatchObject({ initializing: 1, total: 1 });
    await cli.advance(1000);
    const run = await ok("run-endpoint", { endpointId: ep.id, input: { prompt: "hi" } });
    await cli.advance(0);
    expect(await ok("get-job-status", { endpointId: ep.id, jobId: run.id })).toMatchObject({ status: "COMPLETED", output: { prompt: "hi" } });
    const workers = await ok("list-endpoint-workers", { id: ep.id }, "listEndpointWorkers");
    expect(workers).toMatchObject({ summary: { idle: 1, total: 1 }, endpointVersion: 1 });
    const worker = workers.workers[0];
    expect(worker).toMatchObject({ status: "IDLE", version: 1, isStale: false, image: "me/worker:2" });

    const logs = await ok("stream-worker-logs", { endpointId: ep.id, workerId: worker.id, maxWaitMs: 500 });
    expect(logs.items.map((l: { line: string }) => l.line)).toEqual([
      `worker created for endpoint ${ep.id}: cold start of 1000 ms`,
      "worker ready: taking jobs",
      `job ${run.id} started (attempt 1)`,
      `job ${run.id} completed in 0 ms`,
    ]);
    expect(logs.items[0]).toMatchObject({ source: "system", ts: new Date(START + HOUR).toISOString() });

    const releases = await ok("list-endpoint-releases", { id: ep.id }, "listEndpointReleases");
    expect(releases.releases.map((r: { version: number }) => r.version)).toEqual([1, 0]);
    expect(releases.releases[0].diff).toEqual([{ field: "template.imageName", old: "me/worker:1", new: "me/worker:2" }]);
    expect(await ok("list-endpoint-builds", { id: ep.id })).toEqual({ builds: [] });
    await fails("get-endpoint-build", { id: ep.id, buildId: "build-1" }, 404);

    await cli.advance(HOUR);
    const billed = await ok("list-serverless-billing", { serverlessId: ep.id, bucketSize: "hour", lastN: 2 }, "listServerlessBilling");
    expect(billed.metadata).toMatchObject({ uniqueServerlessCount: 1, query: { serverlessId: ep.id, bucketSize: "hour" } });
    expect(billed.metadata.totals.totalAmount).toBeGreaterThan(0);

    expect(await ok("delete-endpoint", { id: ep.id })).toEqual({ status: 204 });
    await fails("get-endpoint", { id: ep.id }, 404);
    expect(await ok("delete-template", { id: tpl.id })).toEqual({ status: 204 });
    await fails("get-template", { id: tpl.id }, 404);
  });

  it("creates a pod, changes it, stops and starts it, reads its log and billing, and deletes it", async () => {
    const pod = await ok("create-pod", { body: { name: "notebook", image: "me/lab:1", gpu: { id: "NVIDIA L4", count: 2 }, ports: ["8888/http"], startSsh: true } }, "createPod");
    expect(pod).toMatchObject({ name: "notebook", status: "RUNNING", actions: ["stop", "restart", "terminate"], gpu: { id: "NVIDIA L4", count: 2 }, cost: 1, env: { PUBLIC_KEY: SSH_KEY } });
    expect(await ok("get-pod", { id: pod.id }, "getPod")).toEqual(pod);
    expect((await ok("list-pods", {}, "listPods")).pods.map((p: { id: string }) => p.id)).toContain(pod.id);
    expect(await ok("update-pod", { id: pod.id, body: { name: "lab", locked: false } }, "updatePod")).toMatchObject({ name: "lab" });
    await cli.advance(HOUR);
    expect(await ok("pod-action", { id: pod.id, body: { action: "stop" } }, "podAction")).toMatchObject({ status: "EXITED", cost: 0, actions: ["start", "terminate"] });
    await fails("pod-action", { id: pod.id, body: { action: "restart" } }, 409);
    expect(await ok("pod-action", { id: pod.id, body: { action: "start" } }, "podAction")).toMatchObject({ status: "RUNNING" });
    const logs = await ok("stream-pod-logs", { podId: pod.id, source: "system", maxWaitMs: 500 });
    expect(logs.items.map((l: { line: string }) => l.line)).toEqual([
      "pod created: image me/lab:1, 2 x NVIDIA L4, data center EU-RO-1",
      "container started (minipod runs no container: the pod is RUNNING at once)",
      "configuration changed: name, locked",
      "container stopped: the pod is EXITED, its GPUs released, its disk kept",
      "container started",
    ]);
    const billed = await ok("list-pod-billing", { podId: pod.id, bucketSize: "day" }, "listPodBilling");
    expect(billed.records).toEqual([expect.objectContaining({ podId: pod.id, gpuAmount: 1, totalAmount: 1 })]);
    expect(await ok("delete-pod", { id: pod.id })).toEqual({ status: 204 });
    await fails("get-pod", { id: pod.id }, 404);
  });

  it("creates a cluster, lists its pods, renames and deletes it; bills everything", async () => {
    const cluster = await ok(
      "create-cluster",
      { body: { name: "ray", type: "RAY", image: "me/ray:1", compute: { gpuTypeId: "NVIDIA GeForce RTX 4090", gpuCountPerPod: 1, podCount: 2 } } },
      "createCluster",
    );
    expect(cluster).toMatchObject({ name: "ray", type: "RAY", pods: { total: 2, byStatus: { RUNNING: 2 } } });
    expect(await ok("get-cluster", { id: cluster.id }, "getCluster")).toEqual(cluster);
    expect((await ok("list-clusters", {}, "listClusters")).clusters).toEqual([cluster]);
    const pods = (await ok("list-cluster-pods", { id: cluster.id }, "listClusterPods")).pods;
    expect(pods.map((p: { cluster: { role: string } }) => p.cluster.role)).toEqual(["RAY_HEAD", "RAY_WORKER"]);
    expect((await ok("list-pods", { includeClusterPods: true }, "listPods")).pods.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining(pods.map((p: { id: string }) => p.id)));
    await fails("delete-pod", { id: pods[1].id }, 409);
    expect(await ok("update-cluster", { id: cluster.id, body: { name: "ray-2" } }, "updateCluster")).toMatchObject({ name: "ray-2" });
    await cli.advance(HOUR);
    const clusterBilling = await ok("list-cluster-billing", { clusterId: cluster.id, bucketSize: "day" }, "listClusterBilling");
    expect(clusterBilling.records).toEqual([expect.objectContaining({ clusterId: cluster.id, gpuAmount: 1.5, totalAmount: 1.5 })]);
    const all = await ok("list-billing", { bucketSize: "day" }, "listBilling");
    expect(all.records).toHaveLength(1);
    expect(all.records[0]).toMatchObject({ clusterGpuAmount: 1.5, podGpuAmount: 1 });
    expect(await ok("list-endpoint-billing", { lastN: 1 }, "listEndpointBilling")).toMatchObject({ records: [] });
    expect(await ok("delete-cluster", { id: cluster.id })).toEqual({ status: 204 });
    await fails("get-cluster", { id: cluster.id }, 404);
  });

  it("has called every REST tool the server offers", async () => {
    const { tools } = await client.listTools();
    const rest = tools.map((t) => t.name).filter((n) => !NOT_REST.has(n));
    expect(rest.filter((n) => !called.has(n))).toEqual([]);
    expect(rest.length).toBeGreaterThanOrEqual(56);
  });
});
