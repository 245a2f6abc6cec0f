import type { VirtualClock } from "../../../domain/clock.js";
import { clockDate, clockTime, isoTime } from "../format.js";

/** The clock card's live part: now, mode and pending timers. The buttons live in the card header. */
export function ClockBody({ clock }: { clock: VirtualClock }) {
  const now = clock.now();
  return (
    <div class="clock-body">
      <time id="clock-now" datetime={isoTime(now)} data-now={String(now)} data-mode={clock.mode} data-speed={String(clock.speed)}>
        <span class="clock-date">{clockDate(now)}</span> <span class="clock-time">{clockTime(now)}</span>
      </time>
      <span class="clock-meta">
        <span class={`mode mode-${clock.mode}`} title={clock.mode === "auto" ? "follows the wall, and skips to the next timer whenever something waits on virtual time and nothing runs on real time" : undefined}>
          {clock.mode === "manual" ? "manual" : `${clock.mode} ×${clock.speed}`}
        </span>
        <span class="muted"> · {clock.pending()} timer{clock.pending() === 1 ? "" : "s"} pending</span>
      </span>
    </div>
  );
}
