// The examples of docs/batches.md, run as a reader would run them against `npm start` (the real CLI
// with the demo endpoints), on the manual clock: the test runs the clock until no job waits or
// runs before each curl command, and all along while the Python example polls.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type RunningCli } from "../support/cli.js";
import { PYTHON, pythonAvailable, pythonEnv } from "../support/python.js";
import { blocksOf, curlRequest, runUntilIdle } from "../support/readme.js";

const DOC_URL = "http://127.0.0.1:8080";
const available = pythonAvailable();

describe("docs/batches.md, run as written against npm start", { timeout: 60_000 }, () => {
  let cli: RunningCli;
  beforeAll(async () => {
    cli = await startCli(["--clock", "manual"]);
  });
  afterAll(async () => {
    expect(await cli.stop()).toBe(0);
  });
  const settle = () => runUntilIdle(cli.url);

  it("answers each curl example with the fields it shows", async () => {
    const [example] = blocksOf("docs/batches.md", "With curl", "sh");
    const lines = example!.text.split("\n");
    let batch: string | undefined;
    let checked = 0;
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith("curl ")) continue;
      await settle();
      const { url, init } = curlRequest(lines[i]!.replaceAll(DOC_URL, cli.url).replaceAll("<batch>", batch ?? "<batch>"));
      const res = await fetch(url, init);
      expect(res.status, lines[i]).toBe(200);
      const answer = (await res.json()) as Record<string, unknown>;
      batch ??= answer.id as string;
      const shown = lines[i + 1]!;
      expect(shown.startsWith("# {"), `docs/batches.md shows no answer under ${lines[i]}`).toBe(true);
      expect(answer, lines[i]).toMatchObject(JSON.parse(shown.slice(2).replaceAll("<batch>", batch)) as Record<string, unknown>);
      checked++;
    }
    expect(checked).toBe(6);
  });

  it.skipIf(!available)("runs the Python requests example, which prints what its comments say", async () => {
    const [example] = blocksOf("docs/batches.md", "With Python `requests`", "python");
    const dir = mkdtempSync(join(tmpdir(), "minipod-batch-docs-"));
    writeFileSync(join(dir, "batch.py"), example!.text.replaceAll(DOC_URL, cli.url));
    const child = spawn(PYTHON, ["batch.py"], { cwd: dir, env: pythonEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    let exited = false;
    const code = new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c))).finally(() => (exited = true));
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    // The reader's patience: virtual time runs while the script polls.
    while (!exited) {
      await settle();
      await new Promise((r) => setTimeout(r, 50));
    }
    clearTimeout(killer);
    expect(await code, out).toBe(0);
    const shown = example!.text
      .split("\n")
      .filter((l) => l.startsWith("# "))
      .map((l) => l.slice(2));
    expect(out.trim().split("\n")).toEqual(shown);
  });
});
