import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

const SECRET = "s3cr3t-Pa55word-xyzzy";
const SEEDED_SECRET = "seeded-Pa55word-plugh";

const config = {
  containerRegistryAuths: [{ id: "seeded", name: "seeded creds", username: "bot", password: SEEDED_SECRET }],
};

describe("/v1/containerregistryauth", () => {
  let e: InProcess;
  const logs: string[] = [];
  beforeEach(async () => {
    logs.length = 0;
    e = await inProcess({ config, logLevel: "debug", log: (line) => logs.push(line) });
  });
  afterEach(() => e.close());

  it("creates (200), lists (bare array), gets and deletes (204), showing only id and name", async () => {
    const created = await e.post("/v1/containerregistryauth", { name: "my creds", username: "me", password: SECRET });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[a-z0-9]{14}$/), name: "my creds" });
    const id = created.body.id;

    const list = await e.get("/v1/containerregistryauth");
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      { id: "seeded", name: "seeded creds" },
      { id, name: "my creds" },
    ]);
    expect((await e.get(`/v1/containerregistryauth/${id}`)).body).toEqual({ id, name: "my creds" });

    const del = await e.request("DELETE", `/v1/containerregistryauth/${id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    const gone = await e.get(`/v1/containerregistryauth/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ status: 404, detail: `container registry auth "${id}" not found` });
    expect((await e.request("DELETE", `/v1/containerregistryauth/${id}`)).status).toBe(404);
  });

  it("never shows, logs or exports the password", async () => {
    const texts: string[] = [];
    const keep = <T extends { text: string }>(r: T) => (texts.push(r.text), r);
    const { id } = keep(await e.post("/v1/containerregistryauth", { name: "my creds", username: "me", password: SECRET })).body;
    keep(await e.post("/v1/containerregistryauth", { name: "my creds", username: "me", password: SECRET }));
    keep(await e.get("/v1/containerregistryauth"));
    keep(await e.get(`/v1/containerregistryauth/${id}`));
    keep(await e.get("/v1/containerregistryauth/seeded"));
    keep(await e.post("/v1/pods", { imageName: "private/img:1", containerRegistryAuthId: id }));
    keep(await e.get("/v1/pods?includeTemplate=true&includeMachine=true"));
    const journal = keep(await e.get("/_emulator/requests"));
    expect(journal.text).toContain('"password":"[redacted]"'); // ...and so does the journal, redacted
    const exported = await e.app.request("http://minipod.test/_emulator/export");
    expect(exported.status).toBe(200);
    const image = Buffer.from(await exported.arrayBuffer()).toString("latin1");
    expect(image).toContain("my creds"); // the export does hold the auth...
    texts.push(image);
    for (const secret of [SECRET, SEEDED_SECRET]) {
      for (const text of texts) expect(text).not.toContain(secret);
      for (const line of logs) expect(line).not.toContain(secret);
    }
    expect(logs.some((l) => l.includes("/v1/containerregistryauth"))).toBe(true);
  });

  it("validates the body and keeps names unique", async () => {
    const missing = await e.post("/v1/containerregistryauth", { name: "x", username: "me" });
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual(["$: expected required property password to be present"]);
    const empty = await e.post("/v1/containerregistryauth", { name: "", username: 1, password: "p" });
    expect(empty.body.errors).toEqual(expect.arrayContaining(["$.name: expected length >= 1", "$.username: expected string"]));
    const dup = await e.post("/v1/containerregistryauth", { name: "seeded creds", username: "me", password: "p" });
    expect(dup.status).toBe(400);
    expect(dup.body.errors).toEqual(['$.name: a container registry auth named "seeded creds" already exists (names are unique)']);
    expect((await e.get("/v1/containerregistryauth")).body).toHaveLength(1);
  });

  it("refuses to delete an auth a pod uses, until the pod is gone", async () => {
    const pod = (await e.post("/v1/pods", { imageName: "private/img:1", containerRegistryAuthId: "seeded" })).body;
    const refused = await e.request("DELETE", "/v1/containerregistryauth/seeded");
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe(`container registry auth "seeded" is used by pod "${pod.id}"; change or delete that first`);
    await e.request("DELETE", `/v1/pods/${pod.id}`);
    expect((await e.request("DELETE", "/v1/containerregistryauth/seeded")).status).toBe(204);
  });

  it("refuses to delete an auth a template uses", async () => {
    const tpl = await e.post("/v1/templates", { name: "private", imageName: "private/img:1", containerRegistryAuthId: "seeded" });
    expect(tpl.status).toBe(200);
    const refused = await e.request("DELETE", "/v1/containerregistryauth/seeded");
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe(`container registry auth "seeded" is used by template "${tpl.body.id}"; change or delete that first`);
  });

  it("returns to the configured auths on reset", async () => {
    await e.post("/v1/containerregistryauth", { name: "extra", username: "me", password: "p" });
    await e.request("DELETE", "/v1/containerregistryauth/seeded");
    await e.post("/_emulator/reset");
    expect((await e.get("/v1/containerregistryauth")).body).toEqual([{ id: "seeded", name: "seeded creds" }]);
  });

  it("exports the auths' documents with the password redacted, and every secret-named key of any resource at any depth", async () => {
    const { id } = (await e.post("/v1/containerregistryauth", { name: "my creds", username: "me", password: SECRET })).body;
    const tpl = (await e.post("/v1/templates", { name: "private", imageName: "private/img:1", containerRegistryAuthId: id, env: { HF_TOKEN: "tok-in-env-1", PLAIN: "kept" } })).body;
    const exported = await e.app.request("http://minipod.test/_emulator/export");
    expect(exported.status).toBe(200);
    const image = Buffer.from(await exported.arrayBuffer());
    const db = new Database(image);
    try {
      const doc = (kind: string, docId: string) => JSON.parse((db.prepare("SELECT data FROM documents WHERE kind = ? AND id = ?").get(kind, docId) as { data: string }).data);
      expect(doc("registry-auth", id)).toMatchObject({ id, name: "my creds", username: "me", password: "[redacted]" });
      expect(doc("registry-auth", "seeded")).toMatchObject({ name: "seeded creds", password: "[redacted]" });
      expect(doc("template", tpl.id)).toMatchObject({ containerRegistryAuthId: id, env: { HF_TOKEN: "[redacted]", PLAIN: "kept" } });
    } finally {
      db.close();
    }
    for (const secret of [SECRET, SEEDED_SECRET, "tok-in-env-1"]) expect(image.toString("latin1")).not.toContain(secret);
    // The live database keeps them: a pod pulls with the password, a container gets its env.
    expect((await e.get(`/v1/templates/${tpl.id}`)).body.env).toEqual({ HF_TOKEN: "tok-in-env-1", PLAIN: "kept" });
  });
});
