import type { WallTime } from "./wall.js";
import type { ExternalWorker } from "./external-workers.js";
import { HeldPolls } from "./held-polls.js";
import type { Leaving } from "./leaving.js";

/**
 * Each worker's stop channel (job-stop): the ids of its jobs minipod ended while it ran them
 * (cancel, execution timeout, ttl), kept until its next poll, or handed at once to a poll held
 * open for them.
 */
export class StopChannel {
  private readonly polls: HeldPolls<ExternalWorker, undefined, string[]>;
  private readonly pending = new Map<ExternalWorker, Set<string>>();

  constructor(wall: WallTime) {
    this.polls = new HeldPolls(wall, () => []);
  }

  /** The worker's pending stops; when there are none and `holdMs` > 0, held up to `holdMs` for some. */
  poll(w: ExternalWorker, holdMs: number, signal?: Leaving): Promise<string[]> {
    const now = this.take(w);
    if (now.length > 0 || holdMs <= 0) return Promise.resolve(now);
    return this.polls.wait(w, undefined, holdMs, signal);
  }

  send(w: ExternalWorker, jobIds: string[]): void {
    let set = this.pending.get(w);
    if (!set) this.pending.set(w, (set = new Set()));
    for (const id of jobIds) set.add(id);
    this.polls.offer(w, () => {
      const ids = this.take(w);
      return ids.length > 0 ? ids : undefined;
    });
  }

  /** Answers the held polls of `w` (or of every worker) with nothing. */
  release(w?: ExternalWorker): void {
    this.polls.release(w);
  }

  /** Drops what waits for `w` (or for every worker). */
  forget(w?: ExternalWorker): void {
    if (w === undefined) this.pending.clear();
    else this.pending.delete(w);
  }

  private take(w: ExternalWorker): string[] {
    const set = this.pending.get(w);
    if (!set) return [];
    this.pending.delete(w);
    return [...set];
  }
}
