import { HELD, parse, placeholders, union, values, shapeOf, mediaType, Ids, WORKER_PATH, type Raw, type RecordedExchange, type RecordedRequest, type RecordedAnswer, type Shape } from "./recording.js";

/**
 * A scenario's requests and answers, as kept by the recorder, made into a recording's exchanges in
 * an order and with names that do not depend on timing: long polls placed after the request that
 * made their job, polls sent again kept once, an idle worker's requests apart.
 */

/** The worker protocol's requests: those of an idle worker are left out of scenarios that are not about idleness. */
const WORKER_OPS = /^\/v2\/[^/]+\/(job-take|job-take-batch|job-stop|ping)\//;

/** A worker's polls: held until there is something for it, they bring ids into no scenario. */
const WORKER_POLL = /^\/v2\/[^/]+\/(job-take|job-take-batch|job-stop)\//;

/**
 * A scenario's requests with each stop kept once: minipod sends a job's stop again on the worker's
 * next job-stop polls until the worker lets go of the job (it may have heard it before it held the
 * job), so how many polls name it again depends on timing. A job-stop answer naming only jobs an
 * earlier one of the same worker named is left out; one naming others too keeps only those.
 */
function foldStops(raws: Raw[]): Raw[] {
  const named = new Map<string, Set<string>>();
  return raws.flatMap((r) => {
    if (!/\/job-stop\//.test(r.path) || r.status !== 200) return [r];
    const answer = parse(r.answer, r.contentType) as { jobsToStop?: unknown } | undefined;
    if (!Array.isArray(answer?.jobsToStop)) return [r];
    const seen = named.get(r.path) ?? new Set<string>();
    named.set(r.path, seen);
    const fresh = answer.jobsToStop.filter((id) => typeof id !== "string" || !seen.has(id));
    for (const id of fresh) if (typeof id === "string") seen.add(id);
    if (fresh.length === 0) return [];
    return fresh.length === answer.jobsToStop.length ? [r] : [{ ...r, answer: [Buffer.from(JSON.stringify({ ...answer, jobsToStop: fresh }))] }];
  });
}

/** Whether an exchange is an idle worker's: a heartbeat, or a worker poll answered with nothing. */
function isIdle(r: Raw): boolean {
  return WORKER_OPS.test(r.path) && (r.path.includes("/ping/") || r.status === 204);
}

/** Query parameters whose values differ from one installation to the next: recorded as present ("string"). */
const VOLATILE_QUERY = new Set(["runpod_version"]);

export function toRecording(raws: Raw[], o: { idle?: boolean; polls?: boolean }, keys: string[] | undefined): { exchanges: RecordedExchange[]; idle?: RecordedExchange[] } {
  const done = foldStops(raws.filter((r) => r.done).sort((a, b) => a.seq - b.seq));
  const ids = new Ids();
  // Ids are named in the order the requests that made them were sent (an answer names them, later
  // requests use them); a worker's poll held since before (a job-take, a job-stop) names none first.
  for (const r of done) {
    ids.learnWorker(r.path);
    if (WORKER_PATH.test(r.path)) continue;
    // What a client sends before minipod gave it (a model's name, sent before the models are listed) is the client's own.
    ids.own(parse(r.body, r.headers["content-type"]));
    ids.own([...r.query.values()]);
    ids.learn(parse(r.answer, r.contentType));
  }
  for (const r of done) if (WORKER_POLL.test(r.path)) ids.learn(parse(r.answer, r.contentType));
  const ordered = canonicalOrder(done.filter((r) => !isIdle(r)).map((r) => exchange(r, ids, keys)));
  if (o.polls) return { exchanges: mergePolls(ordered) };
  // A GET sent again once answered (a poll) is kept once, marked repeated, with what its answers
  // gave together: how many polls a client makes, and which of them see which state of a job,
  // depend on timing; the fields it was given in the end do not.
  const exchanges: RecordedExchange[] = [];
  for (const x of ordered) {
    // A stream read by a client while the test moves the clock: its polls, wherever they fell, are one.
    const stream = /\/stream\//.test(x.request.path) && x.request.method === "GET";
    const prev = stream ? exchanges.find((p) => p.request.method === "GET" && JSON.stringify(p.request) === JSON.stringify(x.request)) : exchanges[exchanges.length - 1];
    if (prev && x.request.method === "GET" && JSON.stringify(prev.request) === JSON.stringify(x.request) && prev.response.status === x.response.status) {
      prev.repeated = true;
      if (x.response.body !== undefined) prev.response.body = prev.response.body === undefined ? x.response.body : union(prev.response.body, x.response.body);
      continue;
    }
    exchanges.push(x);
  }
  if (!o.idle) return { exchanges };
  const idle = new Map<string, RecordedExchange>();
  for (const r of done.filter(isIdle)) {
    const x = exchange(r, ids, keys);
    idle.set(JSON.stringify(x), x);
  }
  return { exchanges, idle: [...idle.entries()].sort((a, b) => a[0].localeCompare(b[0])).map((e) => e[1]) };
}

/** A scenario's exchanges with its polls merged (ScenarioOptions.polls). */
function mergePolls(list: RecordedExchange[]): RecordedExchange[] {
  // A worker's result and stream chunks, right after the take that brought their job.
  const isTake = (x: RecordedExchange) => /\/job-take(-batch)?\//.test(x.request.path);
  const after = new Map<RecordedExchange, RecordedExchange[]>();
  for (const x of list) {
    if (!/\/job-(done|stream)\//.test(x.request.path)) continue;
    const names = placeholders(x.request.path);
    const take = list.find((y) => isTake(y) && placeholders(y.response.body).some((n) => names.includes(n)));
    if (take) after.set(take, [...(after.get(take) ?? []), x]);
  }
  const moved = new Set([...after.values()].flat());
  const out: RecordedExchange[] = [];
  let window = new Map<string, RecordedExchange>();
  for (const x of list.flatMap((y) => (moved.has(y) ? [] : [y, ...(after.get(y) ?? [])]))) {
    // A stream's reads too: which chunks each read got depends on timing; all of them together, not.
    const stream = /\/stream\//.test(x.request.path);
    if (x.request.method !== "GET" || (HELD.test(x.request.path) && !stream) || WORKER_PATH.test(x.request.path)) {
      window = new Map();
      out.push(x);
      continue;
    }
    if (x.response.body !== undefined && !stream) x.response.body = anyLists(x.response.body);
    const key = `${JSON.stringify(x.request)} ${x.response.status}`;
    const prev = window.get(key);
    if (!prev) {
      window.set(key, x);
      out.push(x);
    } else if (x.response.body !== undefined) prev.response.body = prev.response.body === undefined ? x.response.body : union(prev.response.body, x.response.body);
  }
  return out;
}

/** A shape with every list as a list of anything. */
function anyLists(shape: Shape): Shape {
  if (Array.isArray(shape)) return [];
  if (typeof shape === "object") return Object.fromEntries(Object.entries(shape).map(([k, x]) => [k, anyLists(x)]));
  return shape;
}


/**
 * The order of a scenario's exchanges, made independent of timing: when a long poll was sent
 * against the moment another actor sent something (the worker's job-take before or after the
 * test's /run, the worker's job-stop before or after the cancel, the test's status-sync before or
 * after the worker's job-done) is a race. So each job-take, job-stop and status-sync naming ids
 * (in its path or its answer) is placed right after the last request that brought one of them
 * into being (a /run or a /runsync: an answer with the id, to a request without it; never a
 * worker's poll), and left where it was when there is none; other requests stay in the order sent.
 */
function canonicalOrder(list: RecordedExchange[]): RecordedExchange[] {
  // Moved: the worker's job-take (it waits for a job) and job-stop (for a stop), and the client's status-sync (it waits for the end).
  const moves = (x: RecordedExchange) => /\/(job-take|job-take-batch|job-stop|status-sync)\//.test(x.request.path);
  const creates = (x: RecordedExchange, id: string) => !WORKER_POLL.test(x.request.path) && placeholders(x.response.body).includes(id) && !placeholders(x.request).includes(id);
  const out: RecordedExchange[] = [];
  const after = new Map<RecordedExchange, RecordedExchange[]>();
  for (const x of list) {
    if (!moves(x)) continue;
    const names = new Set([...placeholders(x.request), ...placeholders(x.response.body)]);
    let anchor: RecordedExchange | undefined;
    for (const y of list) if ([...names].some((n) => creates(y, n))) anchor = y;
    if (anchor) after.set(anchor, [...(after.get(anchor) ?? []), x]);
  }
  // Polls moved after the same request: the worker's first, then the client's, whichever was sent first.
  const rank = (x: RecordedExchange) => ["job-take", "job-take-batch", "job-stop", "stream", "status-sync", "runsync"].findIndex((k) => x.request.path.includes(`/${k}/`));
  for (const [k, v] of after) after.set(k, [...v].sort((a, b) => rank(a) - rank(b)));
  const moved = new Set([...after.values()].flat());
  for (const x of list) {
    if (!moved.has(x)) out.push(x);
    out.push(...(after.get(x) ?? []));
  }
  return out;
}

function exchange(r: Raw, ids: Ids, keys: string[] | undefined): RecordedExchange {
  const request: RecordedRequest = { method: r.method, path: ids.abstract(r.path) as string };
  if ([...r.query.keys()].length) request.query = Object.fromEntries([...r.query.entries()].map(([k, v]) => [k, VOLATILE_QUERY.has(k) ? "string" : (ids.abstract(v) as string)]).sort());
  const headers: Record<string, string> = {};
  const auth = r.headers.authorization;
  // A key the config accepts is recorded as {key}; another (a client given a wrong key) as sent.
  if (typeof auth === "string") headers.authorization = keys && !keys.includes(auth.replace(/^bearer /i, "")) ? auth : /^bearer /i.test(auth) ? "Bearer {key}" : "{key}";
  const ct = r.headers["content-type"];
  if (ct && r.body.length) headers["content-type"] = mediaType(ct);
  if (typeof r.headers.accept === "string" && r.headers.accept !== "*/*") headers.accept = r.headers.accept;
  if (Object.keys(headers).length) request.headers = headers;
  if (r.body.length) request.body = ids.abstract(values(parse(r.body, ct)));
  const response: RecordedAnswer = { status: r.status ?? 0 };
  const answer = parse(r.answer, r.contentType);
  if (r.contentType && Buffer.concat(r.answer).length) response.contentType = mediaType(r.contentType);
  if (answer !== undefined) response.body = shapeOf(answer, ids);
  // The test's own call to minipod's control API (moving the clock, a fault): a step of the test, not of the client.
  return r.path.startsWith("/_emulator/") ? { request, response, control: true } : { request, response };
}

