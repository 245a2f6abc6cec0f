import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { SERVER_KEEP_ALIVE_MS } from "../../src/compose/emulator.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await createEmulator({ port: 0, clock: "manual", config: { endpoints: [{ id: "q", handler: "echo" }] } });
});
afterAll(() => emu?.close());

function get(agent: Agent, path: string): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(`${emu.url}${path}`, { agent, headers: { authorization: "Bearer k" } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("idle keep-alive connections", () => {
  it("stay open longer than the service's Python library keeps them in its pool (15 s)", () => {
    expect(SERVER_KEEP_ALIVE_MS).toBeGreaterThan(15_000);
  });

  it("are still open after 6 s of quiet, past Node's default of 5 s (wall time: a socket's idle timeout)", { timeout: 30_000 }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await get(agent, "/v2/q/health")).toEqual({ status: 200, reused: false });
      await new Promise((r) => setTimeout(r, 6_000));
      expect(await get(agent, "/v2/q/health")).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });
});
