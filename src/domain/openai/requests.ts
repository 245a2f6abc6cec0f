import type { Activity } from "../activity.js";
import type { VirtualClock } from "../clock.js";
import { isFinal, type Job } from "../job.js";
import type { JobService } from "../jobs.js";
import type { JobNotifier } from "../notifier.js";
import type { JobStore } from "../ports.js";
import { DONE_EVENT, SplitOutputs, completedAnswer, errorEvent, resultValue, sseText, streamOfWhole } from "./answer.js";
import { errorAnswer, failureAnswer, handlerError, type OpenAiJsonAnswer } from "./protocol.js";

/** The answer to a streamed request: a JSON error before anything was sent, or the event stream. */
export type OpenAiStreamAnswer = { kind: "json"; answer: OpenAiJsonAnswer } | { kind: "events"; events: AsyncGenerator<string, void, undefined> };

/**
 * Requests to `/v2/{endpoint_id}/openai/*`: each becomes a job of the endpoint (a sync job, kept a
 * minute after it ends) whose input is `{openai_route, openai_input}`; its output is the answer.
 * The job keeps every rule of the queue: it waits for a worker, times out, can be cancelled, and a
 * fault can crash its worker.
 */
export class OpenAiRequests {
  constructor(
    private readonly d: {
      clock: VirtualClock;
      jobs: JobService;
      store: Pick<JobStore, "get" | "chunks">;
      notifier: JobNotifier;
    },
  ) {}

  /** The job a request becomes; `route` is the path after `/openai` (`/v1/chat/completions`). */
  submit(endpointId: string, method: string, route: string, body: Record<string, unknown>): Job {
    return this.d.jobs.submit(endpointId, { input: { openai_route: route, openai_input: body } }, "runsync", `submitted with ${method} /openai${route}`);
  }

  /** The JSON answer to a plain request, once its job is final (the client going away cancels it). */
  async answer(job: Job, route: string, signal?: AbortSignal): Promise<OpenAiJsonAnswer> {
    const ttlLeft = Math.max(1, job.expiresAt - this.d.clock.now());
    const done = await this.d.jobs.waitUntilFinal(job.endpointId, job.id, ttlLeft, signal).catch(() => undefined);
    if (signal?.aborted) this.abandon(job);
    if (done?.status === "COMPLETED") return completedAnswer(resultValue(done.output), route);
    return unfinished(job, done);
  }

  /**
   * The answer to a streamed request. Nothing is sent until the job streams its first output or
   * ends, so that an error the handler reports at once (a model it does not serve, a bad body)
   * still gets its HTTP status; from then on each output is relayed as the job streams it.
   */
  async stream(job: Job, route: string, signal?: AbortSignal): Promise<OpenAiStreamAnswer> {
    const watch = new JobWatch(this.d.notifier, job.id, this.d.clock.activity);
    let first: { job: Job | undefined; items: number };
    for (;;) {
      const current = this.d.store.get(job.id);
      const items = current ? this.d.store.chunks(job.id, 0) : [];
      if (!current || isFinal(current.status) || items.length > 0 || watch.released || signal?.aborted) {
        const error = items.length > 0 ? handlerError(items[0]!.output) : undefined;
        if (error) {
          watch.close();
          return { kind: "json", answer: error };
        }
        first = { job: current, items: items.length };
        break;
      }
      await watch.next(signal);
    }
    if (signal?.aborted) {
      watch.close();
      this.abandon(job);
      return { kind: "json", answer: errorAnswer(499, "the client closed the connection") };
    }
    if (first.items === 0) {
      const end = first.job;
      if (!end || end.status !== "COMPLETED") {
        watch.close();
        return { kind: "json", answer: unfinished(job, end) };
      }
      const value = resultValue(end.output);
      const error = handlerError(value) ?? (value === undefined || value === null ? completedAnswer(value, route) : undefined);
      if (error) {
        watch.close();
        return { kind: "json", answer: error };
      }
    }
    return { kind: "events", events: this.events(job, watch) };
  }

