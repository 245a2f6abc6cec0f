import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import { REQUEST_FAULTS } from "../domain/faults.js";
import type { Logger } from "../domain/logger.js";
import { RecentMap } from "../domain/recent-map.js";
import { classifyServiceRoute, type ServiceRoute } from "../domain/surfaces.js";
import type { HeaderSink } from "./auth.js";
import { bodyLimitOf, jsonText, readIncoming } from "./body.js";
import { parseJsonBody } from "./checked-routes.js";
import type { Core } from "./core.js";
import { requestLogLine, type Admission } from "./gate.js";
import type { RequestJournal } from "./journal.js";
import { problemAnswer, unexpected, validationError } from "./problem.js";
import { routeInfo, type RouteInfo } from "./route-info.js";
import { submitRun } from "./routes/queue/index.js";
import { runRoute } from "./routes/queue/routes.js";

/**
 * A `/v2/{endpoint_id}/run` path that the app's URL handling leaves as it is: no query, no
 * percent-encoding, no dot segment (those go through the app, which normalises them).
 */
const RUN_PATH = /^\/v2\/([A-Za-z0-9_~-][A-Za-z0-9._~-]*)\/run$/;
/** A Host header @hono/node-server takes as it is, without parsing a URL (its own test). */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
/** How many paths keep whether they are answered here. */
const PATHS_KEPT = 1_000;

/** The schemas and body limit that `runRoute` declares, as the app checks them. */
function declaredChecks(): { params: z.ZodType; body: z.ZodType; limit: number } {
  const middleware = runRoute.middleware as readonly unknown[];
  const limit = middleware.map(bodyLimitOf).find((l) => l !== undefined);
  const media = runRoute.request.body.content["application/json"];
  if (limit === undefined || !media.schema) throw new Error("runRoute declares no JSON body with a limit");
  return { params: runRoute.request.params as z.ZodType, body: media.schema as z.ZodType, limit };
}

/** A path answered here: its endpoint, and what the gate and the journal make of it. */
interface RunPath {
  endpointId: string;
  route: ServiceRoute;
  info: RouteInfo;
}

/** An answer being made: status, headers (the gate's first, as Hono's Context keeps them) and body. */
class Answer implements HeaderSink {
  status = 200;
  headers: Record<string, string | number> = {};
  body = "";

  header(name: string, value: string): void {
    this.headers[name] = value;
  }

  json(status: number, value: unknown): void {
    this.status = status;
    this.headers["Content-Type"] = "application/json";
    this.body = JSON.stringify(value);
  }

  problem(err: unknown): void {
    const { status, headers, body } = problemAnswer(err);
    this.status = status;
    Object.assign(this.headers, headers);
    this.body = body;
  }
}

/**
 * `POST /v2/{endpoint_id}/run` answered straight from node's request and response, before Hono.
 *
 * It is the request clients send fastest, and through the app most of its cost is the framework's
 * rather than the job's: @hono/node-server's Request, Hono's Context and Response, the route's
 * chain. Here the same steps run in the same order, from the same functions and declarations:
 * the gate's admission (authentication, quotas, scope, queue limits), the body read under the
 * route's limit, its JSON parsed and checked against `runRoute`'s own schemas, `submitRun`, the
 * wait for the commit, then the journal entry and the log line; errors are answered with the same
 * problem+json. `test/e2e/direct-run.test.ts` sends the same requests both ways and compares
 * status, headers, body and journal.
 *
 * Only what the app would answer so, untouched, is taken: anything else (another route matched
 * first, a query string, an encoded or unusual path or Host, a declared body over the limit, a
 * request fault rule armed) is left to the app before a byte is read or anything counted.
 */
export class DirectRun {
  private readonly checks = declaredChecks();
  /** By path: what is known of a path answered here, null for one left to the app. */
  private readonly paths = new RecentMap<string, RunPath | null>(PATHS_KEPT);
  private readonly log: Logger;

  constructor(
    private readonly core: Pick<Core, "jobs" | "jobStore" | "faults" | "log">,
    private readonly journal: RequestJournal,
    private readonly admit: Admission,
    /** Whether the app routes a POST of this path to `runRoute`, behind the gate alone. */
    private readonly routedToRun: (path: string) => boolean,
  ) {
    this.log = core.log;
  }

  /** Answers the request and returns true, or returns false having touched nothing. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== "POST") return false;
    const path = req.url ?? "";
    const host = req.headers.host;
    if (host === undefined || !PLAIN_HOST.test(host)) return false;
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > this.checks.limit) return false;
    if (this.core.faults.armed(REQUEST_FAULTS)) return false;
    let known = this.paths.get(path);
    if (known === undefined) this.paths.set(path, (known = this.taken(path)));
    if (known === null) return false;
    this.run(req, res, path, known);
    return true;
  }

  /** What is known of a path answered here, or null. */
  private taken(path: string): RunPath | null {
    const match = RUN_PATH.exec(path);
    const route = classifyServiceRoute("POST", path);
    if (match === null || route.surface !== "queue" || !this.routedToRun(path)) return null;
    const params = this.checks.params.safeParse({ endpoint_id: match[1] });
    if (!params.success) return null;
    return { endpointId: (params.data as { endpoint_id: string }).endpoint_id, route, info: routeInfo(path, route) };
  }

  private run(req: IncomingMessage, res: ServerResponse, path: string, { endpointId, route, info }: RunPath): void {
    const startedMs = performance.now();
    const at = this.journal.enabled ? this.journal.now() : 0;
    const answer = new Answer();
    let release: (() => void) | undefined;
    try {
      release = this.admit("POST", path, req.headers.authorization, route, answer);
    } catch (err) {
      this.fail(answer, err, path);
      this.send(res, answer, path, info, at, startedMs, undefined);
      return;
    }
    let bodyText: string | undefined;
    const settled = () => {
      const finish = () => {
        release?.();
        this.send(res, answer, path, info, at, startedMs, bodyText);
      };
      const durable = this.core.jobStore.whenDurable();
      if (durable === undefined) return finish();
      durable.then(finish, (err: unknown) => {
        this.fail(answer, err, path);
        finish();
      });
    };
    readIncoming(req, this.checks.limit).then(
      (read) => {
        try {
          bodyText = jsonText(read);
          answer.json(200, submitRun(this.core.jobs, endpointId, this.submission(bodyText)));
        } catch (err) {
          this.fail(answer, err, path);
        }
        settled();
      },
      (err: unknown) => {
        this.fail(answer, err, path);
        settled();
      },
    );
  }

  /** The body checked as the app checks it: JSON, then `runRoute`'s schema. */
  private submission(text: string): unknown {
    const checked = this.checks.body.safeParse(parseJsonBody(text));
    if (!checked.success) throw validationError(checked.error, "body");
    return checked.data;
  }

  private fail(answer: Answer, err: unknown, path: string): void {
    if (unexpected(err)) this.log.error(`POST ${path}: ${(err as Error)?.stack ?? String(err)}`);
    answer.problem(err);
  }

  private send(res: ServerResponse, answer: Answer, path: string, info: RouteInfo, at: number, startedMs: number, bodyText: string | undefined): void {
    if (this.journal.enabled) this.journal.write("POST", path, info, answer.status, at, this.journal.since(startedMs), bodyText);
    if (this.log.enabled("info")) this.log.info(requestLogLine("POST", path, answer.status, startedMs));
    answer.headers["Content-Length"] = Buffer.byteLength(answer.body);
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }
}
