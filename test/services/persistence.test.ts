import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess } from "../support/in-process.js";

const config = {
  templates: [{ id: "tpl", name: "scripted", handler: "scripted" }],
  endpoints: [{ id: "configured", workersMin: 1 }],
};

describe("management resources on a file database", () => {
  let dir: string;
  let db: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "minipod-mgmt-"));
    db = join(dir, "state.db");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps volumes, templates and endpoints created through the API across a restart", async () => {
    const first = await inProcess({ config, db });
    const volume = (await first.post("/v2/network-volumes", { name: "kept", size: 20, dataCenter: "EU-RO-1", type: "HIGH_PERFORMANCE" })).body;
    await first.request("PATCH", `/v2/network-volumes/${volume.id}`, { size: 40 });
    const template = (await first.post("/v1/templates", { name: "kept template", imageName: "me/img:1", isServerless: true, handler: "scripted", env: { A: "1" } })).body;
    const endpoint = (await first.post("/v1/endpoints", { name: "kept endpoint", templateId: template.id, workersMin: 1, workersMax: 2, gpuTypeIds: ["NVIDIA L4"], networkVolumeId: volume.id })).body;
    const updated = (await first.request("PATCH", `/v1/endpoints/${endpoint.id}`, { idleTimeout: 42, env: { B: "2" } })).body;
    first.close();

    const second = await inProcess({ config, db });
    try {
      expect((await second.get(`/v2/network-volumes/${volume.id}`)).body).toEqual({ ...volume, size: 40 });
      expect((await second.get(`/v1/templates/${template.id}`)).body).toEqual(template);
      expect((await second.get(`/v1/endpoints/${endpoint.id}`)).body).toEqual(updated);
      expect(updated).toMatchObject({ idleTimeout: 42, version: 1, env: { B: "2" } });
      // It still serves the queue, with its template's handler.
      await second.advance(1000);
      const res = await second.post(`/v2/${endpoint.id}/runsync`, { input: { output: "after restart" } });
      expect(res.body).toMatchObject({ status: "COMPLETED", output: "after restart" });
    } finally {
      second.close();
    }
  });

  it("does not bring back the jobs of an endpoint deleted before the restart", async () => {
    const first = await inProcess({ config, db });
    const job = (await first.post("/v2/configured/runsync", { input: { n: 1 } })).body;
    expect(job.status).toBe("COMPLETED");
    expect((await first.request("DELETE", "/v1/endpoints/configured")).status).toBe(204);
    first.close();

    // The configured endpoint is declared again at start, without its old jobs.
    const second = await inProcess({ config, db });
    try {
      expect((await second.get("/v2/configured/health")).status).toBe(200);
      expect((await second.get(`/v2/configured/status/${job.id}`)).status).toBe(404);
    } finally {
      second.close();
    }
  });
});
