import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { BodyBudget, BodyHold, readIncoming } from "../../src/http/body.js";

const request = () => new PassThrough() as unknown as IncomingMessage & PassThrough;

describe("readIncoming", () => {
  it("reads bodies with listeners shared by every request, and leaves none behind", async () => {
    const [a, b] = [request(), request()];
    const reads = [readIncoming(a, 1000), readIncoming(b, 1000)];
    const ours = (r: PassThrough) => ["data", "end", "error", "close"].map((e) => r.listeners(e).at(-1));
    expect(ours(a)).toEqual(ours(b));
    a.end('{"input":');
    b.write("{");
    b.end("}");
    a.destroy();
    expect(await reads[1]).toBe("{}");
    await expect(reads[0]).resolves.toBe('{"input":');
    for (const r of [a, b]) for (const e of ["data", "end"]) expect(r.listeners(e)).toEqual([]);
  });

  it("refuses a body past its limit and gives back what it held of the budget", async () => {
    const budget = new BodyBudget(10_000);
    const hold = new BodyHold(budget);
    const r = request();
    const read = readIncoming(r, 10, hold);
    r.write("12345");
    expect(budget.inUse).toBe(5);
    r.write("678901");
    await expect(read).rejects.toThrow(/exceeds the limit of 10 bytes/);
    expect(budget.inUse).toBe(0);
  });

  it("refuses a body cut short", async () => {
    const r = request();
    const read = readIncoming(r, 100);
    r.write("{");
    r.destroy();
    await expect(read).rejects.toThrow(/closed the connection before sending the whole body/);
  });
});
