import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createEmulator, type Emulator } from "../compose/emulator.js";
import { options, parseFlags, type Flag } from "../config/cli-args.js";
import { ConfigError } from "../config/load.js";
import type { JobView } from "../domain/job.js";
import type { WorkerProcess } from "../launch/worker-process.js";
import { readHubFiles, type HubTest } from "./hub-files.js";

/** The flags of `minipod hub-test [DIR]`. */
export const HUB_TEST_FLAGS: readonly Flag[] = [
  { name: "junit", arg: "FILE", default: "", text: "also write the results as JUnit XML to FILE" },
  { name: "timeout", arg: "MS", default: "300000", text: "wall ms a test without its own timeout has to complete" },
  { name: "python", arg: "CMD", env: "MINIPOD_PYTHON", default: "python3", text: "the Python that runs the handler found in DIR (not used with -- CMD)" },
  { name: "verbose", default: "", text: "print the worker's output as it comes (else only when a test fails)" },
  { name: "help", short: "h", default: "", text: "this help" },
];

export const HUB_TEST_USAGE = `Usage: minipod hub-test [DIR] [options] [-- CMD [ARGS...]]

Runs the tests the service's Hub runs after a release, locally: reads DIR/.runpod/tests.json (or
test_input.json) and DIR/.runpod/hub.json (checking the fields the Hub documents), starts the
worker (DIR's handler.py, .runpod/handler.py, src/handler.py or rp_handler.py, or CMD) with the
environment of tests.json's config.env under the service's worker runtime, submits each test's
input as a job, and passes a test when its job is COMPLETED within its timeout. Prints a table;
exits 1 when a test fails, 2 when the files have problems.

Options:
${options(HUB_TEST_FLAGS)}`;

const HANDLERS = [".runpod/handler.py", "handler.py", "src/handler.py", "rp_handler.py", "src/rp_handler.py"];
const ENDPOINT = "hub-test";
const READY_WITHIN_MS = 120_000;

/** What became of one test. */
export interface HubResult {
  name: string;
  result: "passed" | "failed" | "timed out";
  ms: number;
  detail: string;
}

/** The handler's command: CMD after --, else the first handler file found in the folder. */
function workerCommand(dir: string, command: string[], python: string): string[] {
  if (command.length > 0) return command;
  const file = HANDLERS.find((f) => existsSync(join(dir, f)));
  if (!file) throw new ConfigError(`no handler in ${dir} (looked for ${HANDLERS.join(", ")}): give the command after --, e.g. minipod hub-test ${dir} -- python3 -u src/main.py`);
  return [python, "-u", file];
}

/** The error a failed job carries, shortened to the runtime's error message when it is its JSON report. */
function errorOf(job: JobView | undefined): string {
  const error = job?.error ?? "";
  try {
    const report = JSON.parse(error) as { error_type?: string; error_message?: string };
    if (report.error_message) return `${report.error_type ? `${report.error_type.replace(/^<class '(.*)'>$/, "$1")}: ` : ""}${report.error_message}`;
  } catch {
    // not the runtime's report: the text as it is
  }
  return error || `ended ${job?.status ?? "unknown"}`;
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function waitForWorker(emu: Emulator, proc: WorkerProcess, lines: string[]): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`the worker exited before it took a job:\n${lines.slice(-30).join("\n")}`);
    const { workers } = await json<{ workers: Array<{ id: string; state: string; openPolls: number }> }>(await fetch(`${emu.url}/_emulator/workers?endpoint=${ENDPOINT}`));
    if (workers.some((w) => w.id === proc.workerId && w.state !== "lost" && w.state !== "stopped" && w.openPolls > 0)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the worker did not ask for a job within ${READY_WITHIN_MS / 1000} s:\n${lines.slice(-30).join("\n")}`);
}

/** Runs one test: submit, wait up to its timeout in wall time (the clock is real), classify. */
async function runTest(emu: Emulator, test: HubTest, timeoutMs: number): Promise<HubResult> {
  const started = Date.now();
  const auth = { authorization: "minipod-hub-test", "content-type": "application/json" };
  const { id } = await json<{ id: string }>(await fetch(`${emu.url}/v2/${ENDPOINT}/run`, { method: "POST", headers: auth, body: JSON.stringify({ input: test.input }) }));
  const limit = test.timeout ?? timeoutMs;
  const done = await emu.waitForJob(ENDPOINT, id, "COMPLETED", limit).catch(() => undefined);
  const ms = Date.now() - started;
  if (done) return { name: test.name, result: "passed", ms, detail: "" };
  const job = await json<JobView>(await fetch(`${emu.url}/v2/${ENDPOINT}/status/${id}`, { headers: auth }));
  if (job.status === "IN_QUEUE" || job.status === "IN_PROGRESS") {
    await fetch(`${emu.url}/v2/${ENDPOINT}/cancel/${id}`, { method: "POST", headers: auth });
    return { name: test.name, result: "timed out", ms, detail: `not completed within ${limit} ms (still ${job.status})` };
  }
  return { name: test.name, result: "failed", ms, detail: `${job.status}: ${errorOf(job)}` };
}

/** The results as a table, one line a test. */
export function table(results: HubResult[]): string {
  const rows = [["test", "result", "time", "detail"], ...results.map((r) => [r.name, r.result === "passed" ? "passed" : r.result.toUpperCase(), `${(r.ms / 1000).toFixed(2)} s`, r.detail])];
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows.map((row) => `  ${row.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]!) : cell)).join("   ")}`.trimEnd()).join("\n");
}

// Control characters other than tab and line ends may not stand in XML at all.
// eslint-disable-next-line no-control-regex
const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");

/** The results as JUnit XML: one testsuite, one testcase a test, the worker's output alongside. */
export function junit(results: HubResult[], workerOutput: string[]): string {
  const failures = results.filter((r) => r.result !== "passed").length;
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const total = seconds(results.reduce((t, r) => t + r.ms, 0));
  const cases = results.map((r) => {
    const head = `    <testcase classname="${ENDPOINT}" name="${xml(r.name)}" time="${seconds(r.ms)}"`;
    return r.result === "passed" ? `${head}/>` : `${head}>\n      <failure type="${r.result}" message="${xml(r.detail)}">${xml(r.detail)}</failure>\n    </testcase>`;
  });
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="minipod hub-test" tests="${results.length}" failures="${failures}" time="${total}">`,
    `  <testsuite name="${ENDPOINT}" tests="${results.length}" failures="${failures}" errors="0" skipped="0" time="${total}">`,
    ...cases,
    `    <system-out>${xml(workerOutput.join("\n"))}</system-out>`,
    `  </testsuite>`,
    `</testsuites>`,
    "",
  ].join("\n");
}

