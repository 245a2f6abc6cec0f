import { customAlphabet } from "nanoid";
import { endpointNotFound, type EndpointSpec } from "../../domain/endpoint.js";
import { EmulatorError } from "../../domain/errors.js";
import { isFinal, type Job } from "../../domain/job.js";
import type { Submission } from "../../domain/jobs.js";
import { BATCH_ACTIVE_MAX, BATCH_REQUESTS_MAX } from "../../domain/limits.js";
import type { JobChange } from "../../domain/notifier.js";
import type { EngineView } from "../shared/service.js";
import type { DocumentStore } from "../shared/storage.js";
import { countsOf, isActive, type Batch, type BatchCounts, type BatchRequestView, type StoredRequest } from "./record.js";
import { BatchProgress } from "./progress.js";

const suffix = customAlphabet("0123456789abcdefghijklmnopqrstuvwxyz", 14);
/** Ids shaped like the service's examples (`batch_01j9abc123`, `req_abc001`); a request id is its job's id. */
const newBatchId = () => `batch_${suffix()}`;
const newRequestId = () => `req_${suffix()}`;

/** What a create or update may set. */
export interface BatchAttributes {
  name?: string | undefined;
  webhook?: string | null | undefined;
}

type Engine = Pick<EngineView, "clock" | "log" | "jobs" | "queue" | "webhooks" | "notifier" | "endpoints">;

/**
 * Batches of an endpoint: a DRAFT collects requests (added, changed, removed); `finalize` locks
 * it and queues each request as a job carrying the batch id, on the endpoint's batch workers; the
 * counters come from those jobs. A batch ends when every request is done (it stays FINALIZED),
 * when it is CANCELLED (queued requests at once, running ones allowed to finish), or FAILED (its
 * requests were lost); its webhook hears the end once.
 */
export class BatchService {
  private readonly progress: BatchProgress;

  constructor(
    private readonly d: { engine: Engine; batches: DocumentStore<Batch>; requests: DocumentStore<StoredRequest> },
  ) {
    this.progress = new BatchProgress(d.engine.jobs);
    d.engine.notifier.onAny((c) => this.onJobChange(c));
  }

  /** The endpoint's batches, newest first. */
  list(endpointId: string): Batch[] {
    this.requireEndpoint(endpointId);
    return this.d.batches.list(endpointId).reverse();
  }

  /** Every batch of every endpoint, newest first (the dashboard). */
  all(): Batch[] {
    return this.d.batches.list().reverse();
  }

  get(endpointId: string, id: string): Batch {
    this.requireEndpoint(endpointId);
    const b = this.d.batches.get(id);
    if (!b || b.endpointId !== endpointId) throw new EmulatorError("NOT_FOUND", `batch "${id}" not found on endpoint "${endpointId}"`);
    return b;
  }

  /** A new DRAFT batch with its first requests (maybe none). */
  create(endpointId: string, attrs: BatchAttributes, requests: Submission[]): { batch: Batch; added: string[] } {
    this.requireEndpoint(endpointId);
    const active = this.d.batches.list(endpointId).filter(isActive).length;
    if (active >= BATCH_ACTIVE_MAX) {
      throw new EmulatorError(
        "RATE_LIMITED",
        `endpoint "${endpointId}" has ${active} active batches (drafts, or finalized batches whose requests are not all done), the most it may have (${BATCH_ACTIVE_MAX}); finalize and finish, or cancel, one first`,
      );
    }
    checkCount(0, requests.length);
    const now = this.d.engine.clock.now();
    const batch: Batch = { id: newBatchId(), endpointId, status: "DRAFT", requestTotal: 0, createdAt: now, updatedAt: now };
    if (attrs.name !== undefined) batch.name = attrs.name;
    if (attrs.webhook) batch.webhook = attrs.webhook;
    const added = this.store(batch, requests, now);
    return { batch: this.save({ ...batch, requestTotal: added.length }), added };
  }

  /** Sets its name or webhook (`null` clears the webhook), in any state. */
  update(endpointId: string, id: string, attrs: BatchAttributes): Batch {
    const b = { ...this.get(endpointId, id), updatedAt: this.d.engine.clock.now() };
    if (attrs.name !== undefined) b.name = attrs.name;
    if (attrs.webhook === null) delete b.webhook;
    else if (attrs.webhook !== undefined) b.webhook = attrs.webhook;
    return this.save(b);
  }

  /** Appends requests to a DRAFT batch; answers their ids, in order. */
  append(endpointId: string, id: string, requests: Submission[]): { batch: Batch; added: string[] } {
    const b = this.draft(endpointId, id, "add requests to");
    checkCount(b.requestTotal, requests.length);
    const now = this.d.engine.clock.now();
    const added = this.store(b, requests, now);
    return { batch: this.save({ ...b, requestTotal: b.requestTotal + added.length, updatedAt: now }), added };
  }

