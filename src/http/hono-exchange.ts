import type { Context, ErrorHandler, MiddlewareHandler } from "hono";
import { OPENAI_OPERATION } from "../domain/operations.js";
import { after } from "./chain.js";
import { journalPathOf, type AppEnv } from "./env.js";
import type { Exchange, Gate } from "./gate.js";
import type { ServiceRoute } from "./surfaces.js";

/** A request answered through Hono, as the gate sees it: its Context, and the rest of its chain. */
class HonoExchange implements Exchange {
  readonly method: string;
  readonly path: string;

  constructor(
    private readonly c: Context<AppEnv>,
    private readonly rest: () => unknown,
    private readonly onError: ErrorHandler<AppEnv>,
  ) {
    this.method = c.req.method;
    this.path = c.req.path;
  }

  authorization(): string | undefined {
    return this.c.req.header("authorization");
  }

  header(name: string, value: string): void {
    this.c.header(name, value);
  }

  next(): unknown {
    return this.rest();
  }

  /** `c.res` becomes `onError`'s answer to `err`. */
  fail(err: unknown): unknown {
    return after(this.onError(err as Error, this.c), (res) => {
      this.c.res = res;
    });
  }

  drop(): boolean {
    const { c } = this;
    c.set("dropped", true);
    const socket = (c.env as { incoming?: { socket?: { destroy(): void } } } | undefined)?.incoming?.socket;
    if (!socket) return false;
    socket.destroy();
    c.res = new Response(null, { status: 499 });
    return true;
  }

  classified(route: ServiceRoute): void {
    if (route.operation === OPENAI_OPERATION && route.surface === "queue") this.c.set("openAi", true);
  }

  keepSlot(take: () => () => void): void {
    this.c.set("keepSlot", take);
  }

  query(): string | undefined {
    const url = this.c.req.url;
    const mark = url.indexOf("?");
    return mark < 0 || mark === url.length - 1 ? undefined : url.slice(mark + 1);
  }

  status(): number {
    return this.c.res.status;
  }

  dropped(): boolean {
    return this.c.get("dropped") === true;
  }

  forwarded(): boolean {
    return this.c.get("forwarded") === true;
  }

  passedOn(): boolean {
    return journalPathOf(this.c.env) !== undefined;
  }

  journalPath(): string | undefined {
    return journalPathOf(this.c.env);
  }

  bodyText(): Promise<string> | undefined {
    return (this.c.req.bodyCache as { text?: Promise<string> }).text;
  }

  problemText(): string | undefined {
    return this.c.get("problemBody");
  }
}

/**
 * The gate as the app's first middleware, for the requests answered through Hono. Written to
 * answer without a promise when nothing waits (see `chain`): a GET passes the whole gate in the
 * turn its request arrived. Under Hono's own compose it is awaited as any middleware.
 */
export function honoGate(gate: Gate, onError: ErrorHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  const pass = (c: Context<AppEnv>, next: () => unknown) => gate.pass(new HonoExchange(c, next, onError));
  return pass as unknown as MiddlewareHandler<AppEnv>;
}
