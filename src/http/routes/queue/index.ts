import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { toView, type Job, type JobView } from "../../../domain/job.js";
import { preloaded, stringifyBody } from "../../../domain/json-text.js";
import type { Submission } from "../../../domain/jobs.js";
import type { Leaving } from "../../../domain/leaving.js";
import { RUNSYNC_WAIT_DEFAULT_MS, STATUS_SYNC_WAIT_DEFAULT_MS, STREAM_HOLD_DEFAULT_MS } from "../../../domain/limits.js";
import type { Core } from "../../core.js";
import type { FastRouteDecl } from "../../fast-routes.js";
import { textBody, type Body } from "../../large-body.js";
import type { AppEnv } from "../../env.js";
import { cancelRoute, healthRoute, metricsRoute, purgeRoute, retryRoute, runRoute, runsyncRoute, statusRoute, statusSyncRoute, streamRoute } from "./routes.js";

const JSON_TYPE = { "content-type": "application/json" } as const;

/**
 * A 200 answer of `value` as JSON, a large output in it written from its text (`stringify`): the
 * route's declared answer (hence `never`, which the route's typed answer accepts).
 */
const jsonAnswer = (c: Context, value: unknown): never => c.body(textBody(stringifyBody(value)), 200, JSON_TYPE) as never;

/**
 * A job's `/status` answer as JSON text, kept with the job once it no longer depends on the
 * clock (only a queued job's `delayTime` grows): clients poll the same finished job again and
 * again. Jobs are never changed in place (a change makes a new object), so the text stays true
 * for as long as the object it is kept with.
 */
function viewTexts(): (job: Job, now: number) => Body {
  const texts = new WeakMap<Job, Body>();
  return (job, now) => {
    if (job.status === "IN_QUEUE") return stringifyBody(toView(job, now));
    let text = texts.get(job);
    if (text === undefined) texts.set(job, (text = stringifyBody(toView(job, now))));
    return text;
  };
}

/**
 * The queue operations of the specification under `/v2/{endpoint_id}`; returns the ones that also
 * have a fast entry in the route table (see `FastRoute`), with the same answers.
 */
