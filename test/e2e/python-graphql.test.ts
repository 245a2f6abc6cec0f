import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { FIXTURES, PYTHON, pythonAvailable, pythonEnv } from "../support/python.js";
import { recorder, via, type Recorder } from "../support/recorder.js";

/**
 * Every function of the service's Python library's `runpod.api` (as published, unchanged), which
 * speaks the GraphQL API, against minipod, with REST v2 looked at between its phases: what the
 * library made is what REST shows, and the endpoint it saved is served by the queue.
 */
const available = pythonAvailable();
const KEY = "graphql-key";

type Lines = { results: Record<string, any>; errors: Record<string, string> };

/** Runs test/fixtures/python/graphql_api.py, one phase at a time: `next()` resolves with the lines of the next phase. */
function pythonApi(url: string) {
  const child: ChildProcessWithoutNullStreams = spawn(PYTHON, [join(FIXTURES, "graphql_api.py")], {
    env: pythonEnv({ RUNPOD_API_BASE_URL: url, RUNPOD_API_KEY: KEY }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let waiting: ((l: Lines) => void) | undefined;
  let phase: Lines = { results: {}, errors: {} };
  const consume = () => {
    let i: number;
    while ((i = out.indexOf("\n")) >= 0) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      const r = /^RESULT (\S+) (.*)$/.exec(line);
      if (r) phase.results[r[1]!] = JSON.parse(r[2]!);
      const e = /^ERROR (\S+) (.*)$/.exec(line);
      if (e) phase.errors[e[1]!] = e[2]!;
      if (line.startsWith("PHASE ")) {
        const done = phase;
        phase = { results: {}, errors: {} };
        waiting?.(done);
      }
    }
  };
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    consume();
  });
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  let started = false;
  return {
    next: () =>
      new Promise<Lines>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`graphql_api.py gave no phase within 30 s:\n${stderr}`)), 30_000);
        waiting = (l) => {
          clearTimeout(timer);
          resolve(l);
        };
        if (started) child.stdin.write("\n");
        started = true;
      }),
    close: () => child.kill("SIGKILL"),
  };
}

