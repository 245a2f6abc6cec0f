/**
 * The dashboard's panels for faults, webhooks, the request journal and job timelines read the
 * emulator's own control routes, in-process, as any client would. A route that is missing (an
 * emulator built without it) or that fails leaves its panel saying so instead of breaking the page.
 */

/** Anything that answers a request in-process: the Hono app. */
export interface InProcess {
  request(input: string, init?: RequestInit): Response | Promise<Response>;
}

export type Fetched<T> = { ok: true; data: T } | { ok: false; reason: string };

/** GETs a control route in-process and parses its JSON; never throws. */
export async function fetchControl<T>(app: InProcess, path: string): Promise<Fetched<T>> {
  try {
    const res = await app.request(path, { headers: { accept: "application/json" } });
    const text = await res.text();
    if (res.status === 404 && /no route for/.test(text)) return { ok: false, reason: "not available in this build" };
    if (res.status !== 200) return { ok: false, reason: `${path} answered ${res.status}${detailOf(text)}` };
    return { ok: true, data: JSON.parse(text) as T };
  } catch (e) {
    return { ok: false, reason: `${path} failed: ${(e as Error)?.message ?? String(e)}` };
  }
}

const detailOf = (text: string): string => {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    return typeof detail === "string" ? `: ${detail}` : "";
  } catch {
    return "";
  }
};

/** `GET /_emulator/faults`. */
export interface FaultRule {
  id: string;
  endpoint?: string;
  operation?: string;
  fault: { type: string; [param: string]: unknown };
  times?: number;
  probability?: number;
  after?: number;
  fired?: number;
  /** `times` used up: the rule no longer fires. */
  spent?: boolean;
}

/** `GET /_emulator/webhooks`. */
export interface WebhookDelivery {
  jobId: string;
  url: string;
  attempt: number;
  status?: number;
  error?: string;
  at: number | string;
}

/** `GET /_emulator/requests`. */
export interface JournalEntry {
  method: string;
  path: string;
  query?: string;
  endpoint?: string;
  operation?: string;
  status: number;
  at: number | string;
  durationMs: number;
  /** The body of an error answer. */
  response?: unknown;
}

/** `GET /_emulator/jobs/{id}/events`. */
export interface JobEvent {
  at: number | string;
  from?: string;
  to?: string;
  cause: string;
}

/** Keeps only the query parameters a panel knows, non-empty, URL-encoded. */
export function pickQuery(query: Readonly<Record<string, string | undefined>>, keys: readonly string[]): string {
  const params = new URLSearchParams();
  for (const k of keys) {
    const v = query[k]?.trim();
    if (v) params.set(k, v);
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}

/** `GET /_emulator/batches`: a batch with its counters and its first requests. */
export interface BatchOverview {
  id: string;
  endpointId: string;
  name?: string;
  status: string;
  requestTotal: number;
  requestInProgress: number;
  requestCompleted: number;
  requestFailed: number;
  cancelRequested?: boolean;
  error?: string;
  createdAt: number;
  endedAt?: number;
  requests: Array<{ id: string; status: string; error?: string }>;
}
