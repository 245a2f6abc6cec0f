/**
 * `minipod/contract`: one suite of tests that runs against minipod and, unchanged, against the
 * real service. The target comes from the environment (`MINIPOD_TARGET_URL`, `MINIPOD_TARGET_KEY`,
 * `MINIPOD_TARGET_ENDPOINTS`); without it, an emulator is started (`createEmulator`). Tests of what
 * only minipod has (faults, the virtual clock, the journal) are marked with `emulatorOnly` and
 * skipped, saying why, against another target. The checks (`jobProblems`, `errorProblems`,
 * `handlerError`) hold a job or an error to what the service answers, so that an assertion that
 * passes here cannot rest on something only minipod does.
 */
import type { Emulator, EmulatorOptions } from "./compose/emulator.js";

/** The environment variables that name another target. */
export const TARGET_ENV = {
  /** The queue API's base URL, up to `/v2` (`https://api.runpod.ai/v2`). */
  url: "MINIPOD_TARGET_URL",
  /** Its API key. */
  key: "MINIPOD_TARGET_KEY",
  /** The suite's endpoint names mapped to the target's ids: `worker=abc123,echo=def456`. */
  endpoints: "MINIPOD_TARGET_ENDPOINTS",
} as const;

/** Where a contract suite sends its requests. */
export interface ContractTarget {
  /** True when the environment named the target: minipod's own routes (`/_emulator`) are not there. */
  readonly remote: boolean;
  /** The queue API's base URL, up to `/v2`: `${baseUrl}/${endpoint("worker")}/run` (runpod-sdk's `baseUrl`). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The target's id of the endpoint the suite calls `name` (on minipod, `name` itself). */
  endpoint(name: string): string;
  /** A request to the queue API (`path` after `/v2`), with the key; the status and the body (JSON, else text). */
  // The body is what the service's answer says it is: a test reads its fields as it expects them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** The emulator started for the suite; undefined against a target the environment named. */
  readonly emulator: Emulator | undefined;
  /** Stops the emulator started, if one was. */
  close(): Promise<void>;
}

/** The target the environment names, if it names one; throws on a half-given or malformed one. */
function remoteFromEnv(env: NodeJS.ProcessEnv): { baseUrl: string; apiKey: string; ids: Map<string, string> } | undefined {
  const url = env[TARGET_ENV.url]?.trim();
  if (!url) return undefined;
  if (!/^https?:\/\/[^/]/.test(url)) throw new Error(`${TARGET_ENV.url} must be an http(s) URL up to /v2 (https://api.runpod.ai/v2), got "${url}"`);
  const apiKey = env[TARGET_ENV.key]?.trim();
  if (!apiKey) throw new Error(`${TARGET_ENV.url} is set, so ${TARGET_ENV.key} must hold the target's API key`);
  const ids = new Map<string, string>();
  for (const pair of (env[TARGET_ENV.endpoints] ?? "").split(",").map((p) => p.trim()).filter(Boolean)) {
    const [name, id, ...rest] = pair.split("=").map((s) => s.trim());
    if (!name || !id || rest.length > 0) throw new Error(`${TARGET_ENV.endpoints}: "${pair}" is not name=id (e.g. worker=abc123,echo=def456)`);
    ids.set(name, id);
  }
  return { baseUrl: url.replace(/\/+$/, ""), apiKey, ids };
}

/** Whether the environment names a target other than an emulator of the suite's own. */
export function remoteTarget(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env[TARGET_ENV.url]?.trim());
}

/**
 * The suite's target: the one the environment names, else an emulator started with `options`
 * (what `createEmulator` takes), on the auto clock unless told otherwise.
 */
export async function contractTarget(options: Omit<EmulatorOptions, "port"> = {}, env: NodeJS.ProcessEnv = process.env): Promise<ContractTarget> {
  const remote = remoteFromEnv(env);
  if (remote) {
    return target(true, remote.baseUrl, remote.apiKey, (name) => {
      const id = remote.ids.get(name);
      if (id === undefined) throw new Error(`${TARGET_ENV.endpoints} names no endpoint "${name}" (it has ${[...remote.ids.keys()].join(", ") || "none"}): add ${name}=<endpoint id>`);
      return id;
    }, undefined);
  }
  const { createEmulator } = await import("./compose/emulator.js");
  const emulator = await createEmulator(options);
  return target(false, `${emulator.url}/v2`, "minipod-contract-key", (name) => name, emulator);
}

