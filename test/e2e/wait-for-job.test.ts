import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await createEmulator({ port: 0, clock: "manual", config: { endpoints: [{ id: "q", handler: "echo", workersMin: 0, workersMax: 0 }] } });
});
afterAll(() => emu?.close());

describe("waitForJob", () => {
  it("says an id it never saw was never submitted there, not that it is gone", async () => {
    await expect(emu.waitForJob("q", "no-such-job", "COMPLETED")).rejects.toThrow(/no job no-such-job on endpoint q: it was never submitted there/);
  });

  it("says a job it watched that disappeared is gone (ttl, retention or purge)", async () => {
    const res = await fetch(`${emu.url}/v2/q/run`, { method: "POST", headers: { authorization: "Bearer k" }, body: JSON.stringify({ input: {}, policy: { ttl: 10_000 } }) });
    const { id } = (await res.json()) as { id: string };
    await expect(emu.waitForJob("q", id, "COMPLETED", 60_000)).rejects.toThrow(new RegExp(`job ${id} is gone \\(ttl, retention or purge\\)`));
  });
});
