import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

const config = {
  networkVolumes: [
    { id: "seeded", name: "datasets", size: 100, dataCenter: "EU-RO-1", type: "HIGH_PERFORMANCE" as const },
    { name: "no-id", size: 10, dataCenter: "US-KS-2" },
  ],
};

describe("network volumes, v2", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  const patch = (id: string, body: unknown) => e.request("PATCH", `/v2/network-volumes/${id}`, body);

  it("lists the configured volumes in the listNetworkVolumes shape", async () => {
    const res = await e.get("/v2/network-volumes");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["networkVolumes"]);
    expect(res.body.networkVolumes).toHaveLength(2);
    expect(res.body.networkVolumes).toEqual(
      expect.arrayContaining([
        { id: "seeded", name: "datasets", size: 100, dataCenter: "EU-RO-1", type: "HIGH_PERFORMANCE" },
        { id: expect.stringMatching(/^[a-z0-9]{12}$/), name: "no-id", size: 10, dataCenter: "US-KS-2", type: "STANDARD" },
      ]),
    );
  });

  it("gives a configured volume without id the same id at every start", async () => {
    const idOf = (list: Array<{ id: string; name: string }>) => list.find((v) => v.name === "no-id")!.id;
    const first = idOf((await e.get("/v2/network-volumes")).body.networkVolumes);
    const again = await inProcess({ config });
    try {
      expect(idOf((await again.get("/v2/network-volumes")).body.networkVolumes)).toBe(first);
    } finally {
      again.close();
    }
  });

  it("creates with 201, then gets, and lists the new volume", async () => {
    const created = await e.post("/v2/network-volumes", { name: "models", size: 50, dataCenter: "US-TX-3" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9_-]+$/), name: "models", size: 50, dataCenter: "US-TX-3", type: "STANDARD" });
    const got = await e.get(`/v2/network-volumes/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);
    expect((await e.get("/v2/network-volumes")).body.networkVolumes.map((v: { id: string }) => v.id)).toContain(created.body.id);
  });

  it("refuses a create body with unknown properties, a size out of 10..4096 or missing fields", async () => {
    const bogus = await e.post("/v2/network-volumes", { name: "x", size: 20, dataCenter: "EU-RO-1", bogus: true });
    expect(bogus.status).toBe(400);
    expect(bogus.headers.get("content-type")).toContain("application/problem+json");
    expect(bogus.body.errors).toEqual(["$: additional properties 'bogus' not allowed"]);
    for (const [size, message] of [
      [9, "$.size: expected number >= 10"],
      [4097, "$.size: expected number <= 4096"],
      [10.5, "$.size: expected integer"],
    ] as const) {
      const res = await e.post("/v2/network-volumes", { name: "x", size, dataCenter: "EU-RO-1" });
      expect(res.status, String(size)).toBe(400);
      expect(res.body.errors).toEqual([message]);
    }
    const missing = await e.post("/v2/network-volumes", { size: 10 });
    expect(missing.body.errors).toEqual(expect.arrayContaining(["$: expected required property name to be present", "$: expected required property dataCenter to be present"]));
    const badType = await e.post("/v2/network-volumes", { name: "x", size: 10, dataCenter: "EU-RO-1", type: "FAST" });
    expect(badType.status).toBe(400);
    expect(badType.body.errors[0]).toMatch(/^\$\.type: expected value to be one of "STANDARD, HIGH_PERFORMANCE"/);
    const edges = [await e.post("/v2/network-volumes", { name: "min", size: 10, dataCenter: "EU-RO-1" }), await e.post("/v2/network-volumes", { name: "max", size: 4096, dataCenter: "EU-RO-1" })];
    expect(edges.map((r) => r.status)).toEqual([201, 201]);
  });

  it("renames and grows with PATCH; the size never shrinks", async () => {
    const grown = await patch("seeded", { size: 150, name: "datasets-2" });
    expect(grown.status).toBe(200);
    expect(grown.body).toEqual({ id: "seeded", name: "datasets-2", size: 150, dataCenter: "EU-RO-1", type: "HIGH_PERFORMANCE" });
    const same = await patch("seeded", { size: 150 });
    expect(same.status).toBe(200);
    const shrink = await patch("seeded", { size: 149 });
    expect(shrink.status).toBe(400);
    expect(shrink.body.errors).toEqual(["$.size: a network volume cannot shrink: it has 150 GB, so the new size must be 150 or more"]);
    expect((await e.get("/v2/network-volumes/seeded")).body.size).toBe(150);
  });

  it("refuses a change of dataCenter or type with 400 saying they are immutable", async () => {
    const dc = await patch("seeded", { dataCenter: "US-KS-2" });
    expect(dc.status).toBe(400);
    expect(dc.body.detail).toMatch(/dataCenter is immutable/);
    expect(dc.body.errors).toContain("$.dataCenter: dataCenter is immutable after creation; create a new network volume to use another data center");
    const type = await patch("seeded", { name: "x", type: "STANDARD" });
    expect(type.status).toBe(400);
    expect(type.body.errors).toEqual(["$.type: type is immutable after creation; create a new network volume to use another storage type"]);
    expect((await e.get("/v2/network-volumes/seeded")).body).toMatchObject({ name: "datasets", dataCenter: "EU-RO-1", type: "HIGH_PERFORMANCE" });
  });

  it("takes only name and size, at least one, and no unknown property", async () => {
    const empty = await patch("seeded", {});
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual(["$: expected at least one of name, size"]);
    const bogus = await patch("seeded", { size: 200, bogus: 1 });
    expect(bogus.status).toBe(400);
    expect(bogus.body.errors).toEqual(["$: additional properties 'bogus' not allowed"]);
    expect((await e.get("/v2/network-volumes/seeded")).body.size).toBe(100);
  });

  it("deletes with 204 and no body; the volume is then 404 everywhere", async () => {
    const del = await e.request("DELETE", "/v2/network-volumes/seeded");
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    for (const res of [await e.get("/v2/network-volumes/seeded"), await patch("seeded", { size: 200 }), await e.request("DELETE", "/v2/network-volumes/seeded")]) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ title: "Not Found", status: 404, detail: 'network volume "seeded" not found' });
    }
    expect((await e.get("/v2/network-volumes")).body.networkVolumes).toHaveLength(1);
  });

  it("answers a volume id that reads like a queue operation as a volume", async () => {
    const res = await e.get("/v2/network-volumes/health");
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe('network volume "health" not found');
  });
});

describe("network volumes, v1 (same store)", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  it("lists as a bare array with dataCenterId", async () => {
    const res = await e.get("/v1/networkvolumes");
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body).toHaveLength(2);
    expect(res.body).toContainEqual({ id: "seeded", name: "datasets", size: 100, dataCenterId: "EU-RO-1" });
  });

  it("creates with 200; the volume shows on v2 with the default type", async () => {
    const created = await e.post("/v1/networkvolumes", { name: "v1-vol", size: 30, dataCenterId: "EU-SE-1" });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.any(String), name: "v1-vol", size: 30, dataCenterId: "EU-SE-1" });
    const v2 = await e.get(`/v2/network-volumes/${created.body.id}`);
    expect(v2.body).toEqual({ id: created.body.id, name: "v1-vol", size: 30, dataCenter: "EU-SE-1", type: "STANDARD" });
    expect((await e.get(`/v1/networkvolumes/${created.body.id}`)).body).toEqual(created.body);
    const bad = await e.post("/v1/networkvolumes", { name: "v1-vol", size: 5000, dataCenterId: "EU-SE-1" });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(["$.size: expected number <= 4096"]);
  });

  it("updates by PATCH and by POST /update, with the same rules", async () => {
    const byPatch = await e.request("PATCH", "/v1/networkvolumes/seeded", { name: "renamed" });
    expect(byPatch.status).toBe(200);
    expect(byPatch.body).toEqual({ id: "seeded", name: "renamed", size: 100, dataCenterId: "EU-RO-1" });
    const byPost = await e.post("/v1/networkvolumes/seeded/update", { size: 120 });
    expect(byPost.status).toBe(200);
    expect((await e.get("/v2/network-volumes/seeded")).body).toMatchObject({ name: "renamed", size: 120 });
    const shrink = await e.post("/v1/networkvolumes/seeded/update", { size: 10 });
    expect(shrink.status).toBe(400);
    expect(shrink.body.errors[0]).toMatch(/^\$\.size: a network volume cannot shrink/);
    const moved = await e.request("PATCH", "/v1/networkvolumes/seeded", { dataCenterId: "US-KS-2" });
    expect(moved.status).toBe(400);
    expect(moved.body.errors).toEqual(["$.dataCenterId: dataCenterId is immutable after creation; create a new network volume to use another data center"]);
    expect((await e.request("PATCH", "/v1/networkvolumes/nope", { name: "x" })).status).toBe(404);
  });

  it("deletes with 204; v2 no longer has it", async () => {
    const del = await e.request("DELETE", "/v1/networkvolumes/seeded");
    expect(del.status).toBe(204);
    expect((await e.get("/v2/network-volumes/seeded")).status).toBe(404);
    expect((await e.get("/v1/networkvolumes/seeded")).status).toBe(404);
  });
});

describe("network volumes and reset", () => {
  it("returns to the configured volumes on reset", async () => {
    const e = await inProcess({ config });
    try {
      await e.post("/v2/network-volumes", { name: "temp", size: 10, dataCenter: "EU-RO-1" });
      await e.request("PATCH", "/v2/network-volumes/seeded", { size: 500 });
      await e.request("DELETE", "/v1/networkvolumes/seeded");
      await e.core.reset();
      const list = (await e.get("/v2/network-volumes")).body.networkVolumes;
      expect(list.map((v: { name: string; size: number }) => [v.name, v.size]).sort()).toEqual([
        ["datasets", 100],
        ["no-id", 10],
      ]);
    } finally {
      e.close();
    }
  });
});
