// A handler's context taken apart, as a handler may write it: `sleep`, `progress` and `now` work
// as functions of their own, bound to the job's run, and each read gives the same function.
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator, type HandlerContext } from "../../src/index.js";

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("a handler's context", () => {
  it("gives sleep, progress and now as functions a handler may take apart", async () => {
    const seen: { same?: boolean } = {};
    const handler = async (_input: Record<string, unknown>, ctx: HandlerContext) => {
      seen.same = ctx.sleep === ctx.sleep && ctx.progress === ctx.progress;
      const { sleep, progress, now } = ctx;
      const from = now();
      progress({ step: "halfway" });
      await sleep(500);
      return { slept: now() - from };
    };
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "parts", handler, coldStartMs: 0 }] } });
    const res = await fetch(`${emu.url}/v2/parts/run`, { method: "POST", headers: { authorization: "k", "content-type": "application/json" }, body: JSON.stringify({ input: {} }) });
    const body = (await res.json()) as { id: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    const { id } = body;
    const running = await fetch(`${emu.url}/v2/parts/status/${id}`, { headers: { authorization: "k" } }).then((r) => r.json());
    expect(running).toMatchObject({ status: "IN_PROGRESS", output: { step: "halfway" } });
    expect(await emu.waitForJob("parts", id, "COMPLETED")).toMatchObject({ output: { slept: 500 }, executionTime: 500 });
    expect(seen.same).toBe(true);
  });
});
