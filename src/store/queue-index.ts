import type { Job } from "../domain/job.js";

/**
 * The queued jobs of one endpoint in queue order (by queueSeq), with how many of them may make
 * it scale (not lowPriority). Jobs mostly join at the end and leave from the front.
 */
export class QueueIndex {
  private seqs: number[] = [];
  private ids: string[] = [];
  /** Entries before `head` have left the queue (taking from the front moves no memory). */
  private head = 0;
  /** Each queued job's place, and the job itself when it was written since the queue was read. */
  private readonly entries = new Map<string, { seq: number; low: boolean; job: Job | undefined }>();
  demand = 0;

  first(): string | undefined {
    return this.head < this.ids.length ? this.ids[this.head] : undefined;
  }

  /** The job as last written, if it was written since the queue was read from the database. */
  jobOf(id: string): Job | undefined {
    return this.entries.get(id)?.job;
  }

  put(id: string, seq: number, low: boolean, job?: Job): void {
    const was = this.entries.get(id);
    if (was && was.seq === seq && was.low === low) {
      was.job = job;
      return;
    }
    if (was) this.remove(id);
    this.entries.set(id, { seq, low, job });
    if (!low) this.demand++;
    const n = this.seqs.length;
    if (n === this.head || this.seqs[n - 1]! < seq) {
      this.seqs.push(seq);
      this.ids.push(id);
      return;
    }
    const at = this.indexOf(seq);
    this.seqs.splice(at, 0, seq);
    this.ids.splice(at, 0, id);
  }

  remove(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    if (!e.low) this.demand--;
    const at = this.indexOf(e.seq);
    if (at === this.head) {
      this.head++;
      // What has left is dropped in one go once it is most of the arrays and more than 1,024
      // entries, empty or not: a queue emptied by every job (each /run taken at once by an idle
      // worker) makes no new arrays per job.
      if (this.head > 1024 && this.head * 2 > this.seqs.length) {
        this.seqs = this.seqs.slice(this.head);
        this.ids = this.ids.slice(this.head);
        this.head = 0;
      }
    } else {
      this.seqs.splice(at, 1);
      this.ids.splice(at, 1);
    }
  }

  /** The first position at or after `head` whose seq is not below `seq`. */
  private indexOf(seq: number): number {
    let lo = this.head;
    let hi = this.seqs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seqs[mid]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