  /** Replaces one request of a DRAFT batch (its place stays). */
  replaceRequest(endpointId: string, id: string, requestId: string, sub: Submission): BatchRequestView {
    this.draft(endpointId, id, "change a request of");
    const r = this.storedRequest(id, requestId);
    const next: StoredRequest = { ...sub, id: r.id, batchId: id, createdAt: r.createdAt };
    this.d.requests.save(next, id);
    return this.draftView(next, true);
  }

  /** Removes one request of a DRAFT batch. */
  removeRequest(endpointId: string, id: string, requestId: string): Batch {
    const b = this.draft(endpointId, id, "remove a request of");
    this.storedRequest(id, requestId);
    this.d.requests.delete(requestId);
    return this.save({ ...b, requestTotal: b.requestTotal - 1, updatedAt: this.d.engine.clock.now() });
  }

  /** Locks a DRAFT and queues its requests on the endpoint's batch workers. */
  finalize(endpointId: string, id: string): Batch {
    const b = this.draft(endpointId, id, "finalize");
    const now = this.d.engine.clock.now();
    const requests = this.d.requests.list(id);
    const next = this.save({ ...b, status: "FINALIZED", requestTotal: requests.length, finalizedAt: now, updatedAt: now });
    this.submit(next, requests);
    return this.settle(next);
  }

  /**
   * Cancels a batch: a draft at once; a finalized one's queued requests at once (never run),
   * while running requests finish, after which it is CANCELLED. A batch already ended cannot be.
   */
  cancel(endpointId: string, id: string): Batch {
    const b = this.get(endpointId, id);
    const now = this.d.engine.clock.now();
    if (b.status === "CANCELLED") return b;
    if (b.status === "DRAFT") return this.end({ ...b, status: "CANCELLED", updatedAt: now }, "cancelled");
    if (b.status === "FAILED" || b.endedAt !== undefined) {
      throw new EmulatorError("CONFLICT", `batch ${id} has ended (${b.status === "FAILED" ? "FAILED" : "every request is done"}); only a DRAFT or a FINALIZED batch still running can be cancelled`);
    }
    const asked = this.save({ ...b, cancelRequested: true, updatedAt: now });
    for (const r of this.d.engine.jobs.batchJobIds(id)) {
      if (r.status === "IN_QUEUE") this.d.engine.queue.cancel(endpointId, r.id, `batch ${id} cancelled`);
    }
    return this.settle(this.d.batches.get(id) ?? asked);
  }

  /** A batch's counters: in a draft, only its total; then from its jobs. */
  counts(b: Batch): BatchCounts {
    if (b.status === "DRAFT" || b.finalizedAt === undefined) return { requestTotal: b.requestTotal, requestInProgress: 0, requestCompleted: 0, requestFailed: 0 };
    return countsOf(b.requestTotal, this.d.engine.jobs.countByBatch(b.id));
  }

  /** One page of the batch's requests in the order they were added, and how many it has. */
  requests(endpointId: string, id: string, offset: number, limit: number): { requests: BatchRequestView[]; total: number } {
    const b = this.get(endpointId, id);
    if (b.finalizedAt === undefined) {
      const all = this.d.requests.list(id);
      return { requests: all.slice(offset, offset + limit).map((r) => this.draftView(r, false)), total: all.length };
    }
    return { requests: this.d.engine.jobs.listBatch(id, offset, limit).map((j) => jobView(j, false)), total: b.requestTotal };
  }

  /** One request, with its input. */
  request(endpointId: string, id: string, requestId: string): BatchRequestView {
    const b = this.get(endpointId, id);
    if (b.finalizedAt !== undefined) {
      const job = this.d.engine.jobs.get(requestId);
      if (job?.batchId === id) return jobView(job, true);
    }
    return this.draftView(this.storedRequest(id, requestId), true);
  }

  /**
   * After a start, reset or restore: a finalize whose jobs never reached the database (the process
   * was killed first) is completed, and batches that ended meanwhile are recorded as ended.
   */
  resume(): void {
    this.progress.clear();
    for (const b of this.d.batches.list()) {
      if (b.status !== "FINALIZED" || b.endedAt !== undefined) continue;
      if (this.d.engine.jobs.batchJobIds(b.id).length === 0 && b.requestTotal > 0) {
        if (!this.d.engine.endpoints.of(b.endpointId)) continue;
        this.d.engine.log.warn(`batch ${b.id}: its requests were not queued before the restart; queued now`);
        this.submit(b, this.d.requests.list(b.id));
      }
      this.settle(b);
    }
  }