function target(remote: boolean, baseUrl: string, apiKey: string, endpoint: (name: string) => string, emulator: Emulator | undefined): ContractTarget {
  return {
    remote,
    baseUrl,
    apiKey,
    endpoint,
    emulator,
    async call(method, path, body) {
      const res = await fetch(`${baseUrl}${path.startsWith("/") ? path : `/${path}`}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: the text as it came
      }
      return { status: res.status, body: parsed };
    },
    close: async () => {
      await emulator?.close();
    },
  };
}

/** What `emulatorOnly` needs of a test function: `it` of vitest, jest or node:test. */
type TestFunction = ((name: string, ...rest: never[]) => unknown) & { skip: (name: string, ...rest: never[]) => unknown };

let toldOnce = false;

/**
 * `it` for a test of what only minipod has (fault injection, the virtual clock, the journal,
 * snapshots): the test itself against an emulator of the suite's own; against a target the
 * environment names, `it.skip`, its name saying why (`emulatorOnly(it)("fails over on a 500", ...)`).
 */
export function emulatorOnly<T extends TestFunction>(test: T, needs = "minipod's control API (faults, clock, journal)", env: NodeJS.ProcessEnv = process.env): T {
  if (!remoteTarget(env)) return test;
  const why = `skipped: needs ${needs}, which ${env[TARGET_ENV.url]} has not`;
  if (!toldOnce) {
    toldOnce = true;
    console.warn(`minipod/contract: target ${env[TARGET_ENV.url]} (${TARGET_ENV.url}); tests marked emulatorOnly are skipped`);
  }
  return ((name: string, ...rest: never[]) => test.skip(`${name} [${why}]`, ...rest)) as unknown as T;
}

/** The statuses a job ends in. */
export const FINAL_STATUSES = ["COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"] as const;
type JobStatus = "IN_QUEUE" | "IN_PROGRESS" | (typeof FINAL_STATUSES)[number];

const isInt = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0;

/**
 * What is wrong with `job` (a `/run`, `/runsync` or `/status` answer) as the service would answer it
 * in `status`: `[]` when nothing. The service's facts: `id` and `status` always; `delayTime` and
 * `executionTime`, when there, integer milliseconds; a `FAILED` job carries `error`, a string
 * (a handler's exception, as text); `workerId` a string and `retries` an integer when there. What
 * the service leaves unsaid is not required: a `TIMED_OUT` job's `error`, for one.
 */
export function jobProblems(job: unknown, status: JobStatus): string[] {
  if (job === null || typeof job !== "object" || Array.isArray(job)) return [`expected a JSON object, got ${JSON.stringify(job)}`];
  const j = job as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof j.id !== "string" || j.id === "") problems.push(`id: expected a non-empty string, got ${JSON.stringify(j.id)}`);
  if (j.status !== status) problems.push(`status: expected ${status}, got ${JSON.stringify(j.status)}${typeof j.error === "string" ? ` (error: ${j.error})` : ""}`);
  for (const key of ["delayTime", "executionTime", "retries"]) if (key in j && !isInt(j[key])) problems.push(`${key}: expected an integer of ms, got ${JSON.stringify(j[key])}`);
  if (status === "COMPLETED") for (const key of ["delayTime", "executionTime"]) if (!(key in j)) problems.push(`${key}: a COMPLETED job reports it`);
  if (status === "FAILED" && typeof j.error !== "string") problems.push(`error: a FAILED job carries its error as a string, got ${JSON.stringify(j.error)}`);
  if ("workerId" in j && typeof j.workerId !== "string") problems.push(`workerId: expected a string, got ${JSON.stringify(j.workerId)}`);
  return problems;
}

/**
 * A FAILED job's error as a test reads it. The service's Python worker runtime reports a handler's
 * exception as JSON text (`error_type`, `error_message`, `error_traceback`, with the host and
 * worker); a handler of minipod's process, or a worker that returns `{"error": "..."}`, as the
 * message itself. Either way: `{ message, type?, traceback? }`.
 */
export function handlerError(job: { error?: unknown }): { message: string; type?: string; traceback?: string } {
  const error = job.error;
  if (typeof error !== "string") throw new Error(`the job has no error string: ${JSON.stringify(job)}`);
  try {
    const parsed = JSON.parse(error) as Record<string, unknown>;
    if (parsed && typeof parsed === "object" && typeof parsed.error_message === "string") {
      return {
        message: parsed.error_message,
        ...(typeof parsed.error_type === "string" ? { type: parsed.error_type } : {}),
        ...(typeof parsed.error_traceback === "string" ? { traceback: parsed.error_traceback } : {}),
      };
    }
  } catch {
    // a plain message
  }
  return { message: error };
}

/**
 * What is wrong with an error answer, as the service would give it, on `surface`: the queue API
 * (`/v2/{endpoint_id}/...`), whose error bodies the service does not document, so that only the
 * status is the contract (a test asserting more would pass on minipod alone); or the REST API,
 * whose errors are problem+json (`title`, `status` equal to the HTTP status, `detail`, and
 * `errors`, strings, on a body that failed validation).
 */
export function errorProblems(answer: { status: number; body: unknown }, expected: number, surface: "queue" | "rest"): string[] {
  const problems = answer.status === expected ? [] : [`status: expected ${expected}, got ${answer.status}`];
  if (surface === "queue") return problems;
  const b = answer.body as Record<string, unknown> | null;
  if (b === null || typeof b !== "object") return [...problems, `body: expected problem+json, got ${JSON.stringify(answer.body)}`];
  if (typeof b.title !== "string") problems.push("title: expected a string");
  if (b.status !== answer.status) problems.push(`status: the body's (${JSON.stringify(b.status)}) is not the answer's (${answer.status})`);
  if (typeof b.detail !== "string") problems.push("detail: expected a string");
  if ("errors" in b && !(Array.isArray(b.errors) && b.errors.every((e) => typeof e === "string"))) problems.push("errors: expected an array of strings");
  return problems;
}
