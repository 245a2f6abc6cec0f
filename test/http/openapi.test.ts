import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

describe("/openapi.json", () => {
  it("documents every route the app serves, with the key scheme on service routes only", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "ep" }] } });
    const doc = (await e.get("/openapi.json")).body;
    expect(doc.openapi).toBe("3.1.0");
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, { security?: unknown; operationId?: string }>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        documented.add(`${method.toUpperCase()} ${path}`);
        if (/^\/v[12]\//.test(path)) expect(op.security, `${method} ${path}`).toEqual([{ apiKey: [] }]);
        else expect(op.security, `${method} ${path}`).toBeUndefined();
      }
    }
    for (const op of ["POST /v2/{endpoint_id}/run", "POST /v2/{endpoint_id}/runsync", "GET /v2/{endpoint_id}/status/{job_id}", "GET /v2/{endpoint_id}/status-sync/{job_id}", "GET /v2/{endpoint_id}/stream/{job_id}", "POST /v2/{endpoint_id}/cancel/{job_id}", "POST /v2/{endpoint_id}/retry/{job_id}", "POST /v2/{endpoint_id}/purge-queue", "GET /v2/{endpoint_id}/health", "GET /v2/network-volumes", "GET /v2/{endpoint_id}/job-take/{worker_id}", "POST /_emulator/clock/advance", "POST /_emulator/faults", "GET /_emulator/requests"]) {
      expect(documented, op).toContain(op);
    }
    // Every route the app answers is documented (besides the pages and the document itself).
    const served = e.app.routes
      .filter((r) => r.method !== "ALL" && !["/openapi.json", "/", "/docs"].includes(r.path) && !r.path.startsWith("/docs/") && !r.path.startsWith("/_dashboard"))
      .map((r) => `${r.method} ${r.path.replace(/:([^/]+)/g, "{$1}")}`);
    for (const route of served) expect(documented, route).toContain(route);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
  });
});
