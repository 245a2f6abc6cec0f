import type { Context, ErrorHandler } from "hono";

/** A link of a request's chain: Hono's middleware and handlers, which may answer without a promise. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- links of any app's context
export type Link = (c: Context<any>, next: () => unknown) => unknown;

/**
 * `f(x)`, once `x` settles when it is a promise: a step that costs no turn when nothing waits.
 * (Not named `then`: a module that exports `then` is a thenable, and awaiting its `import()` calls it.)
 */
export function after<T, R>(x: T | Promise<T>, f: (value: T) => R): R | Promise<Awaited<R>> {
  return x instanceof Promise ? (x.then(f) as Promise<Awaited<R>>) : f(x);
}

/**
 * The links matched for a request run as one, in order: Hono's `compose`, with the same rules
 * (a link's Response becomes `c.res` unless the context is already final; an Error thrown or
 * rejected by a link is answered by `onError` there, and the link before it goes on as if its
 * `next()` had succeeded; `next()` twice is an error; after the last link comes `last`), except
 * that a link which answers without a promise is not awaited.
 *
 * Hono's `compose` is an async function: with any middleware matched, every answer is a promise,
 * settled through several turns of the microtask queue, and node-server then writes it from the
 * microtask queue with a close listener attached; over HTTP one async middleware before a route
 * that answers at once costs about a fifth of the request's CPU time. Run as one link (see
 * `RecentPathsRouter`), a chain whose links all answer at once gives Hono, and node-server, a
 * Response rather than a promise.
 */
export function chain(links: readonly Link[], onError: ErrorHandler): Link {
  return (c, last) => {
    let index = -1;
    const dispatch = (i: number): Context | Promise<Context> => {
      if (i <= index) throw new Error("next() called multiple times");
      index = i;
      const link = i < links.length ? links[i] : i === links.length ? last : undefined;
      if (!link) return c;
      let isError = false;
      const settle = (res: unknown): Context => {
        if (res && (!c.finalized || isError)) c.res = res as Response;
        return c;
      };
      const fail = (err: unknown): Context | Promise<Context> => {
        if (!(err instanceof Error)) throw err;
        c.error = err;
        isError = true;
        return after(onError(err, c), settle);
      };
      let res: unknown;
      try {
        res = link(c, () => dispatch(i + 1));
      } catch (err) {
        return fail(err);
      }
      return res instanceof Promise ? res.then(settle, fail) : settle(res);
    };
    return after(dispatch(0), (done) => {
      if (!done.finalized) throw new Error("Context is not finalized. Did you forget to return a Response object or `await next()`?");
      return done.res;
    });
  };
}
