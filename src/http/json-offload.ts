import { Worker } from "node:worker_threads";
import { EmulatorError } from "../domain/errors.js";
import { parseInSlices } from "../domain/json-slices.js";
import { LARGE, RawJson } from "../domain/json-text.js";
import { JSON_DEPTH_MAX } from "../domain/limits.js";
import { nestsDeeperThan } from "../domain/redact.js";

/**
 * A body at least this long is parsed off the event loop (see `parseOffLoop`). Below it a parse
 * takes a few milliseconds at most; above it, a body of the service's maximum size (10 MB on
 * `/run`, 20 MB on `/runsync`) would block every other request for as long as `JSON.parse` takes:
 * a tenth of a second for one long string, seconds for millions of small numbers.
 */
export const OFF_LOOP_BYTES = 1024 * 1024;

/** A body shorter than this is parsed on the loop whatever its shape (the check costs it nothing). */
export const DENSE_CHECK_BYTES = 64 * 1024;

/**
 * Objects, arrays and strings (counted by their opening character) past which a body shorter than
 * `OFF_LOOP_BYTES` is parsed off the loop too: the cost of a parse is in them more than in its
 * characters (100,000 small objects in 1.0 MB held the loop about 110 ms), about a millisecond
 * per thousand.
 */
export const DENSE_TOKENS = 16 * 1024;

/**
 * Whether a request body is parsed off the event loop (`parseOffLoop`): a long one, or a shorter
 * one dense with objects, arrays and strings. A body under `DENSE_CHECK_BYTES` (every usual
 * /run) costs one comparison; a longer one at most a scan of its characters, which stops at
 * `DENSE_TOKENS`.
 */
export function parsesOffLoop(text: string): boolean {
  if (text.length >= OFF_LOOP_BYTES) return true;
  if (text.length < DENSE_CHECK_BYTES) return false;
  let tokens = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // `"` opens and closes a string: two count as one.
    if (c === 0x7b || c === 0x5b) tokens += 2;
    else if (c === 0x22) tokens++;
    else continue;
    if (tokens >= 2 * DENSE_TOKENS) return true;
  }
  return false;
}

/** A body parsed off the event loop: its value, with each large field named by the route cut out. */
export interface OffLoopBody {
  /** The body, with each field of `texts` replaced by an empty value of the same JSON type. */
  value: unknown;
  /** The JSON text of each field the route keeps as text, where it was large. */
  texts: Record<string, string>;
}

/**
 * The thread's answer: the value with its large fields cut out as texts; or, when what is left
 * is large too (`parseHere`), only that the text is valid JSON: a value of many small objects
 * costs the event loop more to receive from the thread (a structured clone, read in one go)
 * than to parse, so the loop parses it itself, a slice at a time.
 */
type Answer = { id: number; value: unknown; texts: Record<string, string> } | { id: number; parseHere: true } | { id: number; error: "syntax" | "depth" };

/** A body left this long once its large fields are cut is parsed again on the loop, in slices (see `Answer`). */
const CLONED_MAX_CHARS = 256 * 1024;

/**
 * What the thread runs: parse, check depth, cut each large named field out as its text. The
 * depth check is the same function the event loop runs (its source, which closes over nothing).
 */
