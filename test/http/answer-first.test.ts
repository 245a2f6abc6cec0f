import { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

// A request answered from node's request and response (a fast entry: /run, /status, /runsync and
// the worker routes) has its answer written before its journal entry and its log line are made,
// in the same turn: the client is woken by the answer, not after minipod's bookkeeping, and the
// journal still holds the entry before any other request is read.

const AUTH = { authorization: "Bearer test-key" };

describe("an answer leaves before the journal entry and the log line", () => {
  let emu: Emulator;
  const events: string[] = [];
  const end = ServerResponse.prototype.end;

  beforeAll(async () => {
    ServerResponse.prototype.end = function (this: ServerResponse, ...args: unknown[]) {
      events.push(`end ${this.req?.url ?? ""}`);
      return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as typeof end;
    emu = await createEmulator({
      port: 0,
      clock: "manual",
      config: { logLevel: "info", endpoints: [{ id: "echo", handler: "echo", workersMin: 1, workersMax: 1, coldStartMs: 0 }] },
      log: (line) => {
        if (line.includes("/v2/echo/")) events.push(`log ${line.includes("POST") ? "POST" : "GET"} (journal entries: ${emu.requests().count})`);
      },
    });
  });
  afterAll(async () => {
    ServerResponse.prototype.end = end;
    await emu?.close();
  });

  it("POST /run and GET /status: the answer is ended first, then the entry is recorded and the line logged", async () => {
    events.length = 0;
    const before = emu.requests().count;
    const run = await fetch(`${emu.url}/v2/echo/run`, { method: "POST", headers: { ...AUTH, "content-type": "application/json" }, body: JSON.stringify({ input: { n: 1 } }) });
    const { id } = (await run.json()) as { id: string };
    // The client has its answer: the journal holds the entry already.
    expect(run.status).toBe(200);
    expect(emu.requests().count).toBe(before + 1);
    const status = await fetch(`${emu.url}/v2/echo/status/${id}`, { headers: AUTH });
    expect(status.status).toBe(200);
    expect(events).toEqual([
      "end /v2/echo/run",
      `log POST (journal entries: ${before + 1})`,
      `end /v2/echo/status/${id}`,
      `log GET (journal entries: ${before + 2})`,
    ]);
  });
});
