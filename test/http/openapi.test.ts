import { afterEach, describe, expect, it } from "vitest";
import { TAG_ORDER } from "../../src/http/openapi.js";
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
    for (const op of [
      "POST /v2/{endpoint_id}/run",
      "POST /v2/{endpoint_id}/runsync",
      "GET /v2/{endpoint_id}/status/{job_id}",
      "GET /v2/{endpoint_id}/status-sync/{job_id}",
      "GET /v2/{endpoint_id}/stream/{job_id}",
      "POST /v2/{endpoint_id}/cancel/{job_id}",
      "POST /v2/{endpoint_id}/retry/{job_id}",
      "POST /v2/{endpoint_id}/purge-queue",
      "GET /v2/{endpoint_id}/health",
      "GET /v2/{endpoint_id}/metrics",
      "GET /v2/network-volumes",
      "GET /v2/{endpoint_id}/job-take/{worker_id}",
      "POST /_emulator/clock/advance",
      "POST /_emulator/faults",
      "GET /_emulator/requests",
    ]) {
      expect(documented, op).toContain(op);
    }
    // Every route the app answers is documented (besides the pages and the document itself).
    const served = e.app.routes
      .filter((r) => r.method !== "ALL" && !["/openapi.json", "/", "/docs"].includes(r.path) && !r.path.startsWith("/docs/") && !r.path.startsWith("/_dashboard"))
      .map((r) => `${r.method} ${r.path.replace(/:([^/]+)/g, "{$1}")}`);
    for (const route of served) expect(documented, route).toContain(route);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("opens on the queue: its groups, and its paths, in the order of /docs (queue, OpenAI, workers, management, control last)", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "ep" }] } });
    const doc = (await e.get("/openapi.json")).body as { tags: Array<{ name: string; description?: string }>; paths: Record<string, Record<string, { tags?: string[] }>> };
    const names = doc.tags.map((t) => t.name);
    expect(names[0]).toBe("Queue");
    expect(names.slice(0, 4)).toEqual(["Queue", "OpenAI-compatible", "Batches", "Worker protocol"]);
    expect(names.at(-1)).toBe("Emulator control");
    for (const t of doc.tags) expect(t.description, t.name).toBeTruthy();
    // Every group a route uses is placed in TAG_ORDER, and named once.
    const used = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags ?? [])));
    for (const tag of used) expect(TAG_ORDER.map((g) => g.name), tag).toContain(tag);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(TAG_ORDER.map((g) => g.name).filter((n) => used.has(n)));
    // Swagger UI shows the groups in this order, and the raw document lists the queue's paths first.
    const firstTags = Object.values(doc.paths).map((item) => Object.values(item)[0]!.tags![0]!);
    expect(firstTags[0]).toBe("Queue");
    const order = firstTags.map((t) => names.indexOf(t));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(Object.keys(doc.paths)[0]).toMatch(/^\/v2\/\{endpoint_id\}\//);
  });
  it("is also at /docs/openapi-3.0.json as OpenAPI 3.0, for /docs: the same operations, parameters, bodies, answers, keys, groups and order", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "ep" }] } });
    type Op = { operationId?: string; tags?: string[]; security?: unknown; parameters?: Array<{ in: string; name: string; required?: boolean }>; requestBody?: { content: object }; responses: object };
    type Doc = { openapi: string; tags: unknown; paths: Record<string, Record<string, Op>>; components: { schemas: object; securitySchemes: unknown } };
    const doc = (await e.get("/openapi.json")).body as Doc;
    const doc30 = (await e.get("/docs/openapi-3.0.json")).body as Doc;
    expect(doc30.openapi).toMatch(/^3\.0\.\d+$/);
    // What Swagger UI lists and sends: each operation's path, method, id, group, key, parameters, body types and answers.
    const outline = (d: Doc) =>
      Object.entries(d.paths).flatMap(([path, item]) =>
        Object.entries(item).map(([method, op]) => ({
          at: `${method} ${path}`,
          id: op.operationId,
          tags: op.tags,
          security: op.security,
          parameters: (op.parameters ?? []).map((p) => `${p.in} ${p.name} ${p.required === true}`),
          body: Object.keys(op.requestBody?.content ?? {}),
          responses: Object.keys(op.responses),
        })),
      );
    expect(outline(doc30)).toEqual(outline(doc));
    expect(doc30.tags).toEqual(doc.tags);
    expect(Object.keys(doc30.components.schemas)).toEqual(Object.keys(doc.components.schemas));
    expect(doc30.components.securitySchemes).toEqual(doc.components.securitySchemes);
    // A null type is written the 3.0 way.
    const text = JSON.stringify(doc30);
    expect(text).not.toMatch(/"type":\[/);
    expect(text).toContain('"nullable":true');
  });
});
