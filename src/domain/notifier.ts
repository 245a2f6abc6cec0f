import type { Job, JobStatus } from "./job.js";

/** What happened to a job: a transition, a new stream chunk, a progress update, or its deletion. */
export interface JobChange {
  id: string;
  endpointId: string;
  /** The job after the change; `undefined` when it was deleted. */
  job: Job | undefined;
  from: JobStatus | undefined;
  /** On a deletion by `Transitions.delete`, the job as it was. */
  deleted?: Job | undefined;
  /** On a deletion without the whole job (its endpoint deleted): the batch it was a request of. */
  batchId?: string | undefined;
  /** Why: "submitted", "started on worker abc", "ttl expired", ... */
  cause: string;
  at: number;
}

type Listener = (change: JobChange) => void;

/** The cause `releaseAll` is given when the emulator stops (reset and restore give their own). */
export const CLOSING_CAUSE = "emulator closing";
/** The cause when the emulator stops to start again on the same port (`minipod --watch` on a config edit). */
export const RESTARTING_CAUSE = "emulator restarting";

/** In-process notifications, so held requests wake the moment a job changes; nothing polls. */
export class JobNotifier {
  private readonly perJob = new Map<string, Set<Listener>>();
  private readonly all = new Set<Listener>();
  /** Set once the emulator closes (or restarts): nothing will change any more. */
  private ended: { cause: string; at: number } | undefined;

  /**
   * Calls `fn` on every change of one job until the returned function is called. Once the emulator
   * has closed, a watch (a request still arriving on a kept-alive connection) is released at once,
   * as the ones before it were, rather than held until the server cuts it.
   */
  watch(jobId: string, fn: Listener): () => void {
    const ended = this.ended;
    if (ended) {
      let live = true;
      queueMicrotask(() => live && fn({ id: jobId, endpointId: "", job: undefined, from: undefined, cause: ended.cause, at: ended.at }));
      return () => void (live = false);
    }
    let set = this.perJob.get(jobId);
    if (!set) this.perJob.set(jobId, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.perJob.get(jobId) === set) this.perJob.delete(jobId);
    };
  }

  /** Calls `fn` on every change of every job. */
  onAny(fn: Listener): () => void {
    this.all.add(fn);
    return () => this.all.delete(fn);
  }

  /** Tells every watcher its job is gone (reset, restore), so held requests are answered. */
  releaseAll(cause: string, at: number): void {
    if (cause === CLOSING_CAUSE || cause === RESTARTING_CAUSE) this.ended = { cause, at };
    for (const [id, set] of [...this.perJob]) {
      for (const fn of [...set]) fn({ id, endpointId: "", job: undefined, from: undefined, cause, at });
    }
  }

  emit(change: JobChange): void {
    for (const fn of this.all) fn(change);
    const set = this.perJob.get(change.id);
    if (set) for (const fn of [...set]) fn(change);
  }
}
