import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { EmulatorError } from "../../../domain/errors.js";
import type { Job, Lane } from "../../../domain/job.js";
import type { Leaving } from "../../../domain/leaving.js";
import type { WorkerResult } from "../../../domain/worker-protocol.js";
import { preloaded, stringifyBody } from "../../../domain/json-text.js";
import type { Core } from "../../core.js";
import type { FastRequest, FastRouteDecl } from "../../fast-routes.js";
import { textBody, type Body } from "../../large-body.js";
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

/**
 * The routes real worker processes call to fetch jobs, hand back results, hear stops and beat;
 * returns the ones that also have a fast entry in the route table (see `FastRoute`), with the same
 * answers: those on a warm call's path (job-take, job-done) and job-stream.
 */
export function workerRoutes(core: Pick<Core, "workerProtocol">, router: OpenAPIHono<AppEnv>): FastRouteDecl[] {
  const w = core.workerProtocol;
  // Once minipod is stopping, polls answer at once and their connection closes, so a worker that
  // asks again does not keep minipod waiting.
  const polled = (header: (name: string, value: string) => void) => {
    if (w.isClosing) header("connection", "close");
  };
  const polledAnswer = (c: Context, text: Body | null): Response => {
    polled((name, value) => c.header(name, value));
    return text === null ? c.body(null, 204) : c.body(textBody(text), 200, JSON_TYPE);
  };

  // `stringify`: a large input goes out as the text it came in, never parsed here.
  const take = async (p: Record<string, string>, q: { job_in_progress?: string | undefined; pool?: string | undefined }, signal: Leaving): Promise<Body | null> => {
    const [job] = await w.take(p.endpoint_id!, p.worker_id!, 1, flag(q.job_in_progress), signal, laneOfPool(q.pool));
    await preloaded(job?.input);
    return job ? stringifyBody(shape(job)) : null;
  };
  router.openapi(takeRoute, async (c) => polledAnswer(c, await take(c.req.valid("param"), c.req.valid("query"), c.req.raw.signal)) as never);
  router.openapi(takeBatchRoute, async (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const q = c.req.valid("query");
    const jobs = await w.take(endpoint_id, worker_id, q.batch_size ?? 1, flag(q.job_in_progress), c.req.raw.signal, laneOfPool(q.pool));
    await preloaded(...jobs.map((j) => j.input));
    return polledAnswer(c, jobs.length ? stringifyBody(jobs.map(shape)) : null) as never;
  });
  router.openapi(stopRoute, async (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const ids = await w.stops(endpoint_id, worker_id, c.req.raw.signal);
    polled((name, value) => c.header(name, value));
    return ids.length ? c.json({ jobsToStop: ids }, 200) : c.body(null, 204);
  });

  type ResultQuery = { jobId?: string | undefined; isStream?: string | undefined };
  const ack = (job: Job) => JSON.stringify({ id: job.id, status: job.status });
  const done = (p: Record<string, string>, q: ResultQuery, result: unknown): string | Promise<string> => {
    const job = w.doneStaged(p.endpoint_id!, p.worker_id!, resultJobId(p.job_id, q.jobId), result as WorkerResult, flag(q.isStream) === true);
    return job instanceof Promise ? job.then(ack) : ack(job);
  };
  const chunk = (p: Record<string, string>, q: ResultQuery, result: unknown): string =>
    ack(w.chunk(p.endpoint_id!, p.worker_id!, resultJobId(p.job_id, q.jobId), result as WorkerResult));
  const answerOf = (c: Context) => (text: string) => c.body(text, 200, JSON_TYPE) as never;
  for (const route of [doneRoute, doneQueryRoute]) {
    router.openapi(route, (c) => {
      const text = done(c.req.valid("param"), c.req.valid("query"), c.req.valid("json"));
      return text instanceof Promise ? text.then(answerOf(c)) : answerOf(c)(text);
    });
  }
  for (const route of [streamRoute, streamQueryRoute]) router.openapi(route, (c) => answerOf(c)(chunk(c.req.valid("param"), c.req.valid("query"), c.req.valid("json"))));

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

  return [
    {
      config: takeRoute,
      // A job-take pipelined behind the worker's job-done is handled once that result is.
      inTurn: true,
      answer: (p, _body, request) => {
        const answered = (text: Body | null) => (polled((name, value) => request.header(name, value)), text);
        return take(p, request.query, request.signal()).then(answered);
      },
    },
    // A job-done's answer goes after the answer of the /runsync its result completes (on a caller's path).
    // The path forms name the job: a path per job, kept apart in the route table.
    ...[doneRoute, doneQueryRoute].map((config) => ({
      config,
      oneOff: config === doneRoute,
      answer: (p: Record<string, string>, body: unknown, request: FastRequest) => (request.answerLast(), done(p, request.query, body)),
    })),
    ...[streamRoute, streamQueryRoute].map((config) => ({
      config,
      oneOff: config === streamRoute,
      answer: (p: Record<string, string>, body: unknown, request: FastRequest) => chunk(p, request.query, body),
    })),
  ];
}