export function queueRoutes(core: Pick<Core, "jobs" | "clock" | "loadBalancers" | "scheduler" | "workerProtocol">, router: OpenAPIHono<AppEnv>): FastRouteDecl[] {
  const { jobs, clock } = core;
  const viewText = viewTexts();

  // A large input is written to the store first, over a few turns: the answer then comes later.
  const runText = (endpointId: string, submission: Submission): string | Promise<string> => {
    const job = jobs.submitStaged(endpointId, submission, "run");
    // `JSON.stringify({ id, status: "IN_QUEUE" })`, byte for byte, without the object.
    const text = (j: Job) => `{"id":${JSON.stringify(j.id)},"status":"IN_QUEUE"}`;
    return job instanceof Promise ? job.then(text) : text(job);
  };
  router.openapi(runRoute, (c) => {
    const text = runText(c.req.valid("param").endpoint_id, c.req.valid("json"));
    const answer = (t: string) => c.body(t, 200, JSON_TYPE) as never;
    return text instanceof Promise ? text.then(answer) : answer(text);
  });

  // The job as it is once final or when the wait ends, as JSON text.
  const runsync = async (endpointId: string, submission: Submission, wait: number | undefined, signal: Leaving): Promise<Body> => {
    const staged = jobs.submitStaged(endpointId, submission, "runsync");
    const job = staged instanceof Promise ? await staged : staged;
    const done = await jobs.waitUntilFinal(endpointId, job.id, wait ?? RUNSYNC_WAIT_DEFAULT_MS, signal);
    await preloaded(done.output);
    return stringifyBody(toView(done, clock.now()));
  };
  router.openapi(runsyncRoute, async (c) => {
    const text = await runsync(c.req.valid("param").endpoint_id, c.req.valid("json"), c.req.valid("query").wait, c.req.raw.signal);
    return c.body(textBody(text), 200, JSON_TYPE) as never;
  });

  // What c.json(toView(job)) answers, byte for byte.
  // A large stored output is read first, a part a turn (RawJson.preload): the answer comes later.
  const status = (endpointId: string, jobId: string, ttl: number | undefined): Body | Promise<Body> => {
    const job = jobs.status(endpointId, jobId, ttl);
    const ready = preloaded(job.output);
    return ready ? ready.then(() => viewText(job, clock.now())) : viewText(job, clock.now());
  };
  router.openapi(statusRoute, (c) => {
    const { endpoint_id, job_id } = c.req.valid("param");
    const text = status(endpoint_id, job_id, c.req.valid("query").ttl);
    const answer = (t: Body) => c.body(textBody(t), 200, JSON_TYPE) as unknown as ReturnType<typeof c.json<JobView, 200>>;
    return text instanceof Promise ? text.then(answer) : answer(text);
  });

  router.openapi(statusSyncRoute, async (c) => {
    const { endpoint_id, job_id } = c.req.valid("param");
    const wait = c.req.valid("query").wait ?? STATUS_SYNC_WAIT_DEFAULT_MS;
    const job = await jobs.waitUntilFinal(endpoint_id, job_id, wait, c.req.raw.signal);
    await preloaded(job.output);
    return jsonAnswer(c, toView(job, clock.now()));
  });

  router.openapi(streamRoute, async (c) => {
    const { endpoint_id, job_id } = c.req.valid("param");
    const asked = c.req.valid("query").wait;
    // Without `wait`, the hold also ends after as much wall time: clients read /stream with their
    // own timeout (the service's Python client: 10 s), whatever the clock's mode or speed.
    const signal = asked === undefined ? AbortSignal.any([c.req.raw.signal, AbortSignal.timeout(STREAM_HOLD_DEFAULT_MS)]) : c.req.raw.signal;
    const { job, items } = await jobs.stream(endpoint_id, job_id, asked ?? STREAM_HOLD_DEFAULT_MS, signal);
    return jsonAnswer(c, { status: job.status, stream: items, ...(job.error !== undefined ? { error: job.error } : {}) });
  });

  router.openapi(cancelRoute, (c) => {
    const { endpoint_id, job_id } = c.req.valid("param");
    const job = jobs.cancel(endpoint_id, job_id);
    return c.json({ id: job.id, status: job.status }, 200);
  });

  router.openapi(retryRoute, (c) => {
    const { endpoint_id, job_id } = c.req.valid("param");
    const job = jobs.retry(endpoint_id, job_id);
    return c.json({ id: job.id, status: job.status }, 200);
  });

  router.openapi(purgeRoute, (c) => {
    const removed = jobs.purge(c.req.valid("param").endpoint_id);
    return c.json({ removed, status: "completed" as const }, 200);
  });

  router.openapi(healthRoute, (c) => {
    const id = c.req.valid("param").endpoint_id;
    // A load-balancing endpoint has no queue: its workers and requests, in the same shape.
    return c.json(core.loadBalancers.healthCounts(id) ?? jobs.health(id), 200);
  });

  router.openapi(metricsRoute, (c) => {
    const id = c.req.valid("param").endpoint_id;
    const { workers } = jobs.health(id);
    // Ready: idle or running, worker processes or simulated workers alike.
    // (A process in its cold start is initializing, though it has called.)
    const processes = core.workerProtocol.workers.list(id).filter((w) => (w.state === "idle" || w.state === "running") && core.workerProtocol.ready(id, w.id));
    const simulated = core.scheduler.pool(id)?.list().filter((w) => w.state !== "initializing") ?? [];
    // A worker process minipod started is initializing until it first calls.
    const initializing = workers.initializing + core.workerProtocol.starting(id);
    return c.json({ workers: { ...workers, initializing }, readyWorkers: [...processes, ...simulated].map((w) => w.id) }, 200);
  });

  return [
    { config: runRoute, answer: (p, body) => runText(p.endpoint_id!, body as Submission) },
    { config: statusRoute, answer: (p, _body, request) => status(p.endpoint_id!, p.job_id!, (request.query as { ttl?: number }).ttl) },
    { config: runsyncRoute, answer: (p, body, request) => runsync(p.endpoint_id!, body as Submission, (request.query as { wait?: number }).wait, request.signal()) },
  ];
}
