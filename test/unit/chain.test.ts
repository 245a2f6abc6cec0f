import { Hono, type Context, type ErrorHandler } from "hono";
import { describe, expect, it } from "vitest";
import { after, chain, type Link } from "../../src/http/chain.js";
import { RecentPathsRouter } from "../../src/http/router.js";

/** A Hono app whose matched handlers run as one link, as minipod's app runs them. */
function linkedApp(onError: ErrorHandler = (err, c) => c.text(`onError: ${err.message}`, 500)) {
  const router = new RecentPathsRouter<any>((matched) => [chain(matched.map(([h]: [Link]) => h), onError), matched[matched.length - 1][1]]);
  const app = new Hono({ router });
  app.onError(onError);
  return app;
}

const order: string[] = [];
/** A middleware that answers without a promise when `next()` does. */
const sync =
  (name: string): Link =>
  (c, next) => {
    order.push(`${name} in`);
    return after(next(), () => {
      order.push(`${name} out`);
    });
  };

describe("a request's handlers run as one link", () => {
  it("answers without a promise when no link waits, in Hono's order", () => {
    order.length = 0;
    const app = linkedApp();
    app.use(sync("a") as never);
    app.use("/x/*", sync("b") as never);
    app.get("/x/:id", (c) => c.json({ id: c.req.param("id") }));
    const res = app.fetch(new Request("http://h/x/7"));
    expect(res).toBeInstanceOf(Response);
    expect(order).toEqual(["a in", "b in", "b out", "a out"]);
    return expect((res as Response).json()).resolves.toEqual({ id: "7" });
  });

  it("waits for a link that waits, and answers as Hono's compose would", async () => {
    const plain = new Hono();
    const linked = linkedApp();
    for (const app of [plain, linked]) {
      app.use(async (c, next) => {
        await next();
        c.header("x-after", "yes");
      });
      app.get("/slow", async (c) => {
        await new Promise((r) => setImmediate(r));
        return c.text("done");
      });
    }
    const res = linked.fetch(new Request("http://h/slow"));
    expect(res).toBeInstanceOf(Promise);
    const [a, b] = await Promise.all([plain.request("/slow"), res]);
    expect([b.status, b.headers.get("x-after"), await b.text()]).toEqual([a.status, a.headers.get("x-after"), await a.text()]);
  });

  it("answers an error where it was thrown, and the links before go on, synchronously or not", async () => {
    const seen: string[] = [];
    const app = linkedApp((err, c) => c.text(`handled: ${err.message}`, 418));
    app.use(((c: Context, next: () => unknown) =>
      after(next(), () => {
        seen.push(`status ${c.res.status}`);
      })) as never);
    app.get("/throws", () => {
      throw new Error("sync boom");
    });
    app.get("/rejects", async () => {
      throw new Error("async boom");
    });
    const thrown = app.fetch(new Request("http://h/throws")) as Response;
    expect(thrown).toBeInstanceOf(Response);
    expect([thrown.status, await thrown.text()]).toEqual([418, "handled: sync boom"]);
    const rejected = await app.fetch(new Request("http://h/rejects"));
    expect([rejected.status, await rejected.text()]).toEqual([418, "handled: async boom"]);
    expect(seen).toEqual(["status 418", "status 418"]);
  });

  it("passes on to Hono's not-found answer after the last link, and refuses next() twice", async () => {
    const app = linkedApp();
    app.use(sync("only") as never);
    app.get("/twice", ((_c: Context, next: () => unknown) => {
      next();
      next();
    }) as never);
    const missing = await app.fetch(new Request("http://h/nowhere"));
    expect(missing.status).toBe(404);
    const twice = await app.fetch(new Request("http://h/twice"));
    expect([twice.status, await twice.text()]).toEqual([500, "onError: next() called multiple times"]);
  });

  it("refuses a chain that ends without an answer", async () => {
    const app = linkedApp();
    app.use((() => undefined) as never);
    app.get("/", (c) => c.text("never reached"));
    const res = await app.fetch(new Request("http://h/"));
    expect([res.status, await res.text()]).toEqual([500, expect.stringContaining("onError: Context is not finalized")]);
  });
});
