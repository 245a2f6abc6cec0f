import { EmulatorError } from "../domain/errors.js";
import { REQUEST_FAULTS, type FaultRule, type FaultRules } from "../domain/faults.js";
import type { Logger } from "../domain/logger.js";
import type { WallTime } from "../domain/wall.js";
import { statusTitle } from "./problem.js";
import type { RouteInfo } from "./route-info.js";

/** What a request fault reads of a request, and does to it (the gate's `Exchange` is one). */
export interface FaultedRequest {
  readonly method: string;
  readonly path: string;
  /** Cuts the connection: false where there is none to cut (in process). */
  drop(): boolean;
}

/**
 * Request-level fault injection on a service route: answers with an injected status (thrown),
 * delays the answer (on `wall`, the clock's wall time, whose timers its `stop()` cancels), or drops
 * the connection. Rules are matched by endpoint and operation. Undefined: no rule fired and the
 * request goes on at once (no promise: this runs on every request); otherwise a promise of whether
 * the connection was dropped, once a delay is over.
 */
export function requestFault(x: FaultedRequest, faults: FaultRules, log: Logger, info: RouteInfo, wall: WallTime): Promise<boolean> | undefined {
  const rule = faults.fire(REQUEST_FAULTS, { endpoint: info.endpoint, operation: info.operation });
  return rule ? fired(x, rule, log, wall) : undefined;
}

async function fired(x: FaultedRequest, rule: FaultRule, log: Logger, wall: WallTime): Promise<boolean> {
  const what = `${x.method} ${x.path}`;
  const f = rule.fault;
  if (f.type === "latency") {
    log.warn(`fault ${rule.id} fired: ${f.ms} ms of latency on ${what}`);
    await new Promise<void>((resolve) => wall.after(f.ms, resolve));
    return false;
  }
  if (f.type === "http") {
    log.warn(`fault ${rule.id} fired: HTTP ${f.status} on ${what}`);
    throw new EmulatorError("INJECTED_FAULT", f.message ?? `injected fault ${rule.id}: ${statusTitle(f.status)}`, { status: f.status, retryAfter: f.retryAfter });
  }
  if (f.type === "reset") {
    log.warn(`fault ${rule.id} fired: connection reset on ${what}`);
    if (x.drop()) return true;
    // In-process requests (app.request) have no socket to drop.
    throw new EmulatorError("INJECTED_FAULT", `injected fault ${rule.id}: connection reset (no socket in-process)`, { status: 502 });
  }
  return false;
}
