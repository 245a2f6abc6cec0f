import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConfigError } from "./config/load.js";

/**
 * `minipod export FILE [--url URL] [--control-key KEY]`: saves a running emulator's whole state
 * (a SQLite file, secrets redacted) for `minipod --import FILE`.
 */
export async function exportCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { url: { type: "string" }, "control-key": { type: "string" } } });
  } catch (e) {
    throw new ConfigError(`${(e as Error).message}\nUsage: minipod export FILE [--url http://127.0.0.1:8080] [--control-key KEY]`);
  }
  const file = parsed.positionals[0];
  if (!file || parsed.positionals.length > 1) throw new ConfigError("Usage: minipod export FILE [--url http://127.0.0.1:8080] [--control-key KEY]");
  const url = (parsed.values.url ?? env.MINIPOD_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
  const key = parsed.values["control-key"] ?? env.MINIPOD_CONTROL_KEY;
  let res: Response;
  try {
    res = await fetch(`${url}/_emulator/export`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  } catch (e) {
    throw new ConfigError(`cannot reach minipod at ${url}: ${((e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message)}; is it running? (--url sets where)`);
  }
  if (!res.ok) throw new ConfigError(`minipod at ${url} answered ${res.status}: ${await res.text()}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  writeFileSync(file, bytes);
  process.stdout.write(`exported ${bytes.byteLength} bytes of state from ${url} to ${file}\n`);
}
