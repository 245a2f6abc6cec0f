import type { ServiceDef, BuildReach } from "../shared/service.js";
import { BatchService } from "./model.js";
import type { Batch, StoredRequest } from "./record.js";
import { batchControlRoutes } from "./control.js";
import { batchRoutes } from "./v2.js";

export type { BatchService } from "./model.js";

// Batches live under an endpoint on the queue surface (`/v2/{endpoint_id}/batch`): no collection.
const collections = { v2: [] } as const;

/**
 * Batch jobs of queue endpoints: a named set of requests built as a DRAFT, finalized, and run as
 * jobs carrying the batch id on the endpoint's batch workers, apart from its `/run` traffic.
 * Batches and their requests are documents (kinds "batch" and "batch-request"); a finalized
 * batch's progress and results are its jobs'.
 */
export const batches: ServiceDef<"batches", { batches: BatchService }, typeof collections> = {
  name: "batches",
  collections,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock" | "log" | "jobs" | "queue" | "webhooks" | "notifier" | "endpoints" }>) => ({
    batches: new BatchService({ engine: ctx.engine, batches: ctx.documents<Batch>("batch"), requests: ctx.documents<StoredRequest>("batch-request") }),
  }),
  routes: (app, views) => {
    batchRoutes(views, app);
    batchControlRoutes(views, app);
  },
  clear: ({ batches }) => batches.clear(),
  restored: ({ batches }) => batches.clear(),
  resume: ({ batches }) => batches.resume(),
};
