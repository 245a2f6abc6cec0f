import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { flashPython } from "../support/flash-python.js";

// The SDK 2.x's @app.api kind: an endpoint saved as `rp flash dev` saves it (type LB, the
// runpod/api image) gets worker processes of minipod's api runtime (minipod.runtimes.api), started
// by its load-balancing pool; the module source synced to it (POST /_runpod/sync, as the SDK sends
// it) is served: its class instantiated, its @init run, its routes answered through /lb/{id}/...
// runpod-flash's live load-balanced endpoints (runpod/flash-lb*) get minipod's Flash LB runtime
// (minipod.runtimes.flash_lb), whose POST /execute runs a FunctionRequest. Both SDKs call
// https://{id}.{host} (see docs/fidelity.md), so the test sends what they send.

const python = flashPython();
const SOURCE = readFileSync(fileURLToPath(new URL("../fixtures/sdk2/api.py", import.meta.url)), "utf8");
const FACTORY = readFileSync(fileURLToPath(new URL("../fixtures/sdk2/api_factory.py", import.meta.url)), "utf8");
const KEY = { authorization: "Bearer any-key", "content-type": "application/json" };

describe.skipIf(!python)("@app.api through minipod: a class served by minipod's api runtime on a load-balancing endpoint", { timeout: 120_000 }, () => {
  let emu: Emulator;
  beforeAll(async () => {
    // The workers' interpreter: the venv, whose runpod is the SDK 2.x.
    vi.stubEnv("MINIPOD_PYTHON", python!);
    vi.stubEnv("PYTHONPATH", "");
    emu = await createEmulator({ clock: "real", log: () => {} });
  });
  afterAll(async () => {
    await emu?.close();
    vi.unstubAllEnvs();
  });

  const call = async (id: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${emu.url}/lb/${id}${path}`, { method, headers: KEY, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("saves the endpoint as the SDK does, syncs the module, calls its routes; a new source replaces the class", async () => {
    // saveEndpoint as `rp flash dev` sends it for an @app.api resource.
    const input = {
      ...{ name: "dev-offline-inference-abc123", workersMin: 0, workersMax: 3, idleTimeout: 60, type: "LB", scalerType: "REQUEST_COUNT", scalerValue: 4, executionTimeoutMs: 0 },
      instanceIds: ["cpu3c-1-2"],
      template: {
        ...{ name: "dev-offline-inference-abc123-template", imageName: "runpod/api:py3.11-latest", containerDiskInGb: 10, dockerArgs: "", ports: "80/http" },
        env: [{ key: "PORT", value: "80" }, { key: "PORT_HEALTH", value: "80" }, { key: "RUNPOD_DEV_APP", value: "offline" }, { key: "RUNPOD_API_KEY", value: "any-key" }],
      },
    };
    const query = "mutation saveEndpoint($input: EndpointInput!) { saveEndpoint(input: $input) { id type aiKey } }";
    const saved = (await fetch(`${emu.url}/graphql`, { method: "POST", headers: KEY, body: JSON.stringify({ query, variables: { input } }) }).then((r) => r.json())) as {
      data: { saveEndpoint: { id: string; type: string } };
      errors?: unknown;
    };
    expect(saved.errors, JSON.stringify(saved.errors)).toBeUndefined();
    const { id, type } = saved.data.saveEndpoint;
    expect(type).toBe("LB");
    expect(emu.endpoints().find((e) => e.id === id)).toMatchObject({ type: "LOAD_BALANCER", handler: "external" });

    // Before a sync, nothing is served.
    expect(await call(id, "POST", "/generate", { prompt: "x" })).toMatchObject({ status: 503 });
    const synced = await call(id, "POST", "/_runpod/sync", { source: SOURCE, resource: "inference", dependencies: [], system_dependencies: [] });
    expect(synced).toMatchObject({ status: 200, body: { status: "synced", hash: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    // @init ran; the instance keeps its state from call to call.
    expect(await call(id, "POST", "/generate", { prompt: "hello" })).toEqual({ status: 200, body: { text: "HELLO!", calls: 1 } });
    expect(await call(id, "POST", "/generate", { prompt: "again" })).toEqual({ status: 200, body: { text: "AGAIN!", calls: 2 } });
    expect(await call(id, "GET", "/calls")).toEqual({ status: 200, body: { calls: 2 } });
    // As the service's api worker: the method gets the body alone, never a path's {item}.
    expect(await call(id, "GET", "/items/42")).toMatchObject({ status: 500, body: { error: expect.stringMatching(/^TypeError: .*missing 1 required positional argument: 'item'/) } });
    const failed = await call(id, "POST", "/fail", { x: 7 });
    expect(failed).toMatchObject({ status: 500, body: { error: "ValueError: no luck with 7" } });
    expect(failed.body.traceback).toContain(`raise ValueError(f"no luck with {body['x']}")`);
    expect(await call(id, "GET", "/nowhere")).toMatchObject({ status: 404, body: { error: "no route GET /nowhere" } });

    // Edited and synced again: the new code runs, on a new instance.
    await call(id, "POST", "/_runpod/sync", { source: SOURCE.replace('self.suffix = "!"', 'self.suffix = "?"'), resource: "inference" });
    expect(await call(id, "POST", "/generate", { prompt: "edited" })).toEqual({ status: 200, body: { text: "EDITED?", calls: 1 } });

    // A dependency the worker's Python lacks: the sync fails naming it.
    const missing = await call(id, "POST", "/_runpod/sync", { source: SOURCE, resource: "inference", dependencies: ["surely-not-installed-pkg"] });
    expect(missing.status).toBe(500);
    expect(missing.body.error).toContain("surely-not-installed-pkg");
  });

  it("an @app.api function is an ASGI app factory: the app it returns answers every path", async () => {
    const input = {
      ...{ name: "dev-offline-web-abc123", workersMin: 0, workersMax: 1, idleTimeout: 60, type: "LB", scalerType: "REQUEST_COUNT", scalerValue: 4, executionTimeoutMs: 0 },
      instanceIds: ["cpu3c-1-2"],
      template: {
        ...{ name: "dev-offline-web-abc123-template", imageName: "runpod/api:py3.11-latest", containerDiskInGb: 10, dockerArgs: "", ports: "80/http" },
        env: [{ key: "PORT", value: "80" }, { key: "PORT_HEALTH", value: "80" }, { key: "RUNPOD_DEV_APP", value: "offline" }],
      },
    };
    const query = "mutation saveEndpoint($input: EndpointInput!) { saveEndpoint(input: $input) { id } }";
    const saved = (await fetch(`${emu.url}/graphql`, { method: "POST", headers: KEY, body: JSON.stringify({ query, variables: { input } }) }).then((r) => r.json())) as {
      data: { saveEndpoint: { id: string } };
    };
    const { id } = saved.data.saveEndpoint;
    const synced = await call(id, "POST", "/_runpod/sync", { source: FACTORY, resource: "web", dependencies: ["fastapi"], system_dependencies: [] });
    expect(synced).toMatchObject({ status: 200, body: { status: "synced" } });
    // FastAPI's own routing: path parameters converted, a query string, a JSON body, its 422.
    expect(await call(id, "GET", "/items/7?q=red")).toEqual({ status: 200, body: { item_id: 7, q: "red" } });
    expect(await call(id, "POST", "/items", { name: "lamp" })).toEqual({ status: 200, body: { created: "lamp", count: 1 } });
    expect(await call(id, "POST", "/items", { name: "desk" })).toEqual({ status: 200, body: { created: "desk", count: 2 } });
    expect((await call(id, "GET", "/items/seven")).status).toBe(422);
    // A streamed answer comes through whole.
    const streamed = await fetch(`${emu.url}/lb/${id}/count`, { headers: KEY });
    expect([streamed.status, await streamed.text()]).toEqual([200, "0,1,2,3,"]);
  });

  it("a Flash load-balanced endpoint (runpod/flash-lb-cpu, as runpod-flash saves one live) runs a FunctionRequest posted to /execute", async () => {
    const input = {
      ...{ name: "live-lb", type: "LB", scalerType: "REQUEST_COUNT", scalerValue: 4, workersMin: 0, workersMax: 1, idleTimeout: 60, executionTimeoutMs: 0 },
      instanceIds: ["cpu3c-1-2"],
      template: { name: "LiveLoadBalancer_x", imageName: "runpod/flash-lb-cpu:py3.12-latest", containerDiskInGb: 10, dockerArgs: "", env: [{ key: "RUNPOD_API_KEY", value: "any-key" }], ports: "" },
    };
    const query = "mutation saveEndpoint($input: EndpointInput!) { saveEndpoint(input: $input) { id type } }";
    const saved = (await fetch(`${emu.url}/graphql`, { method: "POST", headers: KEY, body: JSON.stringify({ query, variables: { input } }) }).then((r) => r.json())) as {
      data: { saveEndpoint: { id: string; type: string } };
    };
    const { id } = saved.data.saveEndpoint;
    const request = { function_name: "add", function_code: "def add(a, b):\n    print('adding')\n    return a + b\n", args: [1, 2], kwargs: {}, serialization_format: "json" };
    expect(await call(id, "POST", "/execute", request)).toEqual({ status: 200, body: { success: true, json_result: 3, stdout: "adding\n" } });
    // The queue's envelope is taken too.
    expect((await call(id, "POST", "/execute", { input: { ...request, args: [2, 5] } })).body).toMatchObject({ success: true, json_result: 7 });
    const failed = await call(id, "POST", "/execute", { ...request, args: [1, "x"] });
    expect(failed).toMatchObject({ status: 200, body: { success: false } });
    expect(failed.body.error).toContain("unsupported operand type");
    expect(await call(id, "GET", "/other")).toMatchObject({ status: 404 });
  });
});
