import runpodSdk from "runpod-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

const KEY = "test-key";

/** The management surface over real HTTP, as a client script would call it. */
async function rest<T = any>(emu: Emulator, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${emu.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** What runpod-sdk gives back for a 404: its HTTP client rejects with the response. */
async function statusOf(call: Promise<unknown>): Promise<number | undefined> {
  try {
    const value = (await call) as { status?: unknown };
    return typeof value?.status === "number" ? value.status : 200;
  } catch (e) {
    return (e as { response?: { status?: number } }).response?.status;
  }
}

describe("an endpoint created with POST /v1/endpoints, driven by runpod-sdk", () => {
  let emu: Emulator;
  beforeEach(async () => {
    emu = await createEmulator({
      port: 0,
      clock: "manual",
      config: { templates: [{ id: "tpl", name: "scripted worker", handler: "scripted" }] },
    });
  });
  afterEach(() => emu.close());

  it("runs a job, follows an update, then answers 404 once deleted", async () => {
    const created = await rest(emu, "POST", "/v1/endpoints", { name: "sdk target", templateId: "tpl", workersMin: 0, workersMax: 1, gpuTypeIds: ["NVIDIA L4"] });
    expect(created.status).toBe(200);
    const id: string = created.body.id;
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);

    const sdk = runpodSdk(KEY, { baseUrl: `${emu.url}/v2` });
    const endpoint = sdk.endpoint(id)!;
    const run = await endpoint.run({ input: { sleepMs: 2000, output: { answer: 42 } } });
    expect(run).toMatchObject({ id: expect.any(String), status: "IN_QUEUE" });
    await emu.clock.advance(1000); // cold start
    expect(await endpoint.status(run.id)).toMatchObject({ status: "IN_PROGRESS" });
    await emu.clock.advance(2000);
    expect(await endpoint.status(run.id)).toMatchObject({ status: "COMPLETED", output: { answer: 42 }, delayTime: 1000, executionTime: 2000 });

    // The update reaches the workers at once: two warm workers, visible on /health and in includeWorkers.
    const updated = await rest(emu, "PATCH", `/v1/endpoints/${id}`, { workersMin: 2, workersMax: 2 });
    expect(updated.body).toMatchObject({ workersMin: 2, workersMax: 2 });
    await emu.clock.advance(1000);
    expect((await endpoint.health()).workers).toMatchObject({ idle: 2, running: 0 });
    const listed = await rest(emu, "GET", `/v1/endpoints/${id}?includeWorkers=true`);
    expect(listed.body.workers).toHaveLength(2);
    expect(listed.body.workers[0].gpu).toEqual({ id: "NVIDIA L4", count: 1 });
    const shrunk = await rest(emu, "POST", `/v1/endpoints/${id}/update`, { workersMin: 0, workersMax: 0 });
    expect(shrunk.status).toBe(200);
    expect((await endpoint.health()).workers).toMatchObject({ idle: 0, running: 0 });

    expect((await rest(emu, "DELETE", `/v1/endpoints/${id}`)).status).toBe(204);
    expect(await statusOf(endpoint.run({ input: {} }))).toBe(404);
    expect(await statusOf(endpoint.status(run.id))).toBe(404);
    expect(await statusOf(endpoint.health())).toBe(404);
    expect((await rest(emu, "GET", `/v1/endpoints/${id}`)).status).toBe(404);
  });
});
