import { describe, expect, it } from "vitest";
import { inProcess } from "../support/in-process.js";

// One registry answers "does this endpoint exist, and what is it" for the job engine, the queue's
// pools and the load-balancing pools, and for everything that reads them.
describe("the endpoint registry", () => {
  it("holds the queue and load-balancing endpoints served, each of its type, as the pools attach and detach them", async () => {
    const e = await inProcess({
      config: { endpoints: [{ id: "q", handler: "echo" }, { id: "api", type: "LOAD_BALANCER", handler: "echo" }] },
    });
    const { endpoints } = e.core;
    expect(endpoints.specs().map((s) => s.id)).toEqual(["q", "api"]);
    expect(endpoints.specs("QUEUE").map((s) => s.id)).toEqual(["q"]);
    expect(endpoints.specs("LOAD_BALANCER").map((s) => s.id)).toEqual(["api"]);
    expect(endpoints.has("q", "QUEUE")).toBe(true);
    expect(endpoints.has("q", "LOAD_BALANCER")).toBe(false);
    expect(endpoints.spec("api", "LOAD_BALANCER")?.handler).toBe("echo");

    // The engine reads the same answer: a queue operation on a load-balancing endpoint is not found.
    expect((await e.post("/v2/api/run", { input: {} })).status).toBe(404);
    expect((await e.post("/v2/q/run", { input: {} })).status).toBe(200);

    // An update through the management API is what the registry serves from then on.
    const patched = await e.request("PATCH", "/v2/serverless/q", { workers: { max: 2 } });
    expect(patched.status, patched.text).toBe(200);
    expect(endpoints.spec("q")?.workersMax).toBe(2);
    expect(e.core.scheduler.pool("q")?.settings.workersMax).toBe(2);

    // Detached: no longer served, and no longer stored once deleted.
    expect((await e.request("DELETE", "/v2/serverless/q")).status).toBe(204);
    expect(endpoints.has("q")).toBe(false);
    expect(endpoints.list().map((s) => s.id)).toEqual(["api"]);
    e.close();
  });
});
