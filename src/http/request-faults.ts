import { EmulatorError } from "../domain/errors.js";
import { REQUEST_FAULTS, type FaultRule, type FaultRules } from "../domain/faults.js";
import type { Logger } from "../domain/logger.js";
import type { Exchange } from "./gate.js";
import { statusTitle } from "./problem.js";
import type { RouteInfo } from "./route-info.js";

/**
 * Request-level fault injection on a service route: answers with an injected status (thrown),
 * delays the answer (wall time), or drops the connection. Rules are matched by endpoint and
 * operation. Undefined: no rule fired and the request goes on at once (no promise: this runs on
 * every request); otherwise a promise of whether the connection was dropped, once a delay is over.
 */
export function requestFault(x: Exchange, faults: FaultRules, log: Logger, info: RouteInfo): Promise<boolean> | undefined {
  const rule = faults.fire(REQUEST_FAULTS, { endpoint: info.endpoint, operation: info.operation });
  return rule ? fired(x, rule, log) : undefined;
}

async function fired(x: Exchange, rule: FaultRule, log: Logger): Promise<boolean> {
  const what = `${x.method} ${x.path}`;
  const f = rule.fault;
  if (f.type === "latency") {
    log.warn(`fault ${rule.id} fired: ${f.ms} ms of latency on ${what}`);
    await new Promise((r) => setTimeout(r, f.ms));
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
