import { describe, expect, it } from "vitest";
import { FaultRules, REQUEST_FAULTS } from "../../src/domain/faults.js";

const target = { endpoint: "ep", operation: "run" };

describe("fault rules", () => {
  it("fires `times` times after letting `after` matches through, then is spent", () => {
    const rules = new FaultRules(1);
    rules.add({ fault: { type: "http", status: 503 }, times: 2, after: 1 });
    const fired = Array.from({ length: 5 }, () => rules.fire(REQUEST_FAULTS, target) !== undefined);
    expect(fired).toEqual([false, true, true, false, false]);
    expect(rules.list()[0]).toMatchObject({ matched: 3, fired: 2, spent: true });
  });

  it("matches on endpoint and operation", () => {
    const rules = new FaultRules(1);
    rules.add({ endpoint: "ep", operation: "status", fault: { type: "http", status: 500 } });
    expect(rules.fire(REQUEST_FAULTS, target)).toBeUndefined();
    expect(rules.fire(REQUEST_FAULTS, { endpoint: "other", operation: "status" })).toBeUndefined();
    expect(rules.fire(REQUEST_FAULTS, { endpoint: "ep", operation: "status" })?.fault).toEqual({ type: "http", status: 500 });
  });

  it("draws probabilities from the seed: the same seed replays the same sequence", () => {
    const run = (seed: number) => {
      const rules = new FaultRules(seed);
      rules.add({ fault: { type: "http", status: 500 }, probability: 0.3 });
      return Array.from({ length: 200 }, () => (rules.fire(REQUEST_FAULTS, target) ? 1 : 0)).join("");
    };
    expect(run(42)).toBe(run(42));
    expect(run(42)).not.toBe(run(43));
    const hits = [...run(7)].filter((c) => c === "1").length;
    expect(hits).toBeGreaterThan(30);
    expect(hits).toBeLessThan(90);
  });

  it("reset puts the seed back", () => {
    const rules = new FaultRules(9);
    const draw = () => Array.from({ length: 50 }, () => (rules.fire(REQUEST_FAULTS, target) ? 1 : 0)).join("");
    rules.reset([{ fault: { type: "http", status: 500 }, probability: 0.5 }]);
    const first = draw();
    rules.reset([{ fault: { type: "http", status: 500 }, probability: 0.5 }]);
    expect(draw()).toBe(first);
    expect(rules.list()[0]!.id).toBe("fault-1");
  });

  it("refuses rules that cannot work", () => {
    const rules = new FaultRules(1);
    expect(() => rules.add({ fault: { type: "http", status: 200 } })).toThrow(/400\.\.599/);
    expect(() => rules.add({ operation: "run", fault: { type: "worker-crash" } })).toThrow(/acts on jobs/);
    expect(() => rules.add({ fault: { type: "reset" }, times: 0 })).toThrow(/times/);
  });
});
