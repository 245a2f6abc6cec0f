// A client that polls with a sleep of its own, given minipod's clock for that sleep: its polling
// skips ahead with the job it polls. Counted in sleeps and virtual time, never wall time.
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { minipodClock } from "../../src/vitest.js";

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const config = { endpoints: [{ id: "work", handler: "scripted", workersMin: 1, coldStartMs: 0 }] };

/** A client as users write them: `/run`, then `/status` and a 1 s sleep until the job ends; the sleep injectable. */
async function runAndPoll(base: string, input: object, sleep: (ms: number) => Promise<void>) {
  const auth = { authorization: "k" };
  const { id } = (await (await fetch(`${base}/v2/work/run`, { method: "POST", headers: auth, body: JSON.stringify({ input }) })).json()) as { id: string };
  let sleeps = 0;
  for (;;) {
    const job = (await (await fetch(`${base}/v2/work/status/${id}`, { headers: auth })).json()) as { status: string; executionTime?: number };
    if (!["IN_QUEUE", "IN_PROGRESS"].includes(job.status)) return { job, sleeps };
    await sleep(1000);
    sleeps++;
  }
}

describe("a polling client on minipod's clock", () => {
  it("polls a 10 s job to its end in ten sleeps of virtual time, none of them real (minipodClock)", async () => {
    emu = await createEmulator({ config });
    const clock = minipodClock(emu.url);
    const realStart = performance.now();
    const before = await clock.now();
    const { job, sleeps } = await runAndPoll(emu.url, { sleepMs: 10_000, output: "done" }, clock.sleep);
    expect(job).toMatchObject({ status: "COMPLETED", output: "done", executionTime: 10_000 });
    expect(sleeps).toBe(10);
    const elapsed = (await clock.now()) - before;
    const real = performance.now() - realStart;
    // The auto clock runs on with the wall between its skips: what passed is the ten seconds the
    // sleeps skipped plus the real time the calls took, however busy the machine, and no more.
    expect(real).toBeLessThan(10_000);
    expect(elapsed).toBeGreaterThanOrEqual(10_000);
    expect(elapsed).toBeLessThanOrEqual(10_000 + Math.ceil(real) + 2);
  });

  it("gives the same to a client in the test's process through emulator.clock.sleep, on the manual clock too", async () => {
    emu = await createEmulator({ config, clock: "manual" });
    const start = emu.clock.now();
    const { job, sleeps } = await runAndPoll(emu.url, { sleepMs: 10_000 }, async (ms) => void (await emu!.clock.sleep(ms)));
    expect(job).toMatchObject({ status: "COMPLETED", executionTime: 10_000 });
    expect(sleeps).toBe(10);
    expect(emu.clock.now() - start).toBe(10_000);
  });

  it("refuses a sleep that is not a number of ms, with 400 naming it", async () => {
    emu = await createEmulator({ config });
    const sleep = (body: unknown) => fetch(`${emu!.url}/_emulator/clock/sleep`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    for (const body of [{ ms: -1 }, { ms: "1000" }, { ms: 1000, extra: 1 }, {}, { ms: 86_400_001 }]) {
      const res = await sleep(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { errors: string[] }).errors.join(" ")).toMatch(/\$(\.ms)?:/);
    }
    const ok = await sleep({ ms: 0 });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ mode: "auto", waiting: 0 });
  });
});
