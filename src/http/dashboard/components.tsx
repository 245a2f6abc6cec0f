import type { Child } from "hono/jsx";
import { clockTime, dateTime, isoTime } from "./format.js";

/** A job status as a coloured badge (`IN_QUEUE` reads "in queue"). */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge s-${status.toLowerCase().replace(/_/g, "-")}`}>{status.replace(/_/g, " ").toLowerCase()}</span>;
}

/** A virtual time (with its date when `withDate`), its full ISO value as tooltip. */
export function Time({ ms, withDate = false }: { ms: number | undefined; withDate?: boolean }) {
  if (ms === undefined) return <span class="muted">–</span>;
  return (
    <time datetime={isoTime(ms)} title={isoTime(ms)}>
      {withDate ? dateTime(ms) : clockTime(ms)}
    </time>
  );
}

/** What a panel shows when its control route is missing or failed. */
export function Unavailable({ what, reason }: { what: string; reason: string }) {
  return (
    <p class="unavailable">
      {what}: <strong>not available</strong>
      {reason === "not available in this build" ? " in this build." : ` (${reason}).`}
    </p>
  );
}

/** A quiet line for an empty list. */
export function Empty({ children }: { children: Child }) {
  return <p class="empty">{children}</p>;
}
