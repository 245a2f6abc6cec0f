/**
 * Worker processes that fetch jobs over HTTP (endpoints whose handler is "external"). A worker
 * exists for the emulator while it is seen: it counts in `/health` as running while it holds a
 * job and as idle otherwise, until it has not called for a while.
 */

/** A worker not heard from for this long (virtual ms) no longer counts in /health. */
export const EXTERNAL_WORKER_SEEN_MS = 60_000;

export const EXTERNAL_HANDLER = "external";

interface Seen {
  lastSeen: number;
}

export class ExternalWorkers {
  private readonly byEndpoint = new Map<string, Map<string, Seen>>();

  /** Notes that a worker called (job-take, job-done, ping). */
  seen(endpointId: string, workerId: string, now: number): void {
    let m = this.byEndpoint.get(endpointId);
    if (!m) this.byEndpoint.set(endpointId, (m = new Map()));
    m.set(workerId, { lastSeen: now });
  }

  /** Workers seen within the window, split by whether they hold a job (`busy` names those that do). */
  counts(endpointId: string, now: number, busy: ReadonlySet<string>): { idle: number; running: number } {
    const m = this.byEndpoint.get(endpointId);
    let idle = 0;
    let running = 0;
    for (const [id, s] of m ?? []) {
      if (busy.has(id)) running++;
      else if (now - s.lastSeen <= EXTERNAL_WORKER_SEEN_MS) idle++;
    }
    for (const id of busy) if (!m?.has(id)) running++;
    return { idle, running };
  }

  list(endpointId: string): Array<{ id: string; lastSeen: number }> {
    return [...(this.byEndpoint.get(endpointId) ?? [])].map(([id, s]) => ({ id, lastSeen: s.lastSeen }));
  }

  forget(endpointId?: string): void {
    if (endpointId === undefined) this.byEndpoint.clear();
    else this.byEndpoint.delete(endpointId);
  }
}
