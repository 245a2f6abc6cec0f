import { afterEach, describe, expect, it, vi } from "vitest";
import { newJobId } from "../../src/domain/ids.js";

describe("job ids", () => {
  afterEach(() => vi.restoreAllMocks());

  it("look like the service's, never repeat, and sort in the order they were made", () => {
    const ids = Array.from({ length: 20_000 }, () => newJobId("run"));
    for (const id of ids.slice(0, 50)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-u1$/);
    expect(newJobId("runsync")).toMatch(/^sync-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-u1$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("keep growing when the wall clock stands still or steps back, and past 65,536 ids in one ms", () => {
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.UTC(2040, 0, 1));
    const ids = Array.from({ length: 70_000 }, () => newJobId("run"));
    now.mockReturnValue(Date.UTC(2039, 0, 1));
    ids.push(newJobId("run"), newJobId("run"));
    const prefixes = ids.map((id) => id.slice(0, 19));
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });
});