const THREAD = `
const { parentPort } = require("node:worker_threads");
// What a parse leaves behind is collected at once: the thread does nothing else, and V8 would let
// the garbage of many large bodies grow its heap to the process's limit first.
require("node:v8").setFlagsFromString("--expose-gc");
const collect = require("node:vm").runInNewContext("gc");
const nestsDeeperThan = ${nestsDeeperThan.toString()};
const empty = (v) => (Array.isArray(v) ? [] : v === null ? null : typeof v === "object" ? {} : typeof v === "string" ? "" : typeof v === "number" ? 0 : false);
const answer = ({ id, text, fields, depthMax, large, clonedMax }) => {
  let value;
  try { value = JSON.parse(text); } catch { return { id, error: "syntax" }; }
  if (nestsDeeperThan(value, depthMax)) return { id, error: "depth" };
  const texts = {};
  let left = text.length;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const field of fields) {
      if (!Object.prototype.hasOwnProperty.call(value, field)) continue;
      const t = JSON.stringify(value[field]);
      if (t.length > large) { texts[field] = t; value[field] = empty(value[field]); left -= t.length; }
    }
  }
  if (left > clonedMax) return { id, parseHere: true };
  return { id, value, texts };
};
parentPort.on("message", (message) => {
  parentPort.postMessage(answer(message));
  collect();
});
`;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

let thread: Worker | undefined;
let nextId = 0;
const waiting = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();

/** The parsing thread, started on first use; it keeps the process alive only while it has work. */
function parser(): Worker {
  if (thread) return thread;
  const t = new Worker(THREAD, { eval: true });
  t.unref();
  t.on("message", (a: Answer) => {
    const w = waiting.get(a.id);
    waiting.delete(a.id);
    if (waiting.size === 0) t.unref();
    w?.resolve(a);
  });
  const lost = (e: Error) => {
    if (thread === t) thread = undefined;
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  };
  t.on("error", lost);
  t.on("exit", (code) => lost(new Error(`the JSON parsing thread exited (${code})`)));
  return (thread = t);
}

/**
 * Parses a large request body on a thread of its own, so that the event loop goes on answering
 * other requests meanwhile, and cuts out each of `fields` (top-level keys the route keeps as text,
 * such as a job's `input`) whose text is large: the event loop receives the small rest and those
 * texts, and never parses them. Refuses what `parseJsonBody` refuses, with the same messages.
 * Should the thread fail, the body is parsed on the event loop instead: slower, never wrong.
 */
export async function parseOffLoop(text: string, fields: readonly string[], hint: string): Promise<OffLoopBody> {
  let answer: Answer;
  try {
    answer = await new Promise<Answer>((resolve, reject) => {
      const id = nextId++;
      const t = parser();
      if (waiting.size === 0) t.ref();
      waiting.set(id, { resolve, reject });
      t.postMessage({ id, text, fields, depthMax: JSON_DEPTH_MAX, large: LARGE, clonedMax: CLONED_MAX_CHARS });
    });
  } catch {
    answer = onLoop(text, fields);
  }
  // Valid JSON, of many values: parsed here in slices, none longer than about 10 ms.
  if ("parseHere" in answer) return { value: await parseInSlices(text, { pause: nextTurn, now: () => performance.now() }), texts: {} };
  if ("error" in answer) {
    throw new EmulatorError(
      "BAD_REQUEST",
      answer.error === "syntax"
        ? `the request body is not valid JSON; ${hint}`
        : `the request body nests arrays and objects more than ${JSON_DEPTH_MAX} levels deep; flatten it, or send the deep part as a string`,
    );
  }
  return { value: answer.value, texts: answer.texts };
}

/** The thread's work, on the event loop (when the thread cannot be had). */
function onLoop(text: string, _fields: readonly string[]): Answer {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { id: -1, error: "syntax" };
  }
  if (nestsDeeperThan(value, JSON_DEPTH_MAX)) return { id: -1, error: "depth" };
  return { id: -1, value, texts: {} };
}

/**
 * The checked body with the texts cut out put back, each as a `RawJson`, where the check kept the
 * empty stand-in in its place (a field the schema drops or changes stays as the check left it).
 */
export function withTexts(checked: unknown, body: OffLoopBody): unknown {
  const names = Object.keys(body.texts);
  if (names.length === 0 || typeof checked !== "object" || checked === null) return checked;
  const out = { ...(checked as Record<string, unknown>) };
  for (const name of names) if (name in out) out[name] = new RawJson(body.texts[name]!);
  return out;
}
