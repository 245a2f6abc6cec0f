import { describe, expect, it } from "vitest";
import { nearest } from "../../src/domain/nearest.js";
import { configFor } from "../../src/compose/config.js";
import { parseFaultRule as parseWith } from "../../src/config/faults-schema.js";
import { LOAD_BALANCER_OPERATION, QUEUE_OPERATIONS, WORKER_OPERATIONS } from "../../src/domain/operations.js";
import { REST_V1_COLLECTIONS, REST_V2_COLLECTIONS } from "../../src/services/index.js";
import { inProcess } from "../support/in-process.js";

// The rules of an emulator built with the list of services.
const FAULT_OPERATIONS = configFor().faultRuleSchema.shape.operation.unwrap().options;
const parseFaultRule = (rule: unknown) => parseWith(configFor().faultRuleSchema, rule);

const thrown = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error("no error");
};

describe("names in fault rules are checked against what exists", () => {
  it("the operations are exactly the queue's, the worker routes', the load-balancing endpoints' and the REST collections", () => {
    expect(new Set(FAULT_OPERATIONS)).toEqual(new Set([...QUEUE_OPERATIONS, ...WORKER_OPERATIONS, LOAD_BALANCER_OPERATION, ...REST_V1_COLLECTIONS, ...REST_V2_COLLECTIONS]));
  });

  it("a typo of an operation is refused with the nearest name and the valid ones", () => {
    const e = thrown(() => parseFaultRule({ operation: "runn", fault: { type: "reset" } }));
    expect(e.message).toMatch(/operation: unknown operation "runn": did you mean "run"\? Valid: run, runsync, status/);
    expect(thrown(() => parseFaultRule({ operation: "stauts", fault: { type: "reset" } })).message).toMatch(/did you mean "status"\?/);
    // Far from every name: no guess, the list only.
    const far = thrown(() => parseFaultRule({ operation: "completely-else", fault: { type: "reset" } })).message;
    expect(far).toMatch(/unknown operation "completely-else" Valid:/);
    expect(parseFaultRule({ operation: "network-volumes", fault: { type: "reset" } }).operation).toBe("network-volumes");
  });

  it("a typo of a fault type is refused the same way", () => {
    expect(thrown(() => parseFaultRule({ fault: { type: "latncy", ms: 5 } })).message).toMatch(
      /unknown fault type "latncy": did you mean "latency"\? Valid: http, latency, reset, worker-crash, timeout, no-workers/,
    );
    expect(thrown(() => parseFaultRule({ fault: { ms: 5 } })).message).toMatch(/a fault needs a "type": one of http, latency/);
  });

  it("nearest: a typo within a third of the name's length, else nothing", () => {
    expect(nearest("helth", ["health", "run"])).toBe("health");
    expect(nearest("RUN", ["run"])).toBe("run");
    expect(nearest("xyz", ["health", "run"])).toBeUndefined();
  });

  it("the control API and the fixture refuse them with 400 / a thrown error", async () => {
    const e = await inProcess({ config: { endpoints: [{ id: "q", handler: "echo" }] } });
    try {
      const res = await e.post("/_emulator/faults", { operation: "runn", fault: { type: "http", status: 503 } });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/did you mean "run"\?/);
    } finally {
      await e.close();
    }
  });
});

// Checked by `npm test`'s tsc: the @ts-expect-error lines fail it if they stop being errors.
export function typedNames(e: import("../../src/index.js").Emulator): void {
  // @ts-expect-error a typo of an operation is a type error, not only a runtime one
  e.faults.add({ operation: "runn", fault: { type: "reset" } });
  // @ts-expect-error so is a typo of a fault type
  e.faults.add({ operation: "run", fault: { type: "resett" } });
  e.faults.add({ operation: "network-volumes", fault: { type: "reset" } });
}