  /** Forgets what it counted (reset, restore): the database changed under it. */
  clear(): void {
    this.progress.clear();
  }

  private submit(b: Batch, requests: StoredRequest[]): void {
    this.d.engine.queue.submitBatch(
      b.endpointId,
      b.id,
      requests.map(({ id, batchId: _b, createdAt: _c, ...sub }) => ({ id, sub })),
    );
  }

  /** Ends the batch if nothing of it is left to run (done, or a cancel drained). */
  private settle(b: Batch): Batch {
    if (b.status !== "FINALIZED" || b.endedAt !== undefined) return b;
    if (this.progress.remaining(b.id) > 0) return b;
    const now = this.d.engine.clock.now();
    return this.end({ ...b, ...(b.cancelRequested ? { status: "CANCELLED" as const } : {}), updatedAt: now }, b.cancelRequested ? "cancelled" : "completed");
  }

  private end(b: Batch, event: "completed" | "cancelled" | "failed"): Batch {
    const now = this.d.engine.clock.now();
    const ended = this.save({ ...b, endedAt: now });
    this.progress.forget(b.id);
    if (ended.webhook) {
      const body = { event: `batch.${event}`, ...ended, ...this.counts(ended) };
      this.d.engine.webhooks.deliver({ id: ended.id, endpointId: ended.endpointId, url: ended.webhook, what: `batch ${ended.id} (${event})` }, body);
    }
    this.d.engine.log.info(`batch ${b.id} of endpoint ${b.endpointId} ended: ${event}`);
    return ended;
  }

  /** Follows the jobs of running batches: a request finished, went back to the queue, or was lost. */
  private onJobChange(c: JobChange): void {
    const batchId = (c.job ?? c.deleted)?.batchId ?? c.batchId;
    if (batchId === undefined || c.from === undefined) return;
    const wasOpen = !isFinal(c.from);
    const isOpen = c.job !== undefined && !isFinal(c.job.status);
    if (wasOpen === isOpen) return;
    const b = this.d.batches.get(batchId);
    if (!b || b.status !== "FINALIZED" || b.endedAt !== undefined) return;
    if (c.job === undefined) {
      this.end({ ...b, status: "FAILED", error: `request ${c.id} was lost before it finished (${c.cause})`, updatedAt: c.at }, "failed");
      return;
    }
    this.progress.moved(batchId, isOpen ? 1 : -1);
    this.settle(b);
  }

  private store(b: Batch, requests: Submission[], now: number): string[] {
    return requests.map((sub) => {
      const r: StoredRequest = { ...sub, id: newRequestId(), batchId: b.id, createdAt: now };
      this.d.requests.save(r, b.id);
      return r.id;
    });
  }

  private storedRequest(batchId: string, requestId: string): StoredRequest {
    const r = this.d.requests.get(requestId);
    if (!r || r.batchId !== batchId) throw new EmulatorError("NOT_FOUND", `request "${requestId}" not found in batch "${batchId}"`);
    return r;
  }

  private draft(endpointId: string, id: string, what: string): Batch {
    const b = this.get(endpointId, id);
    if (b.status !== "DRAFT") throw new EmulatorError("CONFLICT", `batch ${id} is ${b.status}; only a DRAFT batch can ${what} it`);
    return b;
  }

  private draftView(r: StoredRequest, withInput: boolean): BatchRequestView {
    return { id: r.id, status: "PENDING", ...(withInput ? { input: r.input } : {}) };
  }

  private save(b: Batch): Batch {
    this.d.batches.save(b, b.endpointId);
    return b;
  }

  private requireEndpoint(endpointId: string): EndpointSpec {
    const spec = this.d.engine.endpoints.of(endpointId);
    if (!spec) throw endpointNotFound(endpointId, this.d.engine.endpoints.specs("QUEUE").map((s) => s.id));
    return spec;
  }
}

function checkCount(have: number, adding: number): void {
  if (have + adding > BATCH_REQUESTS_MAX) {
    throw new EmulatorError("BAD_REQUEST", `a batch holds at most ${BATCH_REQUESTS_MAX} requests; it has ${have} and ${adding} more were sent`);
  }
}

/** A finalized batch's request, from its job. */
function jobView(j: Job, withInput: boolean): BatchRequestView {
  const v: BatchRequestView = { id: j.id, status: j.status };
  if (withInput) v.input = j.input;
  if (j.output !== undefined) v.output = j.output;
  if (j.error !== undefined) v.error = j.error;
  if (j.workerId !== undefined) v.workerId = j.workerId;
  if (j.retries > 0) v.retries = j.retries;
  if (j.startedAt !== undefined) v.startedAt = j.startedAt;
  if (j.completedAt !== undefined) v.completedAt = j.completedAt;
  return v;
}