/** `minipod hub-test [DIR] [options] [-- CMD]`: resolves with the exit code. */
export async function hubTestCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  const { values, positionals } = parseFlags(own, HUB_TEST_FLAGS, HUB_TEST_USAGE, true);
  if (values.help) {
    process.stdout.write(HUB_TEST_USAGE + "\n");
    return 0;
  }
  if (positionals.length > 1) throw new ConfigError(`hub-test takes one folder, got ${positionals.join(" ")}\n\n${HUB_TEST_USAGE}`);
  const dir = resolve(positionals[0] ?? ".");
  const timeoutText = values.timeout as string | undefined;
  const timeoutMs = timeoutText === undefined ? 300_000 : Number(timeoutText);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new ConfigError(`--timeout must be a positive integer of milliseconds, got "${timeoutText}"`);
  const out = (s: string) => process.stdout.write(s + "\n");

  const files = readHubFiles(dir);
  for (const note of files.notes) out(`note: ${note}`);
  if (files.problems.length > 0) {
    process.stderr.write(`minipod hub-test: ${files.problems.length} problem(s) in ${dir}:\n${files.problems.map((p) => `  - ${p}`).join("\n")}\n`);
    return 2;
  }
  const cmd = workerCommand(dir, command, (values.python as string | undefined) ?? env.MINIPOD_PYTHON ?? "python3");
  const envNames = Object.keys(files.env);
  out(
    `minipod hub-test: ${files.tests.length} test(s) from ${files.testsSource}${files.hubSource ? `, ${files.hubSource} checked` : ""}; worker: ${cmd.join(" ")}${envNames.length ? ` (env ${envNames.join(", ")})` : ""}\n`,
  );

  // Real time: a test's timeout is wall time, as on the Hub.
  const emu = await createEmulator({ port: 0, clock: "real", logLevel: "error", log: (line) => process.stderr.write(line + "\n"), config: { endpoints: [{ id: ENDPOINT, handler: "external" }] } });
  const lines: string[] = [];
  const start = () =>
    emu.startWorker({
      endpoint: ENDPOINT,
      command: cmd,
      cwd: dir,
      env: files.env,
      output: (line) => {
        lines.push(line);
        if (values.verbose) process.stderr.write(line + "\n");
      },
    });
  const results: HubResult[] = [];
  try {
    let proc = start();
    await waitForWorker(emu, proc, lines);
    for (const [i, test] of files.tests.entries()) {
      const result = await runTest(emu, test, timeoutMs);
      results.push(result);
      // A worker still busy with a job that timed out would hold the next test up: start afresh.
      if (result.result === "timed out" && i < files.tests.length - 1) {
        await proc.stop();
        proc = start();
        await waitForWorker(emu, proc, lines);
      }
    }
  } catch (e) {
    for (const test of files.tests.slice(results.length)) results.push({ name: test.name, result: "failed", ms: 0, detail: (e as Error).message.split("\n")[0]! });
    process.stderr.write(`minipod hub-test: ${(e as Error).message}\n`);
  } finally {
    await emu.close();
  }
  out(table(results));
  const failed = results.filter((r) => r.result !== "passed");
  if (failed.length > 0 && !values.verbose) process.stderr.write(`\nthe worker's output (last 40 lines):\n${lines.slice(-40).join("\n")}\n`);
  out(`\n${failed.length === 0 ? `all ${results.length} passed` : `${failed.length} of ${results.length} failed`}`);
  if (values.junit) {
    writeFileSync(values.junit as string, junit(results, lines));
    out(`JUnit XML: ${values.junit as string}`);
  }
  return failed.length === 0 ? 0 : 1;
}
