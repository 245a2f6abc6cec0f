import type { JobStore } from "../../domain/ports.js";

/**
 * How many requests of each running batch are still open (queued or running), so that the end of
 * a batch is seen at the finish of its last request without counting its jobs at every finish.
 * A cache of what the jobs table says: read from it the first time a batch is asked about, then
 * moved by each change of its jobs, and dropped when the database changes under it.
 */
export class BatchProgress {
  private readonly open = new Map<string, number>();

  constructor(private readonly jobs: Pick<JobStore, "countByBatch">) {}

  /** Requests of the batch not yet final. */
  remaining(batchId: string): number {
    return this.open.get(batchId) ?? this.load(batchId);
  }

  /**
   * One request of the batch opened (+1: back to the queue) or closed (-1: final). A batch not
   * counted yet is read now, and the store already has this change.
   */
  moved(batchId: string, delta: number): void {
    const n = this.open.get(batchId);
    if (n === undefined) this.load(batchId);
    else this.open.set(batchId, n + delta);
  }

  forget(batchId: string): void {
    this.open.delete(batchId);
  }

  clear(): void {
    this.open.clear();
  }

  private load(batchId: string): number {
    const c = this.jobs.countByBatch(batchId);
    const n = c.IN_QUEUE + c.IN_PROGRESS;
    this.open.set(batchId, n);
    return n;
  }
}
