import { afterEach, describe, expect, it } from "vitest";
import { PHASES } from "../../src/compose/lifecycle.js";
import type { EmulatorConfig } from "../../src/index.js";
import { inProcess, type InProcess } from "../support/in-process.js";

// Start, reset and restore run one table of phases (src/compose/lifecycle.ts). What a user sees
// after a reset, or after restoring a snapshot taken at start, is what a fresh start shows: the
// same jobs (none), workers, resources, logs and journal; the differences are the ones the
// table documents (a reset keeps the clock's time; a restore keeps fault rules added since).

const config: EmulatorConfig = {
  endpoints: [
    { id: "warm", handler: "echo", workersMin: 2, workersMax: 3, coldStartMs: 1000 },
    { id: "cold", handler: "scripted", workersMin: 0, workersMax: 2, coldStartMs: 2000 },
  ],
  templates: [{ id: "tpl-1", name: "declared template", imageName: "example/image:1" }],
  networkVolumes: [{ name: "declared volume", size: 10, dataCenter: "EU-RO-1" }],
  containerRegistryAuths: [{ name: "declared registry", username: "u", password: "declared-secret" }],
  pods: [{ name: "declared pod", imageName: "example/pod:1", gpuTypeIds: ["NVIDIA GeForce RTX 4090"] }],
  faults: [{ endpoint: "cold", operation: "status", fault: { type: "latency", ms: 1 } }],
};

let e: InProcess | undefined;
afterEach(() => e?.close());

/** What a user can see of the emulator, with times and generated worker ids left out. */
async function observe(e: InProcess) {
  // The journal first: the reads below are journaled too.
  const journal = (await e.get("/_emulator/requests")).body.count as number;
  const list = async (path: string, key: string) => ((await e.get(path)).body[key] as Array<{ id: string; name?: string }>).map((r) => `${r.id} ${r.name ?? ""}`).sort();
  const pods = (await e.get("/v2/pods")).body.pods as Array<{ id: string; name: string; desiredStatus: string }>;
  return {
    journal,
    jobs: (await e.get("/_emulator/jobs")).body.count as number,
    endpoints: ((await e.get("/_emulator/endpoints")).body.endpoints as Array<{ id: string; workers: Array<{ state: string }>; throttled: boolean }>).map((x) => ({
      id: x.id,
      workers: x.workers.map((w) => w.state).sort(),
      throttled: x.throttled,
    })),
    faults: ((await e.get("/_emulator/faults")).body.faults as Array<{ endpoint?: string; operation?: string }>).map((f) => `${f.endpoint}/${f.operation}`),
    templates: await list("/v2/templates", "templates"),
    volumes: await list("/v2/network-volumes", "networkVolumes"),
    endpointsRest: await list("/v2/serverless", "endpoints"),
    registries: await list("/v2/registries", "registries"),
    pods: pods.map((p) => `${p.id} ${p.name} ${p.desiredStatus}`).sort(),
    podLogs: pods.map((p) => e.core.logs.lines(p.id).map((l) => l.line)),
    workerLogs: (await e.get("/v2/serverless/warm/workers")).body.workers?.length as number | undefined,
  };
}

const ok = (res: { status: number; text: string }) => expect(res.status, res.text).toBeLessThan(300);

/** Changes every kind of state a user can change. */
async function disturb(e: InProcess, fault: object = { endpoint: "warm", fault: { type: "no-workers" } }) {
  for (let i = 0; i < 3; i++) ok(await e.post("/v2/warm/run", { input: { i } }));
  ok(await e.post("/v2/cold/run", { input: { sleepMs: 60_000 } }));
  await e.advance(5_000);
  ok(await e.post("/v2/templates", { name: "made later", image: "example/later:1" }));
  ok(await e.post("/v2/network-volumes", { name: "made later", size: 20, dataCenter: "EU-RO-1" }));
  ok(await e.post("/v1/pods", { name: "made later", imageName: "example/later:1", gpuTypeIds: ["NVIDIA GeForce RTX 4090"] }));
  const pods = (await e.get("/v2/pods")).body.pods as Array<{ id: string; name: string }>;
  ok(await e.post(`/v1/pods/${pods.find((p) => p.name === "declared pod")!.id}/stop`));
  ok(await e.post("/_emulator/faults", fault));
  await e.advance(60_000);
}

describe("start, reset and restore", () => {
  it("are one table of phases, with reset and restore differing from start only where it says", () => {
    expect(PHASES.start).toEqual(["seed", "resume"]);
    expect(PHASES.reset).toEqual(["quiesce", "clear", "seed", "resume"]);
    expect(PHASES.restore).toEqual(["quiesce", "restored", "resume"]);
  });

  it("a reset leaves what a fresh start shows, at the clock's current time", async () => {
    e = await inProcess({ config });
    const fresh = await observe(e);
    expect(fresh.jobs).toBe(0);
    expect(fresh.endpoints.find((x) => x.id === "warm")!.workers).toHaveLength(2);

    await disturb(e);
    const disturbed = await observe(e);
    expect(disturbed).not.toEqual(fresh);
    const before = e.now();

    expect((await e.post("/_emulator/reset")).status).toBe(200);
    expect(await observe(e)).toEqual(fresh);
    expect(e.now()).toBe(before);
  });

  it("restoring a snapshot taken at start leaves what the start showed, at its time; fault rules added since stay", async () => {
    e = await inProcess({ config });
    const fresh = await observe(e);
    const at = e.now();
    expect((await e.post("/_emulator/snapshots/start")).status).toBe(200);

    // A rule that leaves workers alone: the restore keeps it, and so would keep a no-workers one.
    await disturb(e, { endpoint: "warm", operation: "run", fault: { type: "latency", ms: 1 } });
    expect((await e.post("/_emulator/snapshots/start/restore")).status).toBe(200);
    const restored = await observe(e);
    expect(e.now()).toBe(at);
    expect(restored.faults).toEqual([...fresh.faults, "warm/run"]);
    // The journal holds the requests of the snapshot's time: those the first observation made.
    expect({ ...restored, faults: fresh.faults, journal: fresh.journal }).toEqual(fresh);
  });

  it("a reset after a restore, and a restore after a reset, agree with a fresh start", async () => {
    e = await inProcess({ config });
    const fresh = await observe(e);
    expect((await e.post("/_emulator/snapshots/start")).status).toBe(200);
    await disturb(e);
    expect((await e.post("/_emulator/snapshots/start/restore")).status).toBe(200);
    expect((await e.post("/_emulator/reset")).status).toBe(200);
    expect(await observe(e)).toEqual(fresh);
    await disturb(e);
    expect((await e.post("/_emulator/reset")).status).toBe(200);
    expect((await e.post("/_emulator/snapshots/start/restore")).status).toBe(200);
    expect({ ...(await observe(e)), journal: fresh.journal }).toEqual(fresh);
  });
});

describe("a restore whose image fails to load", () => {
  it("resumes on the state as it was (nothing restored), and says why", async () => {
    const { runPhases } = await import("../../src/compose/lifecycle.js");
    const calls: string[] = [];
    const part = (name: string) => ({
      name,
      quiesce: () => void calls.push(`${name} quiesce`),
      restored: () => void calls.push(`${name} restored`),
      resume: () => void calls.push(`${name} resume`),
    });
    const failing = runPhases("restore", [part("engine"), part("service")], {
      at: 0,
      afterQuiesce: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error("the image is cut short");
      },
    });
    await expect(failing).rejects.toThrow("the image is cut short");
    expect(calls).toEqual(["engine quiesce", "service quiesce", "engine resume", "service resume"]);
  });
});
