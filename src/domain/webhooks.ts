import type { VirtualClock } from "./clock.js";
import { isFinal, toView, type Job } from "./job.js";
import { WEBHOOK_EXTRA_ATTEMPTS, WEBHOOK_RETRY_DELAY_MS } from "./limits.js";
import type { Logger } from "./logger.js";
import type { JobNotifier } from "./notifier.js";
import type { ObservabilityStore } from "./observability.js";
import { shownUrl } from "./redact.js";

/** Sends one webhook call; resolves with the receiver's status or why it could not be reached. */
export type WebhookSender = (url: string, body: unknown) => Promise<{ status: number } | { error: string }>;

/** The schemes a webhook URL may have (a zod `url({ protocol })` pattern): a receiver over HTTP. */
export const WEBHOOK_PROTOCOL = /^https?$/;

/** Whether `url` is one a webhook may be sent to: http: or https:, with no user info. */
export function isWebhookUrl(url: string): boolean {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  return scheme !== undefined && WEBHOOK_PROTOCOL.test(scheme) && !hasCredentials(url);
}

/** Whether a URL carries user info (`user:password@`), which minipod refuses in a webhook. */
export function hasCredentials(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== "" || u.password !== "";
  } catch {
    return false;
  }
}

/** Why a webhook URL with user info is refused, and what to do instead. */
export const WEBHOOK_CREDENTIALS_REFUSED =
  "a webhook URL may not carry credentials (user:password@host): they would be shown wherever the job is; authenticate the receiver with a token in the URL's path or query instead";

/** The body of a webhook call: the status envelope plus the job's input and the webhook URL. */
export function webhookBody(job: Job, now: number): Record<string, unknown> {
  return { ...toView(job, now), input: job.input, webhook: job.webhook };
}

/** Where a notification goes: the id its deliveries are recorded under, its endpoint, the URL, and what it is about (for the log). */
export interface WebhookTarget {
  id: string;
  endpointId: string;
  url: string;
  what: string;
}

/**
 * Calls a job's webhook when it finishes (COMPLETED, FAILED, CANCELLED, TIMED_OUT). An answer
 * other than 200, or none, is tried again up to 2 more times, 10 s apart on the virtual clock.
 * Each attempt is recorded; `advance` waits for a call in flight.
 */
export class Webhooks {
  private retriesPending = 0;

  constructor(
    private readonly d: { clock: VirtualClock; notifier: JobNotifier; store: ObservabilityStore; send: WebhookSender; log: Logger },
  ) {}

  /** Starts listening for finished jobs; returns the unsubscribe function. */
  start(): () => void {
    return this.d.notifier.onAny((c) => {
      const job = c.job;
      if (!job?.webhook || !isFinal(job.status) || c.from === undefined || isFinal(c.from)) return;
      this.attempt({ id: job.id, endpointId: job.endpointId, url: job.webhook, what: `job ${job.id} (${job.status})` }, webhookBody(job, c.at), 1);
    });
  }

  /**
   * Sends one notification that is not a job's (a batch that ended), with the same retries and
   * records as a job's; `target.id` is what its deliveries are listed under.
   */
  deliver(target: WebhookTarget, body: Record<string, unknown>): void {
    this.attempt(target, body, 1);
  }

  /** Retries waiting on the clock (for runUntilIdle). */
  pending(): number {
    return this.retriesPending;
  }

  private attempt(target: WebhookTarget, body: Record<string, unknown>, attempt: number): void {
    const { clock, store, send, log } = this.d;
    const { url, what } = target;
    const at = clock.now();
    const release = clock.hold();
    void send(url, body)
      .catch((e: unknown) => ({ error: (e as Error)?.message ?? String(e) }))
      .then((result) => {
        const status = "status" in result ? result.status : undefined;
        const error = "error" in result ? result.error : undefined;
        store.appendDelivery({ jobId: target.id, endpointId: target.endpointId, url: shownUrl(url), attempt, status, error, at });
        const ok = status === 200;
        const outcome = ok ? "delivered" : status !== undefined ? `answered ${status}` : `failed: ${error}`;
        if (ok) log.info(`webhook for ${what} ${outcome}, attempt ${attempt}`);
        else if (attempt <= WEBHOOK_EXTRA_ATTEMPTS) {
          log.warn(`webhook for ${what} ${outcome} (attempt ${attempt}); trying again in ${WEBHOOK_RETRY_DELAY_MS / 1000} s`);
          this.retriesPending++;
          clock.after(
            WEBHOOK_RETRY_DELAY_MS,
            () => {
              this.retriesPending--;
              this.attempt(target, body, attempt + 1);
            },
            "webhook-retry",
          );
        } else log.warn(`webhook for ${what} ${outcome} (attempt ${attempt}); giving up`);
      })
      .finally(release);
  }
}
