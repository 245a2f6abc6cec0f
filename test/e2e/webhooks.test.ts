import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { startReceiver } from "../support/receiver.js";

let emu: Emulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
afterEach(async () => {
  await emu?.close();
  await receiver?.close();
});

const boot = () =>
  createEmulator({ clock: "manual", config: { endpoints: [{ id: "ep", handler: "scripted", workersMin: 1, workersMax: 1 }] } }).then((x) => (emu = x));
const submit = async (body: Record<string, unknown>) => {
  const res = await fetch(`${emu.url}/v2/ep/run`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: JSON.stringify(body) });
  return ((await res.json()) as { id: string }).id;
};

describe("webhooks", () => {
  it("POSTs the status envelope with input and webhook when a job completes", async () => {
    receiver = await startReceiver();
    await boot();
    const id = await submit({ input: { x: 1, output: { y: 2 } }, webhook: receiver.url, s3Config: { accessId: "a", accessSecret: "TOPSECRET", bucketName: "b", endpointUrl: "http://s3.local" } });
    await emu.clock.advance(0);
    expect(receiver.calls).toHaveLength(1);
    expect(receiver.calls[0]).toMatchObject({ method: "POST", path: "/hook" });
    expect(receiver.calls[0]!.body).toEqual({
      id,
      status: "COMPLETED",
      delayTime: 0,
      executionTime: 0,
      output: { y: 2 },
      workerId: expect.any(String),
      input: { x: 1, output: { y: 2 } },
      webhook: receiver.url,
    });
    expect(JSON.stringify(receiver.calls)).not.toContain("TOPSECRET");
    expect(emu.webhooks(id)).toEqual([{ jobId: id, endpointId: "ep", url: receiver.url, attempt: 1, status: 200, at: emu.clock.now() }]);
  });

  it("is sent for FAILED, CANCELLED and TIMED_OUT jobs too", async () => {
    receiver = await startReceiver();
    await boot();
    const failed = await submit({ input: { fail: "nope" }, webhook: receiver.url });
    await emu.clock.advance(0);
    const timedOut = await submit({ input: { sleepMs: 60_000 }, webhook: receiver.url, policy: { executionTimeout: 5000 } });
    const cancelled = await submit({ input: {}, webhook: receiver.url });
    await fetch(`${emu.url}/v2/ep/cancel/${cancelled}`, { method: "POST", headers: { authorization: "k" } });
    await emu.clock.advance(5000);
    await emu.runUntilIdle();
    const byId = Object.fromEntries(receiver.calls.map((c) => [c.body.id, c.body]));
    expect(byId[failed]).toMatchObject({ status: "FAILED", error: "nope" });
    expect(byId[cancelled]).toMatchObject({ status: "CANCELLED" });
    expect(byId[timedOut]).toMatchObject({ status: "TIMED_OUT" });
  });

  it("retries a non-200 answer 2 more times, 10 s apart on the virtual clock, then gives up", async () => {
    receiver = await startReceiver([500, 503, 404]);
    await boot();
    const id = await submit({ input: {}, webhook: receiver.url });
    const t0 = emu.clock.now();
    await emu.clock.advance(0);
    expect(receiver.calls).toHaveLength(1);
    await emu.clock.advance(9_999);
    expect(receiver.calls).toHaveLength(1);
    await emu.clock.advance(1);
    expect(receiver.calls).toHaveLength(2);
    await emu.clock.advance(10_000);
    expect(receiver.calls).toHaveLength(3);
    await emu.clock.advance(60_000);
    expect(receiver.calls).toHaveLength(3);
    expect(emu.webhooks(id).map((d) => [d.attempt, d.status, d.at - t0])).toEqual([
      [1, 500, 0],
      [2, 503, 10_000],
      [3, 404, 20_000],
    ]);
  });

  it("stops retrying once the receiver answers 200, and records unreachable receivers", async () => {
    const gone = await startReceiver();
    await gone.close(); // its port now refuses connections
    receiver = await startReceiver([500]);
    await boot();
    const ok = await submit({ input: {}, webhook: receiver.url });
    const dead = await submit({ input: {}, webhook: gone.url });
    await emu.runUntilIdle();
    expect(emu.webhooks(ok).map((d) => d.status)).toEqual([500, 200]);
    const deadAttempts = emu.webhooks(dead);
    expect(deadAttempts.map((d) => d.attempt)).toEqual([1, 2, 3]);
    expect(deadAttempts[0]!.error).toMatch(/ECONNREFUSED|refused/i);
    const listed = (await (await fetch(`${emu.url}/_emulator/webhooks`)).json()) as { count: number };
    expect(listed.count).toBe(5);
  });
});
