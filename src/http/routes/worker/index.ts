import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { EmulatorError } from "../../../domain/errors.js";
import type { Job, Lane } from "../../../domain/job.js";
import { preloaded, stringifyBody } from "../../../domain/json-text.js";
import type { Core } from "../../core.js";
import { textBody } from "../../large-body.js";
import type { AppEnv } from "../../env.js";
import { doneQueryRoute, doneRoute, pingRoute, stopRoute, streamQueryRoute, streamRoute, takeBatchRoute, takeRoute } from "./routes.js";

const shape = (j: Job) => ({ id: j.id, input: j.input, ...(j.webhook ? { webhook: j.webhook } : {}), ...(j.batchId ? { batchId: j.batchId } : {}) });
const laneOfPool = (pool: string | undefined): Lane => (pool === "batch" ? "batch" : "standard");
const JSON_TYPE = { "content-type": "application/json" } as const;
const flag = (v: string | undefined) => (v === undefined ? undefined : v === "true" || v === "1");

/** The job id of a result post: in the path (the platform's form) or `?jobId=` (both must agree). */
function resultJobId(inPath: string | undefined, inQuery: string | undefined): string {
  if (inPath !== undefined && inQuery !== undefined && inPath !== inQuery) {
    throw new EmulatorError("BAD_REQUEST", `the job id is given twice and differs: "${inPath}" in the path, "${inQuery}" in ?jobId=`);
  }
  return (inPath ?? inQuery)!;
}

/** The routes real worker processes call to fetch jobs, hand back results, hear stops and beat. */
export function workerRoutes(core: Pick<Core, "workerProtocol">, router: OpenAPIHono<AppEnv>): void {
  const w = core.workerProtocol;
  // Once minipod is stopping, polls answer at once and their connection closes, so a worker that
  // asks again does not keep minipod waiting.
  const polled = (c: Context) => {
    if (w.isClosing) c.header("connection", "close");
  };

  router.openapi(takeRoute, async (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const q = c.req.valid("query");
    const [job] = await w.take(endpoint_id, worker_id, 1, flag(q.job_in_progress), c.req.raw.signal, laneOfPool(q.pool));
    await preloaded(job?.input);
    polled(c);
    // `stringify`: a large input goes out as the text it came in, never parsed here.
    return job ? (c.body(textBody(stringifyBody(shape(job))), 200, JSON_TYPE) as never) : c.body(null, 204);
  });
  router.openapi(takeBatchRoute, async (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const q = c.req.valid("query");
    const jobs = await w.take(endpoint_id, worker_id, q.batch_size ?? 1, flag(q.job_in_progress), c.req.raw.signal, laneOfPool(q.pool));
    await preloaded(...jobs.map((j) => j.input));
    polled(c);
    return jobs.length ? (c.body(textBody(stringifyBody(jobs.map(shape))), 200, JSON_TYPE) as never) : c.body(null, 204);
  });
  router.openapi(stopRoute, async (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const ids = await w.stops(endpoint_id, worker_id, c.req.raw.signal);
    polled(c);
    return ids.length ? c.json({ jobsToStop: ids }, 200) : c.body(null, 204);
  });

  for (const route of [doneRoute, doneQueryRoute]) {
    router.openapi(route, (c) => {
      const p = c.req.valid("param") as { endpoint_id: string; worker_id: string; job_id?: string };
      const q = c.req.valid("query");
      const done = w.doneStaged(p.endpoint_id, p.worker_id, resultJobId(p.job_id, q.jobId), c.req.valid("json"), flag(q.isStream) === true);
      const answer = (job: Job) => c.json({ id: job.id, status: job.status }, 200);
      return done instanceof Promise ? done.then(answer) : answer(done);
    });
  }
  for (const route of [streamRoute, streamQueryRoute]) {
    router.openapi(route, (c) => {
      const p = c.req.valid("param") as { endpoint_id: string; worker_id: string; job_id?: string };
      const job = w.chunk(p.endpoint_id, p.worker_id, resultJobId(p.job_id, c.req.valid("query").jobId), c.req.valid("json"));
      return c.json({ id: job.id, status: job.status }, 200);
    });
  }

  router.openapi(pingRoute, (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const q = c.req.valid("query");
    // The library always sends its version, and its job ids only when it has some: a heartbeat
    // with the version and no ids says "no jobs"; one with neither says nothing about jobs.
    const jobIds = q.job_id ?? (q.runpod_version !== undefined ? [] : undefined);
    const unhealthy = q.status === "unhealthy" ? `${q.check ?? "start-up check"} failed${q.reason ? `: ${q.reason}` : ""}` : undefined;
    w.ping(endpoint_id, worker_id, { jobIds, version: q.runpod_version, unhealthy });
    return c.json({ status: "ok" as const }, 200);
  });
}
