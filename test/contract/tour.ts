import { inProcess } from "../support/in-process.js";
import { contract } from "./v2-contract.js";

/** One answer of the tour: the operation it belongs to and its status. */
export interface Visit {
  operationId: string;
  method: string;
  path: string;
  status: number;
  rateLimited: boolean;
}

const START = Date.parse("2026-05-04T00:00:00Z");
const READER = "reader-key";

/**
 * Calls every operation of the REST v2 description on an in-process minipod, successes and the
 * errors a client can cause (400, 401, 403, 404, 409, 429), through the test helper that checks
 * each answer against the description. Returns what was called and answered.
 */
export async function tour(): Promise<Visit[]> {
  const { find } = contract();
  const visits: Visit[] = [];
  const e = await inProcess({
    config: {
      clock: { mode: "manual", start: START },
      auth: { keys: [{ key: "test-key" }, { key: READER, scopes: ["rest:read"] }] },
      rateLimits: { rest: { minute: 1000 } },
      templates: [{ id: "worker-tpl", name: "worker", imageName: "me/worker:1", handler: "echo" }],
    },
  });
  const record = (method: string, path: string, status: number, headers: Headers) => {
    const op = find(method, path.split("?")[0]!);
    if (op) visits.push({ operationId: op.operationId, method, path, status, rateLimited: headers.has("ratelimit") });
  };
  const call = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const r = await e.request(method, path, body, headers);
    record(method, path, r.status, r.headers);
    return r;
  };
  const stream = async (path: string) => {
    const res = await e.stream(path);
    record("GET", path, res.status, res.headers);
    await res.body?.cancel();
  };
  try {
    // Account
    await call("GET", "/v2/account/ssh-keys");
    await call("PUT", "/v2/account/ssh-keys", { keys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITour tour@example.com"] });
    await call("PUT", "/v2/account/ssh-keys", { keys: ["not a key"] });

    // Network volumes
    const vol = (await call("POST", "/v2/network-volumes", { name: "data", size: 20, dataCenter: "EU-RO-1" })).body.id;
    await call("POST", "/v2/network-volumes", { name: "data", size: 1, dataCenter: "EU-RO-1" });
    await call("GET", "/v2/network-volumes");
    await call("GET", `/v2/network-volumes/${vol}`);
    await call("PATCH", `/v2/network-volumes/${vol}`, { size: 30 });
    await call("PATCH", `/v2/network-volumes/${vol}`, { size: 10 });
    await call("GET", "/v2/network-volumes/none");

    // Registries and delegations
    const reg = (await call("POST", "/v2/registries", { name: "ghcr", username: "me", password: "secret" })).body.id;
    await call("POST", "/v2/registries", { name: "no-password", username: "me" });
    await call("GET", "/v2/registries");
    await call("GET", `/v2/registries/${reg}`);
    await call("GET", "/v2/registries/none");
    const deleg = (await call("POST", "/v2/registries/delegations", { resource: "arn:aws:ecr:us-east-2:123456789012:repository/app", name: "app" })).body.id;
    await call("GET", "/v2/registries/delegations");
    await call("DELETE", `/v2/registries/delegations/${deleg}`);
    await call("DELETE", `/v2/registries/delegations/${deleg}`);
    await call("POST", "/v2/registries/delegations", { resource: "not an arn" });

    // Templates
    const tpl = (await call("POST", "/v2/templates", { name: "pod tpl", image: "me/pod:1", registry: reg, mounts: { persistent: { size: 20, path: "/workspace" } } })).body.id;
    await call("POST", "/v2/templates", { name: "bad", image: "x", handler: "echo" });
    await call("GET", "/v2/templates");
    await call("GET", `/v2/templates/${tpl}`);
    await call("PATCH", `/v2/templates/${tpl}`, { ports: ["8888/http"] });
    await call("GET", "/v2/templates/none");

    // Serverless
    const ep = (
      await call("POST", "/v2/serverless", {
        name: "ep",
        type: "QUEUE",
        scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
        templateId: "worker-tpl",
        gpu: { pools: ["ADA_24"] },
        workers: { min: 1, max: 2 },
        networkVolumes: [vol],
      })
    ).body.id;
    await call("POST", "/v2/serverless", { name: "neither", type: "QUEUE", scaling: { type: "QUEUE_DELAY", queueDelay: 4 }, image: "x" });
    await call("POST", "/v2/serverless", { name: "bad template", type: "QUEUE", scaling: { type: "QUEUE_DELAY", queueDelay: 4 }, templateId: "none", gpu: { pools: ["ADA_24"] } });
    await call("GET", "/v2/serverless");
    await call("GET", `/v2/serverless/${ep}`);
    await call("PATCH", `/v2/serverless/${ep}`, { image: "me/worker:2", workers: { max: 3 } });
    await e.advance(1000);
    await e.post(`/v2/${ep}/run`, { input: { hello: 1 } });
    const worker = (await call("GET", `/v2/serverless/${ep}/workers`)).body.workers[0].id;
    await call("GET", `/v2/serverless/${ep}/releases`);
    await stream(`/v2/serverless/${ep}/workers/${worker}/logs`);
    await call("GET", `/v2/serverless/${ep}/workers/none/logs`);
    await call("GET", "/v2/serverless/none");
    await call("DELETE", `/v2/network-volumes/${vol}`); // in use by the endpoint: 400

    // Pods
    const pod = (await call("POST", "/v2/pods", { name: "pod", templateId: tpl, gpu: { id: "NVIDIA GeForce RTX 4090" }, startSsh: true })).body.id;
    await call("POST", "/v2/pods", { name: "nothing", image: "x" });
    await call("POST", "/v2/pods", { name: "missing template", templateId: "none", gpu: { id: "NVIDIA L4" } });
    await call("GET", "/v2/pods");
    await call("GET", `/v2/pods/${pod}`);
    await call("PATCH", `/v2/pods/${pod}`, { name: "renamed", env: { A: "1" } });
    await call("POST", `/v2/pods/${pod}/action`, { action: "stop" });
    await call("POST", `/v2/pods/${pod}/action`, { action: "restart" });
    await call("POST", `/v2/pods/${pod}/action`, { action: "start" });
    await stream(`/v2/pods/${pod}/logs?tail=10`);
    const cpu = (await call("POST", "/v2/pods", { name: "cpu", image: "alpine", cpu: { id: "cpu3g", vcpuCount: 4 } })).body.id;
    await call("POST", `/v2/pods/${cpu}/action`, { action: "terminate" });
    await call("GET", "/v2/pods/none");

    // Clusters
    const cluster = (await call("POST", "/v2/clusters", { name: "c", type: "SLURM", image: "me/train:1", compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 } })).body.id;
    await call("POST", "/v2/clusters", { name: "c", type: "SLURM", image: "x", compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 1 } });
    await call("GET", "/v2/clusters");
    await call("GET", `/v2/clusters/${cluster}`);
    await call("PATCH", `/v2/clusters/${cluster}`, { name: "renamed" });
    const member = (await call("GET", `/v2/clusters/${cluster}/pods`)).body.pods[0].id;
    await call("GET", "/v2/pods?includeClusterPods=true");
    await call("PATCH", `/v2/pods/${member}`, { name: "x" });
    await call("DELETE", `/v2/pods/${member}`);
    await call("GET", "/v2/clusters/none");

    // Catalog
    await call("GET", "/v2/catalog/gpus");
    await call("GET", "/v2/catalog/gpus?include=AVAILABILITY&product=POD,SERVERLESS&cudaVersions=12.8");
    await call("GET", "/v2/catalog/gpus?include=AVAILABILITY");
    await call("GET", `/v2/catalog/gpus/${encodeURIComponent("NVIDIA L4")}?include=AVAILABILITY&product=POD&countryCodes=FR`);
    await call("GET", "/v2/catalog/gpus/none");
    await call("GET", "/v2/catalog/cpus?include=AVAILABILITY&product=POD&vcpuCount=4");
    await call("GET", "/v2/catalog/cpus/cpu5c");
    await call("GET", "/v2/catalog/cpus/none");
    await call("GET", "/v2/catalog/datacenters?include=GPU_AVAILABILITY,CPU_AVAILABILITY&regions=EUROPE");
    await call("GET", "/v2/catalog/datacenters/EU-RO-1");
    await call("GET", "/v2/catalog/datacenters/none");
    await call("GET", "/v2/catalog/templates?source=community");

    // Billing, after an hour of all that
    await e.advance(3_600_000);
    for (const path of ["/v2/billing", "/v2/billing/pods", "/v2/billing/serverless", "/v2/billing/endpoints", "/v2/billing/network-volumes", "/v2/billing/clusters"]) {
      await call("GET", `${path}?bucketSize=hour&lastN=2`);
    }
    await call("GET", `/v2/billing/pods?podId=${pod}&startTime=2026-05-04T00:00:00Z&endTime=2026-05-05T00:00:00Z`);
    await call("GET", "/v2/billing?lastN=0");

    // Authentication and scopes
    await call("GET", "/v2/pods", undefined, { authorization: "" });
    await call("POST", "/v2/templates", { name: "t", image: "x" }, { authorization: `Bearer ${READER}` });

    // Deletions last
    await call("DELETE", `/v2/clusters/${cluster}`);
    await call("DELETE", `/v2/pods/${pod}`);
    await call("DELETE", `/v2/templates/${tpl}`);
    await call("DELETE", "/v2/templates/worker-tpl"); // no endpoint is made from it: each has its own
    await call("DELETE", `/v2/serverless/${ep}`);
    await call("DELETE", `/v2/network-volumes/${vol}`);
    await call("DELETE", `/v2/registries/${reg}`);
    await call("DELETE", "/v2/serverless/none");
  } finally {
    e.close();
  }

  // The REST quota: a second key-limited emulator answers 429 on the second request of the minute.
  const limited = await inProcess({ config: { rateLimits: { rest: { minute: 1 } } } });
  try {
    for (let i = 0; i < 2; i++) {
      const r = await limited.get("/v2/network-volumes");
      record("GET", "/v2/network-volumes", r.status, r.headers);
    }
  } finally {
    limited.close();
  }
  return visits;
}
