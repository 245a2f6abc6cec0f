import { request } from "node:http";
import { benchConfig, supportsConfig } from "../lib/config.js";
import { agent } from "../lib/http.js";
import { AUTH, startBare, startMinipod, type Server } from "../lib/processes.js";

export type StreamTarget = "minipod" | "bare";

/** One streamed chat completion as the client saw it. */
export interface StreamSample {
  /** Wall ms from sending the request to the first content token. */
  ttftMs: number;
  /** Wall ms from sending the request to the end of the stream. */
  totalMs: number;
  /** Content chunks received. */
  tokens: number;
}

export interface StreamBatch {
  concurrency: number;
  samples: StreamSample[];
  /** Wall ms of the whole batch, for the rate of all its streams together. */
  wallMs: number;
}

/** Per round: streams one at a time, then `concurrent` at once. */
export interface StreamRuns {
  single: StreamBatch[];
  concurrent: StreamBatch[];
}

export interface StreamingResult {
  /** Tokens of the long streams (chunk rates); first tokens are timed on one-token streams. */
  tokens: number;
  streams: number;
  rounds: number;
  concurrent: number;
  firstToken: Record<StreamTarget, StreamRuns>;
  long: Record<StreamTarget, StreamRuns>;
  skipped?: string;
}

const PATH = "/v2/llm/openai/v1/chat/completions";
const CONTENT = /"delta":\{"content":"[^"]/g;

/** POSTs one streamed chat completion of `tokens` tokens and reads it to the end, timing the first token. */
function streamOnce(base: string, tokens: number): Promise<StreamSample> {
  const payload = JSON.stringify({ model: "minipod-llm", messages: [{ role: "user", content: "benchmark" }], stream: true, max_tokens: tokens });
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let ttftMs = NaN;
    let tail = "";
    let count = 0;
    const req = request(
      `${base}${PATH}`,
      { method: "POST", agent, headers: { ...AUTH, "content-type": "application/json", "content-length": Buffer.byteLength(payload) } },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`${PATH} answered ${res.statusCode}`));
        res.setEncoding("utf8");
        res.on("data", (piece: string) => {
          // Matched on the last bytes of the previous piece and this one, so a token split between
          // two pieces counts once.
          const before = tail.match(CONTENT)?.length ?? 0;
          const text = tail + piece;
          const found = (text.match(CONTENT)?.length ?? 0) - before;
          if (found > 0 && Number.isNaN(ttftMs)) ttftMs = performance.now() - started;
          count += found;
          tail = text.slice(-64);
        });
        res.on("end", () => resolve({ ttftMs, totalMs: performance.now() - started, tokens: count }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

async function batch(base: string, tokens: number, concurrency: number, streams: number): Promise<StreamBatch> {
  const samples: StreamSample[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < streams) {
        next++;
        samples.push(await streamOnce(base, tokens));
      }
    }),
  );
  const wallMs = performance.now() - started;
  for (const s of samples) if (s.tokens !== tokens) throw new Error(`a stream of ${base} gave ${s.tokens} tokens, not ${tokens}`);
  return { concurrency, samples, wallMs };
}

const runs = (): Record<StreamTarget, StreamRuns> => ({ minipod: { single: [], concurrent: [] }, bare: { single: [], concurrent: [] } });

/**
 * Streamed chat completions (`stream: true`) read to the end by a node:http client: minipod's
 * built-in `openai` handler with no token delay (each request a job on a warm worker, each token a
 * stream chunk stored and relayed as an SSE event), side by side with a bare SSE route on the same
 * stack (Hono on @hono/node-server, the same events with no job behind them). The time to the
 * first token is taken on one-token streams: a handler that never waits makes its whole reply in
 * one turn of the event loop, so on a long one nothing could leave before its last token. Chunk
 * rates are taken on streams of `tokens` tokens. Each round runs both servers one after the other:
 * `streams` streams one at a time, then `concurrent × streams` with `concurrent` at once.
 */
export async function streaming(tokens: number, streams: number, rounds: number, log: (line: string) => void): Promise<StreamingResult> {
  const concurrent = 8;
  const result: StreamingResult = { tokens, streams, rounds, concurrent, firstToken: runs(), long: runs() };
  const llm = { id: "llm", handler: "openai", workersMin: concurrent, workersMax: concurrent, coldStartMs: 0, idleTimeout: 3600, openai: { tokenDelayMs: 0, replyTokens: Math.min(tokens, 4096) } };
  if (!(await supportsConfig({ endpoints: [llm] }))) {
    result.skipped = "this build has no openai handler";
    return result;
  }
  const servers: Partial<Record<StreamTarget, Server>> = {};
  try {
    servers.minipod = await startMinipod({ config: await benchConfig([llm]) });
    servers.bare = await startBare();
    for (const target of ["minipod", "bare"] as const) await batch(servers[target]!.url, tokens, 2, 4); // warm-up
    for (let round = 1; round <= rounds; round++) {
      for (const target of ["minipod", "bare"] as const) {
        log(`streaming: round ${round}/${rounds} ${target}`);
        const url = servers[target]!.url;
        result.firstToken[target].single.push(await batch(url, 1, 1, streams * 2));
        result.firstToken[target].concurrent.push(await batch(url, 1, concurrent, streams * concurrent));
        result.long[target].single.push(await batch(url, tokens, 1, streams));
        result.long[target].concurrent.push(await batch(url, tokens, concurrent, streams * concurrent));
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
  return result;
}
