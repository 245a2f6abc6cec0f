import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { VIRTUAL_TIME_MAX_MS } from "../../../domain/bounds.js";
import { JOB_STATUSES } from "../../../domain/job.js";
import { jsonBody } from "../../body.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { ERROR_RESPONSES, int, json } from "../../schemas.js";
import { JobViewSchema } from "../queue/schemas.js";

const TAG = "Emulator control";
/** Virtual ms a wait lasts when the body does not say (an hour, as `emulator.waitForJob`). */
export const WAIT_DEFAULT_MS = 3_600_000;

const wait = createRoute({
  method: "post",
  path: "/_emulator/endpoints/{endpoint_id}/jobs/{id}/wait",
  operationId: "waitForJob",
  tags: [TAG],
  summary: "Wait until a job reaches a status",
  description:
    "Answers the job (as `/status` shows it) once it reaches `status` (default `COMPLETED`). On the manual clock it advances time timer by timer, at most `withinMs` virtual ms; on the real clock it waits that long. 400 when the job ends in another final state or time runs out, 404 when there is no such job: what `emulator.waitForJob` does, for clients in other languages.",
  middleware: [jsonBody(1024)] as const,
  request: {
    params: z.object({
      endpoint_id: z.string().min(1).openapi({ param: { name: "endpoint_id", in: "path" }, example: "echo" }),
      id: z.string().min(1).openapi({ param: { name: "id", in: "path" } }),
    }),
    body: {
      required: false,
      content: {
        "application/json": {
          schema: z
            .object({
              status: z.enum(JOB_STATUSES).optional().openapi({ description: "default COMPLETED" }),
              withinMs: int().min(0).max(VIRTUAL_TIME_MAX_MS).optional().openapi({ description: `virtual ms, default ${WAIT_DEFAULT_MS}` }),
            })
            .strict()
            .openapi("WaitForJob"),
        },
      },
    },
  },
  responses: { 200: json(JobViewSchema, "The job, in that status"), 400: ERROR_RESPONSES[400], 404: ERROR_RESPONSES[404] },
});

/** `POST /_emulator/endpoints/{endpoint_id}/jobs/{id}/wait`: the control API's waitForJob. */
export function waitRoutes(core: Pick<Core, "waitForJob">, router: OpenAPIHono<AppEnv>): void {
  router.openapi(wait, async (c) => {
    const { endpoint_id, id } = c.req.valid("param");
    // An empty body (no content) is allowed: the defaults apply.
    const body = (c.req.valid("json") as { status?: (typeof JOB_STATUSES)[number]; withinMs?: number } | undefined) ?? {};
    const view = await core.waitForJob(endpoint_id, id, body.status ?? "COMPLETED", body.withinMs ?? WAIT_DEFAULT_MS);
    return c.json(view, 200);
  });
}
