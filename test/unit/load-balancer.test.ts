import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/domain/clock.js";
import type { EndpointSpec } from "../../src/domain/endpoint.js";
import { LoadBalancers, lbHandlerOf } from "../../src/domain/load-balancer/balancer.js";
import { parseAffinity, type LbRefusal } from "../../src/domain/load-balancer/types.js";
import { ProcessWall } from "../../src/compose/process-wall.js";

let ids = 0;
const spec = (o: Partial<EndpointSpec> = {}): EndpointSpec => ({
  id: "api",
  type: "LOAD_BALANCER",
  name: "api",
  handler: "external",
  workersMin: 0,
  workersMax: 2,
  idleTimeout: 5,
  coldStartMs: 1000,
  executionTimeoutMs: undefined,
  createdAt: 0,
  extra: { scalerType: "REQUEST_COUNT", scalerValue: 1 },
  ...o,
});
const balancers = () => {
  const clock = new VirtualClock({ mode: "manual", start: 0, wall: new ProcessWall(() => {}) });
  return { clock, lb: new LoadBalancers({ clock, newWorkerId: () => `w${++ids}` }) };
};
const target = { url: "http://127.0.0.1:1", healthUrl: "http://127.0.0.1:1/ping" };

describe("the load balancer, on the virtual clock", () => {
  it("reads X-Runpod-Worker-Id as the service's affinity modes", () => {
    expect(parseAffinity(undefined)).toEqual({ mode: "none" });
    expect(parseAffinity("  ")).toEqual({ mode: "none" });
    expect(parseAffinity("abc")).toEqual({ mode: "soft", workerId: "abc" });
    expect(parseAffinity("strict abc")).toEqual({ mode: "strict", workerId: "abc" });
    expect(parseAffinity("Strict-Resume abc")).toEqual({ mode: "strict-resume", workerId: "abc" });
    expect(parseAffinity("strict")).toEqual({ mode: "soft", workerId: "strict" });
  });

  it("names what answers an endpoint by its handler", () => {
    expect(lbHandlerOf("external")).toEqual({ kind: "process" });
    expect(lbHandlerOf({ type: "http", url: "http://127.0.0.1:8000/" })).toEqual({ kind: "url", url: "http://127.0.0.1:8000" });
    expect(lbHandlerOf("openai")).toEqual({ kind: "openai" });
    expect(lbHandlerOf("inline:api")).toEqual({ kind: "function", name: "inline:api" });
  });

  it("routes to a worker process only once its health says ready, and takes it out when unhealthy", async () => {
    const { clock, lb } = balancers();
    lb.attach(spec(), false);
    lb.register("api", "p1", target);
    let got: string | undefined;
    const pending = lb.acquire("api", { mode: "none" }).then((l) => ((got = l.worker.id), l));
    lb.health("api", "p1", "initializing");
    await clock.advance(10);
    expect(got).toBeUndefined();
    lb.health("api", "p1", "ready");
    const lease = await pending;
    expect(got).toBe("p1");
    expect(lease.worker.readyAt! - lease.worker.initializingAt!).toBe(10);
    lease.release();
    lb.health("api", "p1", "unhealthy");
    expect(lb.status("api")!.workers).toMatchObject({ ready: 0, unhealthy: 1 });
  });

  it("refuses a strict request pinned to a worker that goes away while it waits (404)", async () => {
    const { lb } = balancers();
    lb.attach(spec(), false);
    lb.register("api", "p1", target);
    lb.health("api", "p1", "ready");
    const busy = await lb.acquire("api", { mode: "none" });
    const pinned = lb.acquire("api", { mode: "strict", workerId: "p1" }).catch((e: LbRefusal) => e);
    lb.remove("api", "p1");
    expect(await pinned).toMatchObject({ status: 404, error: "affinity_worker_gone" });
    busy.release();
  });

  it("cuts a request at 5.5 minutes of processing, and not after it has ended", async () => {
    const { clock, lb } = balancers();
    lb.attach(spec({ handler: "echo", coldStartMs: 0, workersMin: 1 }), false);
    const fired: string[] = [];
    const a = await lb.acquire("api", { mode: "none" });
    a.onTimeout(() => fired.push("a"));
    await clock.advance(329_999);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual(["a"]);
    a.release();
    const b = await lb.acquire("api", { mode: "none" });
    b.onTimeout(() => fired.push("b"));
    b.release();
    await clock.advance(400_000);
    expect(fired).toEqual(["a"]);
  });
});
