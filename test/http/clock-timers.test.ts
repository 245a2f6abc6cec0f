import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

// `/_emulator/clock`'s pendingTimers counts the timers that will act when due. A simulated worker's
// idle timer is kept armed while it runs a job (none is set or cancelled per job), and does nothing
// if it fires then: it is not counted, so the count does not move when it fires.

let e: InProcess;
afterEach(() => e?.close());

const pendingTimers = async () => (await e.get<{ pendingTimers: number }>("/_emulator/clock")).body.pendingTimers;

describe("pendingTimers", () => {
  it("leaves out a running worker's idle timer, kept armed through its job: its firing then changes nothing", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "ep", handler: "scripted", workersMin: 0, workersMax: 1, coldStartMs: 0, idleTimeout: 5 }] } });
    // The worker's first job: its idle timer, armed as it started, stays armed while it runs.
    expect((await e.post("/v2/ep/run", { input: { sleepMs: 60_000 } })).status).toBe(200);
    await e.advance(0);
    expect((await e.get("/v2/ep/health")).body.workers).toMatchObject({ running: 1 });
    const clockTimers = e.core.clock.pending();
    const reported = await pendingTimers();
    expect(reported).toBe(clockTimers - 1);
    // Past idleTimeout, the job still running: the kept timer fires and does nothing; the count stays.
    await e.advance(6_000);
    expect(e.core.clock.pending()).toBe(clockTimers - 1);
    expect(await pendingTimers()).toBe(reported);
    // The job ends: the worker is idle, its idle timer counted (it will scale the worker down).
    await e.advance(54_000);
    expect((await e.get("/v2/ep/health")).body.workers).toMatchObject({ idle: 1, running: 0 });
    const idle = await pendingTimers();
    await e.advance(5_000);
    expect((await e.get("/v2/ep/health")).body.workers).toMatchObject({ idle: 0, running: 0 });
    expect(await pendingTimers()).toBe(idle - 1);
  });
});
