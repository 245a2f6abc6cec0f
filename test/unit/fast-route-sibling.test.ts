import { createRoute, z } from "@hono/zod-openapi";
import { describe, expect, it, vi } from "vitest";
import { FastRoute, type FastRouteDecl } from "../../src/http/fast-routes.js";
import type { Gate } from "../../src/http/gate.js";
import { ServicePaths } from "../../src/http/surfaces.js";

// A one-off path (a worker's job-done, a path per job) in a folder the route table has seen is
// known from the first path of that folder: only the segment that differs, the route's last
// param, is checked, against the route's own schema (its field alone when the params' schema is a
// plain object, the whole object when the object has a check of its own).

const params = z.object({ endpoint_id: z.string(), job_id: z.string().regex(/^job-/) });
const route = (schema: z.ZodType): FastRouteDecl => ({
  config: createRoute({ method: "post", path: "/v2/{endpoint_id}/done/{job_id}", request: { params: schema as typeof params }, responses: { 204: { description: "done" } } }),
  answer: () => null,
  oneOff: true,
});
const core = { failures: { failed: () => {} }, paths: new ServicePaths([]), bodies: undefined } as never;
const entry = (schema: z.ZodType) => new FastRoute(core, {} as Gate, route(schema));

describe("a one-off path known from its folder", () => {
  it("checks the differing param against its field of the params' schema, the others kept as they were checked", () => {
    const e = entry(params);
    const first = e.accepts("POST", "/v2/ep/done/job-1", { endpoint_id: "ep", job_id: "job-1" })!;
    expect(first.params).toEqual({ endpoint_id: "ep", job_id: "job-1" });
    const whole = vi.spyOn(params, "safeParse");
    expect(e.sibling(first, "job_id", "job-2")).toEqual({ params: { endpoint_id: "ep", job_id: "job-2" }, service: first.service });
    expect(e.sibling(first, "job_id", "nope")).toBeNull();
    // What the path's URL handling reads differently is left to the app, as `accepts` leaves it.
    for (const value of ["job-%32", "..", ".", "job 2"]) expect(e.sibling(first, "job_id", value), value).toBeNull();
    expect(whole).not.toHaveBeenCalled();
    whole.mockRestore();
  });

  it("checks the whole params when their object has a check of its own", () => {
    const e = entry(params.refine((p) => p.job_id !== `job-${p.endpoint_id}`, "a job named after its endpoint"));
    const first = e.accepts("POST", "/v2/ep/done/job-1", { endpoint_id: "ep", job_id: "job-1" })!;
    expect(e.sibling(first, "job_id", "job-2")?.params).toEqual({ endpoint_id: "ep", job_id: "job-2" });
    expect(e.sibling(first, "job_id", "job-ep")).toBeNull();
  });
});
