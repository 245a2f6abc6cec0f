import { describe, expect, it } from "vitest";
import type { Job } from "../../src/domain/job.js";
import { HeldRows } from "../../src/store/held-rows.js";
import { queuedJob as job } from "../support/jobs.js";

const ids = (jobs: Iterable<Job>) => [...jobs].map((j) => j.id);
const id = (i: number) => `j${String(i).padStart(5, "0")}`;

describe("the rows held in memory, by generation", () => {
  it("finds each job by id across generations, in the order they came, and takes the oldest out first", () => {
    const rows = new HeldRows();
    for (let i = 0; i < 10_000; i++) rows.add(job(id(i)));
    expect(rows.size).toBe(10_000);
    const gens = (rows as unknown as { gens: Array<{ index: Map<string, number> | undefined }> }).gens;
    expect(gens.length).toBe(3); // 4,096 a generation
    // No map of ids is made for a generation until one of its ids is looked for.
    expect(gens.map((g) => g.index === undefined)).toEqual([true, true, true]);
    expect(rows.get(id(9_999))?.id).toBe(id(9_999));
    expect(gens.map((g) => g.index === undefined)).toEqual([true, true, false]);
    for (const i of [0, 4_095, 4_096, 9_999]) expect(rows.get(id(i))?.id).toBe(id(i));
    expect(rows.get("nope")).toBeUndefined();
    expect(rows.oldestSize()).toBe(4_096);
    // Part of a generation, then whole ones.
    expect(ids(rows.takeOldest(3))).toEqual([id(0), id(1), id(2)]);
    expect(rows.oldestSize()).toBe(4_093);
    const next = rows.takeOldest(5_000);
    expect(next.length).toBe(5_000);
    expect(next[0]!.id).toBe(id(3));
    expect(next[4_999]!.id).toBe(id(5_002));
    expect(rows.size).toBe(4_997);
    expect(rows.get(id(5_002))).toBeUndefined();
    expect(rows.get(id(5_003))?.id).toBe(id(5_003));
    expect(ids(rows.values())[0]).toBe(id(5_003));
  });

  it("reads one generation for an id, /run and /runsync ids alike (a runsync id is ordered after its sync-)", () => {
    const rows = new HeldRows();
    const at = (i: number) => `${(0x19ac0000000 + i).toString(16).padStart(12, "0")}`;
    // Ids as ids.ts makes them, the two kinds interleaved, 3 generations.
    const idOf = (i: number) => `${i % 2 ? "sync-" : ""}${at(i).slice(0, 8)}-${at(i).slice(8, 12)}-0000-abcd-0123456789ab-u1`;
    for (let i = 0; i < 12_000; i++) rows.add(job(idOf(i)));
    const gens = (rows as unknown as { gens: Array<{ rows: Map<string, unknown>; min: string; max: string }> }).gens;
    expect(gens.length).toBe(3);
    for (const i of [5, 6, 4_100, 11_999]) {
      const holding = gens.filter((g) => {
        const key = idOf(i).replace(/^sync-/, "");
        return key >= g.min && key <= g.max;
      });
      expect(holding.length).toBe(1);
      expect(rows.get(idOf(i))?.id).toBe(idOf(i));
    }
  });

  it("keeps no generation's places alive for the few jobs left in it: sparse generations join, in order", () => {
    const rows = new HeldRows();
    // 40 generations; all but one job of each leave (a queued job held long among many that expire).
    for (let i = 0; i < 40 * 4_096; i++) rows.add(job(id(i)));
    for (let i = 0; i < 40 * 4_096; i++) if (i % 4_096 !== 7) rows.delete(id(i));
    const gens = (rows as unknown as { gens: Array<{ jobs: unknown[] }> }).gens;
    expect(rows.size).toBe(40);
    expect(gens.length).toBe(1);
    expect(gens.reduce((n, g) => n + g.jobs.length, 0)).toBeLessThan(200);
    expect(ids(rows.values())).toEqual(Array.from({ length: 40 }, (_, g) => id(g * 4_096 + 7)));
    for (let g = 0; g < 40; g++) expect(rows.get(id(g * 4_096 + 7))?.id).toBe(id(g * 4_096 + 7));
    // New jobs still come after them.
    rows.add(job("zzz"));
    expect(ids(rows.values()).at(-1)).toBe("zzz");
  });

  it("keeps a changed job in its place, forgets a deleted one, and finds ids that do not come in order", () => {
    const rows = new HeldRows();
    // Batch request ids, in no order of their own.
    for (const k of ["m", "c", "x", "a"]) rows.add(job(k));
    const changed = { ...job("c"), status: "IN_PROGRESS" as const };
    expect(rows.replace(changed)?.status).toBe("IN_QUEUE");
    expect(rows.get("c")).toBe(changed);
    expect(ids(rows.values())).toEqual(["m", "c", "x", "a"]);
    expect(rows.delete("x")?.id).toBe("x");
    expect(rows.delete("x")).toBeUndefined();
    expect(rows.size).toBe(3);
    // Not held: added after the others.
    expect(rows.replace(job("z"))).toBeUndefined();
    expect(ids(rows.values())).toEqual(["m", "c", "a", "z"]);
    for (const k of ["m", "c", "a", "z"]) expect(rows.get(k)?.id).toBe(k);
    rows.clear();
    expect(rows.size).toBe(0);
    expect(rows.get("m")).toBeUndefined();
  });
});
