import runpodSdk from "runpod-sdk";
import { describe, expect, it } from "vitest";
import { createEmulator } from "../../src/index.js";
import { startCli } from "../support/cli.js";

describe("createEmulator", () => {
  it("serves on 127.0.0.1 and a free port, with a manual clock and handler functions", async () => {
    const emu = await createEmulator({
      port: 0,
      clock: "manual",
      config: { endpoints: [{ id: "double", handler: "double", workersMin: 1 }] },
      handlers: { double: async (input, ctx) => { await ctx.sleep(1000); return { n: Number(input.n) * 2 }; } },
    });
    try {
      expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const ep = runpodSdk("k", { baseUrl: `${emu.url}/v2` }).endpoint("double")!;
      const { id } = await ep.run({ input: { n: 21 } });
      const t0 = emu.clock.now();
      await emu.clock.advance(1000);
      expect(emu.clock.now() - t0).toBe(1000);
      expect(await ep.status(id)).toMatchObject({ status: "COMPLETED", output: { n: 42 } });
      expect(emu.endpoints().map((e) => e.id)).toEqual(["double"]);
    } finally {
      await emu.close();
    }
  });

  it("runs several isolated emulators in one process, and reset empties jobs", async () => {
    const config = { endpoints: [{ id: "echo", workersMin: 0, workersMax: 0 }] };
    const [a, b] = await Promise.all([createEmulator({ clock: "manual", config }), createEmulator({ clock: "manual", config })]);
    try {
      const sa = runpodSdk("k", { baseUrl: `${a.url}/v2` }).endpoint("echo")!;
      const sb = runpodSdk("k", { baseUrl: `${b.url}/v2` }).endpoint("echo")!;
      await sa.run({ input: {} });
      await sa.run({ input: {} });
      await a.clock.advance(5000);
      expect((await sa.health()).jobs.inQueue).toBe(2);
      expect((await sb.health()).jobs.inQueue).toBe(0);
      expect(b.clock.now()).toBeLessThan(a.clock.now());
      await a.reset();
      expect((await sa.health()).jobs.inQueue).toBe(0);
      const res = await fetch(`${a.url}/_emulator/reset`, { method: "POST", headers: { "content-type": "application/json" } });
      expect(await res.json()).toEqual({ status: "reset" });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("answers a request held on the manual clock when the emulator closes", async () => {
    const emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "q", workersMax: 0 }] } });
    const { id } = (await (await fetch(`${emu.url}/v2/q/run`, { method: "POST", headers: { authorization: "k" }, body: JSON.stringify({ input: {} }) })).json()) as { id: string };
    const timers = async () => ((await (await fetch(`${emu.url}/_emulator/clock`)).json()) as { pendingTimers: number }).pendingTimers;
    const before = await timers();
    const held = fetch(`${emu.url}/v2/q/status-sync/${id}?wait=300000`, { headers: { authorization: "k" } });
    while ((await timers()) === before) await new Promise((r) => setImmediate(r)); // held: its wait is a timer
    await emu.close();
    expect([200, 404]).toContain((await held).status);
  });

  it("reports a port in use clearly, with the error's code and in the words of the API (the CLI's in the CLI)", async () => {
    const first = await createEmulator({});
    try {
      const error = (await createEmulator({ port: first.port }).catch((e: unknown) => e)) as Error & { code?: string };
      expect(error).toBeInstanceOf(Error);
      expect(error.code).toBe("EADDRINUSE");
      expect(error.message).toBe(`port ${first.port} of 127.0.0.1 is already in use; choose another port, or 0 for a free one`);
      expect(error.message).not.toContain("--");
      const cli = await startCli(["--port", String(first.port)], {}, { port: false }).then(
        (c) => c.stop().then(() => ""),
        (e: Error) => e.message,
      );
      expect(cli).toContain(`minipod: port ${first.port} of 127.0.0.1 is already in use; choose another with --port, or 0 for a free one`);
    } finally {
      await first.close();
    }
  });
});
