import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/env.js";
import { ERROR_RESPONSES, json } from "../../http/schemas.js";
import type { ViewContext } from "../shared/service.js";
import { showBatch, showRequest, BatchRequestV2Schema, BatchV2Schema } from "./v2.js";

/** How many batches, and requests of each, the overview shows (the newest batches; each batch's first requests). */
const OVERVIEW_BATCHES = 20;
const OVERVIEW_REQUESTS = 50;

const overviewRoute = createRoute({
  method: "get",
  path: "/_emulator/batches",
  operationId: "emulatorBatches",
  tags: ["Emulator control"],
  summary: "Every endpoint's newest batches with their progress and first requests (the dashboard's view)",
  responses: {
    200: json(
      z.object({ batches: z.array(BatchV2Schema.extend({ requests: z.array(BatchRequestV2Schema) })) }).openapi("BatchOverview"),
      `The newest ${OVERVIEW_BATCHES} batches, each with its first ${OVERVIEW_REQUESTS} requests`,
    ),
    ...ERROR_RESPONSES,
  },
});

/** The control API's view of batches, which the dashboard's batch panel reads. */
export function batchControlRoutes(views: Pick<ViewContext, "batches">, router: OpenAPIHono<AppEnv>): void {
  router.openapi(overviewRoute, (c) => {
    const { batches } = views;
    // A batch whose endpoint was deleted has no requests left to show.
    const firstRequests = (endpointId: string, id: string) => {
      try {
        return batches.requests(endpointId, id, 0, OVERVIEW_REQUESTS).requests.map(showRequest);
      } catch {
        return [];
      }
    };
    const out = batches
      .all()
      .slice(0, OVERVIEW_BATCHES)
      .map((b) => ({ ...showBatch(batches, b), requests: firstRequests(b.endpointId, b.id) }));
    return c.json({ batches: out }, 200);
  });
}
