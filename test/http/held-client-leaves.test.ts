import { connect } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { FakeWall } from "../support/fake-wall.js";

// A `/runsync` is held until its job ends or its wait runs out. A client that leaves before that
// (its connection closed) releases what held it at once: the held request's timer is cancelled,
// and nothing is left waiting, whether the fast entry or the app (a fault rule armed) held it.

const CONFIG = { auth: { keys: [{ key: "k" }] }, endpoints: [{ id: "ext", handler: "external" as const }] };
const KEY = { authorization: "Bearer k" };
const NOWHERE = { endpoint: "elsewhere", fault: { type: "latency" as const, ms: 1 } };

describe("a held /runsync whose client leaves", () => {
  let emu: Emulator;
  const wall = new FakeWall();
  beforeAll(async () => {
    emu = await createEmulator({ port: 0, clock: { mode: "manual", wall }, config: CONFIG, log: () => {} });
  });
  afterEach(() => emu.faults.clear());
  afterAll(async () => {
    await emu.close();
  });

  const clock = async () => (await (await fetch(`${emu.url}/_emulator/clock`, { headers: KEY })).json()) as { pendingTimers: number };
  const inQueue = async () => ((await (await fetch(`${emu.url}/v2/ext/health`, { headers: KEY })).json()) as { jobs: { inQueue: number } }).jobs.inQueue;
  const turns = async (n = 20) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };

  for (const through of ["the fast entry", "the app"] as const) {
    it(`is released when its connection closes (${through})`, async () => {
      if (through === "the app") emu.faults.add(NOWHERE);
      const queued = await inQueue();
      const body = JSON.stringify({ input: { n: 1 } });
      const socket = connect(Number(new URL(emu.url).port), "127.0.0.1");
      await new Promise<void>((resolve) => socket.once("connect", resolve));
      socket.write(`POST /v2/ext/runsync HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      // Held once its job is queued: its wait is a timer of the clock.
      for (let i = 0; i < 50 && (await inQueue()) === queued; i++) await turns();
      expect(await inQueue()).toBe(queued + 1);
      const held = (await clock()).pendingTimers;
      socket.destroy();
      for (let i = 0; i < 50 && (await clock()).pendingTimers === held; i++) await turns();
      expect((await clock()).pendingTimers).toBe(held - 1);
    });
  }
});
