import type { IncomingMessage, ServerResponse } from "node:http";
import type { Leaving } from "../domain/leaving.js";
import type { Exchange, Gate } from "./gate.js";
import { endWith, type Body } from "./large-body.js";
import { problemAnswer, type FailureLog } from "./problem.js";
import type { RouteInfo } from "./route-info.js";
import type { ServiceRoute } from "./surfaces.js";

/**
 * A request answered from node's request and response by a fast entry of the route table, as
 * the gate sees it: the answer is made here (status, headers, the gate's first as Hono's Context
 * keeps them, body) and written by `send` once the gate has it (before its journal entry and log
 * line are made, in the same turn); a route that writes its own answer as it comes (the
 * load-balancing relay) says so with `wrote`.
 */
export class RawExchange implements Exchange {
  statusCode = 200;
  headers: Record<string, string | number> = {};
  body: Body = "";
  /** The request body as read, for the journal. */
  text: string | undefined;
  /** The route's answer, once the gate has passed the request. */
  next!: () => unknown;
  /** Called once the answer is written (a body's hold released). */
  private done: (() => void) | undefined;
  private problem: string | undefined;
  private cut = false;
  private written = false;
  /** Written after what the current microtasks write (`answerLast`). */
  private last = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly method: string,
    readonly path: string,
    private readonly search: string | undefined,
    private readonly failures: Pick<FailureLog, "failed">,
    readonly service?: { route: ServiceRoute; info: RouteInfo },
  ) {}

  authorization(): string | undefined {
    return this.req.headers.authorization;
  }

  header(name: string, value: string): void {
    this.headers[name] = value;
  }

  json(text: Body): void {
    this.headers["Content-Type"] = "application/json";
    this.body = text;
  }

  /** A 204 answer, without a body. */
  noContent(): void {
    this.statusCode = 204;
    this.body = "";
  }

  /** Its answer is written once the microtasks queued when it is ready have run (their answers first). */
  answerLast(): void {
    this.last = true;
  }

  /** Told when the connection closes before the answer is written, as @hono/node-server aborts `c.req.raw.signal`. */
  leaving(): Leaving {
    return new ConnectionLeaving(this.res);
  }

  fail(err: unknown): void {
    this.failures.failed(this.method, this.path, err);
    const { status, headers, body } = problemAnswer(err);
    this.statusCode = status;
    Object.assign(this.headers, headers);
    this.body = this.problem = body;
  }

  drop(): boolean {
    this.req.socket.destroy();
    this.cut = this.written = true;
    this.statusCode = 499;
    return true;
  }

  /** The route wrote its answer itself, with this status. */
  wrote(status: number): void {
    this.written = true;
    this.statusCode = status;
  }

  /** Passes `gate` (which calls `next`); the answer is written once made (`answered`), then `done` called. */
  answerThrough(gate: Gate, done?: () => void): void {
    this.done = done;
    const passed = gate.pass(this);
    // What fails after the route's answer is answered as Hono answers it, unless already written.
    if (passed instanceof Promise)
      passed.catch((err: unknown) => {
        this.fail(err);
        this.answered();
      });
  }

  answered(): void {
    this.send();
    const done = this.done;
    this.done = undefined;
    done?.();
  }

  /** Writes the answer made, unless the route wrote its own or the connection was cut. */
  send(): void {
    if (this.written) return;
    if (this.last) {
      // process.nextTick runs once the microtask queue is empty: the answers it writes go first.
      this.last = false;
      return void process.nextTick(() => this.send());
    }
    this.written = true;
    if (this.statusCode === 204) {
      this.res.writeHead(204, this.headers);
      this.res.end();
      return;
    }
    endWith(this.res, this.statusCode, this.headers, this.body);
  }

  query(): string | undefined {
    return this.search;
  }

  status(): number {
    return this.statusCode;
  }

  dropped(): boolean {
    return this.cut;
  }

  bodyText(): string | undefined {
    return this.text;
  }

  problemText(): string | undefined {
    return this.problem;
  }
}

/**
 * A client leaving, as a fast entry watches it: its connection closed before the answer was
 * written. What a held request needs of an AbortSignal, without one: node makes an AbortSignal
 * and its listeners slowly, and a warm call holds two requests (its `/runsync` and the worker's
 * job-take).
 */
class ConnectionLeaving implements Leaving {
  aborted = false;
  private listeners: (() => void)[] = [];

  constructor(res: ServerResponse) {
    res.once("close", () => {
      if (res.writableFinished || this.aborted) return;
      this.aborted = true;
      const listeners = this.listeners;
      this.listeners = [];
      for (const fn of listeners) fn();
    });
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const i = this.listeners.indexOf(listener);
    if (i !== -1) this.listeners.splice(i, 1);
  }
}