  /** The client went away before the end: its job is cancelled, as an OpenAI server stops generating. */
  abandon(job: Job): void {
    const current = this.d.store.get(job.id);
    if (!current || isFinal(current.status)) return;
    try {
      this.d.jobs.cancel(job.endpointId, job.id, "cancelled: the client of the OpenAI request went away");
    } catch {
      // Gone meanwhile (its endpoint was deleted): nothing to stop.
    }
  }

  /**
   * The event stream: each wake-up sends what the job streamed since the last, in one write;
   * the end sends `data: [DONE]` (unless the handler sent it) or, for a job that did not
   * complete, an error event.
   */
  private async *events(job: Job, watch: JobWatch): AsyncGenerator<string, void, undefined> {
    const split = new SplitOutputs();
    let cursor = 0;
    let done = false;
    try {
      for (;;) {
        // The job before its chunks: once it is final, every chunk it streamed is stored.
        const current = this.d.store.get(job.id);
        const final = !current || isFinal(current.status) || watch.released;
        const items = current ? this.d.store.chunks(job.id, cursor) : [];
        let text = "";
        for (const item of items) {
          const value = split.take(item);
          if (value !== SplitOutputs.NOT_YET) text += sseText(value);
        }
        if (final) {
          if (current?.status === "COMPLETED") {
            if (cursor === 0 && items.length === 0) text += streamOfWhole(resultValue(current.output));
            if (!done && !text.includes(DONE_EVENT)) text += DONE_EVENT;
          } else {
            text += errorEvent(unfinished(job, current));
          }
        }
        cursor += items.length;
        if (text !== "") {
          done ||= text.includes(DONE_EVENT);
          yield text;
        }
        if (final) return;
        await watch.next();
      }
    } finally {
      watch.close();
    }
  }
}

/**
 * The answer for a job that did not complete: it FAILED, TIMED_OUT or was CANCELLED, its ttl ended
 * (it is gone), or minipod let go of the request before it ended (stopping, reset).
 */
function unfinished(job: Job, current: Job | undefined): OpenAiJsonAnswer {
  if (!current) return errorAnswer(404, `job ${job.id} is gone (its ttl ended, its endpoint was deleted or minipod was reset) before it finished`, "job_expired");
  if (current.status === "FAILED") return failureAnswer(current.error ?? "the handler failed");
  if (current.status === "TIMED_OUT") return errorAnswer(504, current.error ?? `job ${job.id} timed out`, "job_timed_out");
  if (current.status === "CANCELLED") return errorAnswer(400, `job ${job.id} was cancelled before it finished (POST /cancel/${job.id})`, "job_cancelled", "cancelled");
  return errorAnswer(503, `minipod let go of this request (stopping or reset) while job ${job.id} was ${current.status}`, "emulator_released");
}

/** Wakes a reader when a job changes; a change between two waits is not missed. */
class JobWatch {
  private changed = false;
  private wake: (() => void) | undefined;
  private readonly unwatch: () => void;
  /** The notifier let go of every watcher (reset, snapshot restored, emulator closing). */
  released = false;

  constructor(
    notifier: JobNotifier,
    jobId: string,
    private readonly activity: Activity,
  ) {
    this.unwatch = notifier.watch(jobId, (change) => {
      if (change.job === undefined) this.released = true;
      this.changed = true;
      this.poke();
    });
  }

  next(signal?: AbortSignal): Promise<void> {
    if (this.changed || signal?.aborted) {
      this.changed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      // The stream's reader waits on virtual time (tokens paced by the handler's sleeps): the auto clock may skip ahead for it.
      const waiting = this.activity.waiting();
      const stop = () => {
        waiting();
        signal?.removeEventListener("abort", stop);
        this.changed = false;
        resolve();
      };
      this.wake = stop;
      signal?.addEventListener("abort", stop, { once: true });
    });
  }

  close(): void {
    this.unwatch();
    this.poke();
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
