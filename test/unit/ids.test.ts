import { describe, expect, it } from "vitest";
import { newJobId } from "../../src/domain/ids.js";

describe("job ids", () => {
  it("look like the service's, never repeat, and sort in the order they were made", () => {
    const start = Date.UTC(2030, 0, 1);
    const ids = Array.from({ length: 20_000 }, (_, i) => newJobId("run", start + Math.floor(i / 7)));
    for (const id of ids.slice(0, 50)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-u1$/);
    expect(newJobId("runsync", start + 20_000)).toMatch(/^sync-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-u1$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]!.slice(0, 13).replace("-", "")).toBe(start.toString(16).padStart(12, "0"));
  });

  it("keep growing when time stands still (the manual clock), past 65,536 ids in one ms, and when it steps back", () => {
    const at = Date.UTC(2040, 0, 1);
    const ids = Array.from({ length: 70_000 }, () => newJobId("run", at));
    ids.push(newJobId("run", Date.UTC(2039, 0, 1)), newJobId("run", at));
    const prefixes = ids.map((id) => id.slice(0, 19));
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });
});