describe.skipIf(!available)("the service's Python runpod.api (GraphQL) against minipod", { timeout: 60_000 }, () => {
  let emu: Emulator;
  let rec: Recorder;
  let py: ReturnType<typeof pythonApi>;
  const rest = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${via(emu.url)}${path}`, { ...init, headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" } });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
  };
  const ABOUT = { about: "runpod.api: every function, phase by phase, with REST v2 read between them" };
  beforeAll(async () => {
    const config = { auth: { keys: [{ key: KEY }] } };
    emu = await createEmulator({ clock: "manual", config });
    // The library's GraphQL exchanges with minipod (and the test's REST reads), recorded by `npm run contracts:record`.
    rec = await recorder(emu.url, { client: "runpod-python 1.12.0: runpod.api (GraphQL)", test: "test/e2e/python-graphql.test.ts", clock: "manual", config });
    rec.scenario("python-graphql", ABOUT);
    py = pythonApi(rec.url);
  });
  afterAll(async () => {
    py?.close();
    await rec?.close();
    await emu?.close();
  });

  let ids: Record<string, string>;

  it("creates and reads: user, GPUs, registry auth, templates, endpoint, pods; REST v2 shows each", async () => {
    const { results, errors } = await py.next();
    ids = results.ids;
    expect(Object.keys(errors).sort()).toEqual(["create_cpu_pod_official_template", "create_pod_unknown_gpu", "get_gpu_unknown"]);
    // Without a template, the library asks for the service's official "runpod-ubuntu", which minipod has not.
    expect(errors.create_cpu_pod_official_template).toContain('template "runpod-ubuntu" not found');
    expect(errors.get_gpu_unknown).toMatch(/^ValueError: No GPU found/);
    expect(results.get_user).toEqual({ id: "user_minipod", pubKey: "", networkVolumes: [] });
    expect(results.update_user_settings.pubKey).toBe("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGraphQLTestKey tester@minipod");
    expect((await rest("/v2/account/ssh-keys")).body).toEqual({ keys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGraphQLTestKey tester@minipod"] });

    expect(results.get_gpus).toContainEqual({ id: "NVIDIA GeForce RTX 4090", displayName: "RTX 4090", memoryInGb: 24 });
    const catalog = (await rest("/v2/catalog/gpus/NVIDIA%20GeForce%20RTX%204090")).body;
    expect(results.get_gpu).toMatchObject({ id: catalog.id, displayName: catalog.name, memoryInGb: catalog.memory, securePrice: catalog.price.secure, maxGpuCount: 8 });
    expect(results.get_gpu.lowestPrice).toEqual({ minimumBidPrice: catalog.price.secure * 2, uninterruptablePrice: catalog.price.secure * 2 });

    expect(results.update_container_registry_auth).toEqual({ id: ids.auth, name: "gql-registry" });
    expect((await rest(`/v2/registries/${ids.auth}`)).body).toMatchObject({ id: ids.auth, name: "gql-registry" });

    const template = (await rest(`/v2/templates/${ids.template}`)).body;
    expect(template).toMatchObject({ name: "gql-worker", image: "me/worker:1", env: { MODEL: "tiny" }, ports: ["8000/http"], serverless: true });
    expect(results.create_template.dockerArgs).toBe('python -u handler.py --mode "fast"');

    const endpoint = (await rest(`/v2/serverless/${ids.endpoint}`)).body;
    expect(endpoint).toMatchObject({ name: "gql-endpoint", image: "me/worker:2", flashboot: "FLASHBOOT", workers: { max: 2, min: 0, idleTimeout: 7 } });
    expect((await rest(`/v1/endpoints/${ids.endpoint}`)).body).toMatchObject({ templateId: ids.template2, version: 1 });
    expect(endpoint.gpu).toMatchObject({ pools: ["AMPERE_16", "ADA_24"], allowedCudaVersions: ["12.4", "12.5"] });
    expect(results.get_endpoints).toEqual([expect.objectContaining({ id: ids.endpoint, templateId: ids.template2, gpuIds: "AMPERE_16,ADA_24", workersMax: 2, version: 1 })]);

    const pod = (await rest(`/v2/pods/${ids.pod}`)).body;
    expect(pod).toMatchObject({
      name: "gql-pod",
      image: "me/train:1",
      status: "RUNNING",
      gpu: { id: "NVIDIA GeForce RTX 4090", count: 2 },
      dataCenterId: "US-KS-2",
      ports: ["8888/http", "22/tcp"],
      env: { A: "1" },
    });
    expect(results.get_pod).toMatchObject({
      id: ids.pod,
      desiredStatus: "RUNNING",
      gpuCount: 2,
      costPerHr: pod.cost,
      ports: "8888/http,22/tcp",
      dockerArgs: "python train.py",
      machine: { gpuDisplayName: "RTX 4090" },
    });
    expect(results.get_pods.map((p: { id: string }) => p.id).sort()).toEqual([ids.pod, ids.cpu_pod].sort());
    expect((await rest(`/v2/pods/${ids.cpu_pod}`)).body).toMatchObject({ status: "RUNNING", image: "me/worker:2", cpu: { id: "cpu3c", vcpuCount: 4 } });
  });

  it("the endpoint saved through GraphQL is served by the queue", async () => {
    rec.pause(); // moves jobs with the emulator's own clock, which a replay does not see
    const run = await rest(`/v2/${ids.endpoint}/run`, { method: "POST", body: JSON.stringify({ input: { hello: "graphql" } }) });
    expect(run.status).toBe(200);
    await emu.runUntilIdle();
    expect((await rest(`/v2/${ids.endpoint}/status/${run.body.id}`)).body).toMatchObject({ status: "COMPLETED", output: { hello: "graphql" } });
  });

  it("stop_pod and resume_pod: REST v2 shows EXITED, then RUNNING", async () => {
    rec.scenario("python-graphql", ABOUT);
    const stopped = await py.next();
    expect(stopped.results.stop_pod).toEqual({ id: ids.pod, desiredStatus: "EXITED" });
    expect((await rest(`/v2/pods/${ids.pod}`)).body.status).toBe("EXITED");
    const resumed = await py.next();
    expect(resumed.results.resume_pod).toMatchObject({ id: ids.pod, desiredStatus: "RUNNING", imageName: "me/train:1" });
    expect((await rest(`/v2/pods/${ids.pod}`)).body.status).toBe("RUNNING");
  });

  it("terminate_pod and delete_container_registry_auth: gone from REST v2; a bad key is refused", async () => {
    const { results, errors } = await py.next();
    expect(results.terminate_pod).toBeNull();
    expect((await rest(`/v2/pods/${ids.pod}`)).status).toBe(404);
    expect((await rest(`/v2/pods/${ids.cpu_pod}`)).status).toBe(404);
    expect(errors.get_pod_terminated).toBe(`QueryError: pod "${ids.pod}" not found`);
    expect(results.delete_container_registry_auth).toBeNull();
    expect((await rest(`/v2/registries/${ids.auth}`)).status).toBe(404);
    expect(errors.get_user_bad_key).toMatch(/^AuthenticationError: Unauthorized request/);
  });
});
