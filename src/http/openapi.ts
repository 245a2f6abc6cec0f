import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env.js";

const SERVICE_PATH = /^\/v[12]\//;

/**
 * Serves `/openapi.json`: every route declared with createRoute, with the API key scheme on the
 * service routes (`/v1`, `/v2`; the control API needs none). Built once, on first request.
 */
export function serveOpenApi(app: OpenAPIHono<AppEnv>, version: string): void {
  let doc: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  app.get("/openapi.json", (c) => {
    doc ??= build();
    return c.json(doc);
  });

  function build() {
    const d = app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "minipod",
        version,
        description:
          "A local emulator of a serverless job-queue service: the queue operations and worker routes under /v2/{endpoint_id}, the REST surface under /v1 and /v2, and the emulator's own control API under /_emulator.",
      },
    });
    d.components ??= {};
    d.components.securitySchemes = {
      apiKey: {
        type: "http",
        scheme: "bearer",
        description: "Authorization: Bearer <API key>. Queue operations and worker routes also accept the bare key.",
      },
    };
    for (const [path, item] of Object.entries(d.paths ?? {})) {
      if (!SERVICE_PATH.test(path) || !item) continue;
      for (const method of ["get", "post", "put", "patch", "delete"] as const) {
        const op = item[method];
        if (op) op.security = [{ apiKey: [] }];
      }
    }
    return d;
  }
}
