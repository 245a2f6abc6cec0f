import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: { templates: [{ id: "seeded", name: "seeded", imageName: "me/seeded:1", handler: "scripted" }] } });
});
afterEach(() => e.close());

describe("/v2/templates", () => {
  it("creates with 201 and the v2 defaults; the same template on v1", async () => {
    const res = await e.post("/v2/templates", { name: "torch", image: "runpod/pytorch:2", args: "python -u handler.py", ports: ["8888/http"], env: { A: "1" } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[a-z0-9]+$/),
      name: "torch",
      image: "runpod/pytorch:2",
      args: "python -u handler.py",
      disk: 50,
      mounts: {},
      ports: ["8888/http"],
      env: { A: "1" },
      registry: null,
      serverless: false,
      public: false,
      category: "NVIDIA",
      startSsh: true,
      startJupyter: true,
      allowedCudaVersions: [],
    });
    const v1 = await e.get(`/v1/templates/${res.body.id}`);
    expect(v1.body).toMatchObject({ name: "torch", imageName: "runpod/pytorch:2", dockerStartCmd: ["python", "-u", "handler.py"], volumeInGb: 0, isServerless: false, ports: ["8888/http"] });
    expect((await e.get(`/v2/templates/${res.body.id}`)).body).toEqual(res.body);
    expect((await e.get("/v2/templates")).body.templates.map((t: { name: string }) => t.name).sort()).toEqual(["seeded", "torch"]);
  });

  it("shows a v1 template in the v2 shape, its volume as a persistent mount", async () => {
    const v1 = await e.post("/v1/templates", { name: "v1-made", imageName: "me/v1:1", volumeInGb: 30, volumeMountPath: "/data", dockerStartCmd: ["bash", "-c", "sleep infinity"], isServerless: true });
    const v2 = await e.get(`/v2/templates/${v1.body.id}`);
    expect(v2.body).toMatchObject({ image: "me/v1:1", args: "bash -c sleep infinity", mounts: { persistent: { size: 30, path: "/data" } }, serverless: true, startSsh: false, startJupyter: false });
  });

  it("updates only the given fields; registry null removes the credential", async () => {
    const reg = (await e.post("/v2/registries", { name: "ghcr", username: "me", password: "secret" })).body;
    const t = (await e.post("/v2/templates", { name: "t", image: "a:1", registry: reg.id, mounts: { persistent: { size: 20, path: "/w" } } })).body;
    const res = await e.request("PATCH", `/v2/templates/${t.id}`, { image: "a:2", allowedCudaVersions: ["12.8"], serverless: true, mounts: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ image: "a:2", registry: reg.id, serverless: true, allowedCudaVersions: ["12.8"], mounts: { persistent: { size: 20, path: "/w" } }, name: "t" });
    expect((await e.request("PATCH", `/v2/templates/${t.id}`, { registry: null })).body.registry).toBeNull();
    expect((await e.get(`/v1/templates/${t.id}`)).body.containerRegistryAuthId).toBeUndefined();
  });

  it("refuses unknown properties, a network mount, a small persistent mount and a taken name", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: "x", image: "a", handler: "echo" }, "$: additional properties 'handler' not allowed"],
      [{ name: "x", image: "a", mounts: { network: [{ volumeId: "v", path: "/v" }] } }, "$.mounts: additional properties 'network' not allowed"],
      [{ name: "x", image: "a", mounts: { persistent: { size: 5, path: "/w" } } }, "$.mounts.persistent.size: expected number >= 10"],
      [{ name: "x", image: "a", disk: 0 }, "$.disk: expected number >= 1"],
      [{ name: "x" }, "$: expected required property image to be present"],
      [{ name: "x", image: "a", allowedCudaVersions: ["12"] }, "$.allowedCudaVersions[0]: expected a CUDA version as major.minor, such as 12.8"],
      [{ name: "seeded", image: "a" }, '$.name: template names are unique and "seeded" is taken by template seeded'],
    ];
    for (const [b, error] of cases) {
      const res = await e.post("/v2/templates", b);
      expect(res.status, JSON.stringify(b)).toBe(400);
      expect(res.body.errors, JSON.stringify(b)).toContain(error);
    }
  });

  it("deletes with 204; refuses while an endpoint uses it; 404 when unknown", async () => {
    const t = (await e.post("/v2/templates", { name: "t", image: "a:1", serverless: true })).body;
    const ep = await e.post("/v1/endpoints", { name: "uses-it", templateId: t.id });
    const refused = await e.request("DELETE", `/v2/templates/${t.id}`);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(new RegExp(`used by endpoint ${ep.body.id}`));
    await e.request("DELETE", `/v1/endpoints/${ep.body.id}`);
    expect((await e.request("DELETE", `/v2/templates/${t.id}`)).status).toBe(204);
    for (const method of ["GET", "PATCH", "DELETE"]) expect((await e.request(method, `/v2/templates/${t.id}`, method === "PATCH" ? { name: "y" } : undefined)).status).toBe(404);
  });
});

describe("/v2/registries", () => {
  it("creates with 201, shows id and name only, and is the v1 container registry auth", async () => {
    const res = await e.post("/v2/registries", { name: "dockerhub", username: "me", password: "hunter2" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[a-z0-9]+$/), name: "dockerhub" });
    expect((await e.get(`/v2/registries/${res.body.id}`)).body).toEqual(res.body);
    expect((await e.get("/v2/registries")).body).toEqual({ registries: [res.body] });
    expect((await e.get(`/v1/containerregistryauth/${res.body.id}`)).body).toEqual(res.body);
    expect(JSON.stringify((await e.get("/v2/registries")).body)).not.toContain("hunter2");
  });

  it("refuses a body with unknown or missing fields, and a taken name", async () => {
    expect((await e.post("/v2/registries", { name: "a", username: "u", password: "p", url: "x" })).body.errors).toEqual(["$: additional properties 'url' not allowed"]);
    expect((await e.post("/v2/registries", { name: "a", username: "u" })).body.errors).toEqual(["$: expected required property password to be present"]);
    await e.post("/v2/registries", { name: "a", username: "u", password: "p" });
    expect((await e.post("/v2/registries", { name: "a", username: "u", password: "p" })).status).toBe(400);
  });

  it("deletes with 204; refuses while a pod uses it; has no update", async () => {
    const reg = (await e.post("/v2/registries", { name: "r", username: "u", password: "p" })).body;
    const pod = await e.post("/v1/pods", { name: "p", imageName: "private/img", containerRegistryAuthId: reg.id });
    expect((await e.request("DELETE", `/v2/registries/${reg.id}`)).status).toBe(400);
    await e.request("DELETE", `/v1/pods/${pod.body.id}`);
    expect((await e.request("PATCH", `/v2/registries/${reg.id}`, { name: "x" })).status).toBe(405);
    expect((await e.request("DELETE", `/v2/registries/${reg.id}`)).status).toBe(204);
    expect((await e.get(`/v2/registries/${reg.id}`)).status).toBe(404);
  });
});
