import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

const config = {
  templates: [{ id: "tpl-scripted", name: "scripted worker", imageName: "acme/worker:1", handler: "scripted" }],
  endpoints: [{ id: "configured", templateId: "tpl-scripted", workersMin: 1 }],
};

describe("templates, v1", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  it("lists the configured templates as a bare array of v1 Templates", async () => {
    const res = await e.get("/v1/templates");
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        id: "tpl-scripted",
        name: "scripted worker",
        imageName: "acme/worker:1",
        isServerless: true,
        category: "NVIDIA",
        containerDiskInGb: 50,
        volumeInGb: 20,
        volumeMountPath: "/workspace",
        env: {},
        ports: ["8888/http", "22/tcp"],
        readme: "",
        isPublic: false,
        isRunpod: false,
        earned: 0,
        runtimeInMin: 0,
        dockerEntrypoint: [],
        dockerStartCmd: [],
        handler: "scripted",
      },
    ]);
    const withQueries = await e.get("/v1/templates?includePublicTemplates=true&includeRunpodTemplates=false&includeEndpointBoundTemplates=true");
    expect(withQueries.body).toEqual(res.body);
    const badQuery = await e.get("/v1/templates?includePublicTemplates=yes");
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.errors).toEqual(["query.includePublicTemplates: expected true or false"]);
  });

  it("creates with 200 and the v1 defaults, then gets it", async () => {
    const created = await e.post("/v1/templates", { name: "mine", imageName: "me/img:2", env: { A: "1" }, isServerless: true });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^[A-Za-z0-9_-]+$/), name: "mine", imageName: "me/img:2", env: { A: "1" }, isServerless: true, containerDiskInGb: 50 });
    expect(created.body.handler).toBeUndefined();
    const got = await e.get(`/v1/templates/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    const pod = await e.post("/v1/templates", { name: "pod one", imageName: "me/img:2" });
    expect(pod.body.isServerless).toBe(false);
  });

  it("refuses a missing name or image, a taken name and an unknown handler", async () => {
    const missing = await e.post("/v1/templates", { readme: "x" });
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual(expect.arrayContaining(["$: expected required property name to be present", "$: expected required property imageName to be present"]));
    const taken = await e.post("/v1/templates", { name: "scripted worker", imageName: "x" });
    expect(taken.status).toBe(400);
    expect(taken.body.errors).toEqual(['$.name: template names are unique and "scripted worker" is taken by template tpl-scripted']);
    const handler = await e.post("/v1/templates", { name: "h", imageName: "x", handler: "./evil.ts" });
    expect(handler.status).toBe(400);
    expect(handler.body.errors[0]).toMatch(/^\$\.handler: unknown handler "\.\/evil\.ts"; use one of echo, scripted/);
    const typed = await e.post("/v1/templates", { name: "h", imageName: "x", containerDiskInGb: "big" });
    expect(typed.body.errors).toEqual(["$.containerDiskInGb: expected integer"]);
  });

  it("updates by PATCH and by POST /update; only the fields given change", async () => {
    const patched = await e.request("PATCH", "/v1/templates/tpl-scripted", { readme: "# hi", env: { K: "v" } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: "tpl-scripted", name: "scripted worker", imageName: "acme/worker:1", readme: "# hi", env: { K: "v" } });
    const posted = await e.post("/v1/templates/tpl-scripted/update", { name: "renamed" });
    expect(posted.status).toBe(200);
    expect((await e.get("/v1/templates/tpl-scripted")).body).toMatchObject({ name: "renamed", readme: "# hi" });
    const other = await e.post("/v1/templates", { name: "other", imageName: "x" });
    const clash = await e.request("PATCH", `/v1/templates/${other.body.id}`, { name: "renamed" });
    expect(clash.status).toBe(400);
    expect((await e.request("PATCH", "/v1/templates/nope", { name: "z" })).status).toBe(404);
  });

  it("moves the endpoints made from a template to its new handler and version", async () => {
    const before = await e.post("/v2/configured/runsync", { input: { output: "scripted says hi" } });
    expect(before.body.output).toBe("scripted says hi");
    await e.request("PATCH", "/v1/templates/tpl-scripted", { handler: "echo" });
    const after = await e.post("/v2/configured/runsync", { input: { output: "scripted says hi" } });
    expect(after.body.output).toEqual({ output: "scripted says hi" });
    expect((await e.get("/v1/endpoints/configured")).body.version).toBe(1);
    await e.request("PATCH", "/v1/templates/tpl-scripted", { readme: "in place" });
    expect((await e.get("/v1/endpoints/configured")).body.version).toBe(1);
  });

  it("deletes with 204, but not while an endpoint uses the template", async () => {
    const inUse = await e.request("DELETE", "/v1/templates/tpl-scripted");
    expect(inUse.status).toBe(400);
    expect(inUse.body.detail).toBe('template "tpl-scripted" is used by endpoint configured; delete it or give it another template first');
    expect((await e.request("DELETE", "/v1/endpoints/configured")).status).toBe(204);
    const del = await e.request("DELETE", "/v1/templates/tpl-scripted");
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await e.get("/v1/templates/tpl-scripted")).status).toBe(404);
    expect((await e.request("DELETE", "/v1/templates/tpl-scripted")).status).toBe(404);
    expect((await e.get("/v1/templates")).body).toEqual([]);
  });

  it("returns to the configured templates on reset", async () => {
    await e.post("/v1/templates", { name: "temp", imageName: "x" });
    await e.request("PATCH", "/v1/templates/tpl-scripted", { name: "changed" });
    await e.core.reset();
    const list = (await e.get("/v1/templates")).body;
    expect(list.map((t: { id: string; name: string }) => [t.id, t.name])).toEqual([["tpl-scripted", "scripted worker"]]);
  });
});
