import { serializeList } from "structured-headers";
import type { RestWindowName, RestWindowReport } from "../domain/rate-limit.js";

/**
 * `RateLimit`: one sf-string member per window with `r` (remaining) and `t` (seconds to reset),
 * e.g. `"minute";r=59;t=12, "hour";r=2999;t=1812, "day";r=49999;t=45012` (RFC 9651 list).
 */
export function rateLimitHeader(windows: readonly RestWindowReport[]): string {
  return serializeList(windows.map((w) => [w.name, new Map([["r", w.remaining], ["t", w.resetSeconds]])]));
}

/** `RateLimit-Policy`: the same members with `q` (quota) and `w` (window seconds). */
export function rateLimitPolicyHeader(policy: ReadonlyArray<{ name: RestWindowName; quota: number; windowSeconds: number }>): string {
  return serializeList(policy.map((w) => [w.name, new Map([["q", w.quota], ["w", w.windowSeconds]])]));
}
