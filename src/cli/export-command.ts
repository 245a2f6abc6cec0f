import { createWriteStream, statSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream } from "node:stream/web";
import { EXPORT_FLAGS, EXPORT_USAGE, parseFlags } from "../config/cli-args.js";
import { ConfigError } from "../config/load.js";

const DEFAULT_URL = EXPORT_FLAGS.find((f) => f.name === "url")!.default;

/**
 * `minipod export FILE [--url URL] [--control-key KEY]`: saves a running emulator's whole state
 * (a SQLite file, secrets redacted) for `minipod --import FILE`.
 */
export async function exportCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const parsed = parseFlags(argv, EXPORT_FLAGS, EXPORT_USAGE, true);
  if (parsed.values.help === true) {
    process.stdout.write(EXPORT_USAGE + "\n");
    return;
  }
  const file = parsed.positionals[0];
  if (!file || parsed.positionals.length > 1) throw new ConfigError(`${file ? "one FILE only" : "FILE is missing"}\n\n${EXPORT_USAGE}`);
  const url = ((parsed.values.url as string | undefined) ?? env.MINIPOD_URL ?? DEFAULT_URL).replace(/\/+$/, "");
  const key = (parsed.values["control-key"] as string | undefined) ?? env.MINIPOD_CONTROL_KEY;
  let res: Response;
  try {
    res = await fetch(`${url}/_emulator/export`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  } catch (e) {
    throw new ConfigError(`cannot reach minipod at ${url}: ${((e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message)}; is it running? (--url sets where)`);
  }
  if (!res.ok) throw new ConfigError(`minipod at ${url} answered ${res.status}: ${await res.text()}`);
  // Written as it arrives: a state of hundreds of megabytes is never whole in memory.
  await pipeline(Readable.fromWeb(res.body as ReadableStream<Uint8Array>), createWriteStream(file));
  process.stdout.write(`exported ${statSync(file).size} bytes of state from ${url} to ${file}\n`);
}
