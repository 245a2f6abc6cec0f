// The README's examples, run as a reader would run them against `npm start` (the real CLI with the
// demo endpoints of emulator.config.json), so that none of them can go stale. The manual clock
// stands in for the reader's patience: before each command the test runs the clock until no job
// waits or runs.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXPORT_FLAGS, FLAGS, WORKER_FLAGS, flagSyntax, type Flag } from "../../src/config/cli-args.js";
import { parseConfig } from "../../src/config/load.js";
import { blocksOf, curlRequest, matchesShown, README } from "../support/readme.js";
import { startCli, type RunningCli } from "../support/cli.js";

const README_URL = "http://127.0.0.1:8080";
const BIN = fileURLToPath(new URL("../../bin/minipod.js", import.meta.url));

describe("the README, run as written", () => {
  let cli: RunningCli;
  beforeAll(async () => {
    cli = await startCli(["--clock", "manual"]);
  });
  afterAll(async () => {
    expect(await cli.stop()).toBe(0);
  });

  const settle = async () => {
    const res = await fetch(`${cli.url}/_emulator/run-until-idle`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(200);
  };
  const send = async (line: string) => {
    const { url, init } = curlRequest(line.replaceAll(README_URL, cli.url));
    return (await fetch(url, init)).text();
  };

  it("shows the banner npm start prints", () => {
    const [banner] = blocksOf("Quick start", "").filter((b) => b.text.startsWith("minipod "));
    const shown = banner!.text.replaceAll(README_URL, cli.url).replace(/^minipod \S+/, "minipod");
    const printed = cli.stdout().replace(/^minipod \S+/, "minipod");
    for (const line of shown.split("\n").filter((l) => l.trim() !== "...")) expect(printed.split("\n")).toContain(line);
  });

  it("runs the runpod-sdk example, and it prints what its comments say", async () => {
    const [example] = blocksOf("Using it", "js");
    // The example as written, its console.log lines as JSON so that they can be read back.
    const sdk = pathToFileURL(createRequire(import.meta.url).resolve("runpod-sdk")).href;
    const script = example!.text.replaceAll(README_URL, cli.url).replace('from "runpod-sdk"', `from ${JSON.stringify(sdk)}`).replaceAll("console.log(", "__print(");
    const file = join(mkdtempSync(join(tmpdir(), "minipod-readme-")), "example.mjs");
    writeFileSync(file, `const __print = (v) => process.stdout.write(JSON.stringify(v) + "\\n");\n${script}\n`);
    const proc = spawn(process.execPath, [file], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
    let done = false;
    void exited.then(() => (done = true));
    // The stream's handler sleeps between words on the virtual clock: move it while the example runs.
    for (let i = 0; i < 2000 && !done; i++) await cli.advance(50);
    expect(await exited, err).toBe(0);
    const printed = out.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(printed).toEqual([
      expect.objectContaining({ status: "COMPLETED", output: { prompt: "hello" } }),
      expect.objectContaining({ id: expect.stringMatching(/^sync-/), status: "COMPLETED", output: { n: 1 } }),
      { output: { text: ["c"], tokens: 1 } },
      { output: { text: ["b"], tokens: 1 } },
      { output: { text: ["a"], tokens: 1 } },
      { id: printed[0]!.id, status: "COMPLETED" },
      { jobs: expect.objectContaining({ completed: 2 }), workers: expect.objectContaining({ idle: 1 }) },
      { removed: 0, status: "completed" },
    ]);
  });

  it("answers each curl example with what the README shows, a retry of a job that failed included", async () => {
    const [example] = blocksOf("Using it", "sh");
    const lines = example!.text.split("\n");
    let id: string | undefined;
    let checked = 0;
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith("curl ")) continue;
      await settle();
      const answer = await send(lines[i]!.replaceAll("<id>", id ?? "<id>"));
      if (/\/run$/.test(lines[i]!.trim())) id = (JSON.parse(answer) as { id: string }).id;
      const shown = lines[i + 1]?.startsWith("# {") ? lines[i + 1]!.slice(2) : undefined;
      expect(shown, `the README shows no answer under ${lines[i]}`).toBeDefined();
      expect(matchesShown(shown!, answer, id), `${lines[i]}\n  README: ${shown}\n  answer: ${answer}`).toBe(true);
      checked++;
    }
    expect(checked).toBe(lines.filter((l) => l.startsWith("curl ")).length);
    // The retry it shows is of a job that failed, and it completes.
    expect(lines.findIndex((l) => l.includes('"status":"FAILED"'))).toBeLessThan(lines.findIndex((l) => l.includes("/retry/")));
    expect(lines.at(-1)).toMatch(/"status":"COMPLETED".*"retries":1\}$/);
  });

  it("gives the errors[] of the Errors section for the requests it shows", async () => {
    const commands = blocksOf("Errors", "sh");
    const answers = blocksOf("Errors", "json");
    expect(commands.length).toBeGreaterThan(0);
    expect(answers).toHaveLength(commands.length);
    for (const [i, command] of commands.entries()) expect(await send(command.text)).toBe(answers[i]!.text);
  });

  it("shows configurations that minipod accepts", () => {
    const [example] = blocksOf("Configuration", "json");
    expect(parseConfig(JSON.parse(example!.text)).endpoints.map((e) => e.id)).toEqual(["echo", "slow", "mine", "gpu-box", "local-worker"]);
    const [keys] = blocksOf("Authentication", "json");
    expect(parseConfig(JSON.parse(`{${keys!.text}}`)).auth.keys).toHaveLength(3);
  });
});

describe("minipod started where there is no config", () => {
  it("serves the demo endpoints the Quick start names, and says where they come from", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "minipod-no-config-"));
    const proc = spawn(process.execPath, [BIN, "--port", "0", "--clock", "manual"], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
    try {
      await expect.poll(() => out, { timeout: 15_000 }).toContain("/v2/llm ");
      expect(out).toContain(`config      ${fileURLToPath(new URL("../../emulator.config.json", import.meta.url))}: the demo endpoints (no ./emulator.config.json here`);
      // Every endpoint the banner shows is named in the README, and no other.
      expect(README).toContain("demo endpoints of the `emulator.config.json` it ships: `echo`, `scripted`, `text-gen` and `llm`");
      const shown = [...out.matchAll(/^ {4}(\S+) +http:\/\/\S+\/v2\/(\S+) /gm)].map((m) => m[1]);
      expect(shown).toEqual(["echo", "llm", "scripted", "text-gen"]);
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});

describe("the README's worker in a few lines of JavaScript", () => {
  it("takes a job, posts progress, a stream chunk and the output", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-readme-worker-"));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ endpoints: [{ id: "gpu-box", handler: "external" }] }));
    const cli = await startCli(["--config", join(dir, "config.json"), "--clock", "manual"]);
    const [worker] = blocksOf("Running real workers", "js");
    writeFileSync(join(dir, "worker.mjs"), worker!.text.replaceAll(README_URL, cli.url));
    const auth = { authorization: "any-key" };
    const { id } = (await (await fetch(`${cli.url}/v2/gpu-box/run`, { method: "POST", headers: auth, body: JSON.stringify({ input: { prompt: "hi" } }) })).json()) as { id: string };
    const proc = spawn(process.execPath, [join(dir, "worker.mjs")], { stdio: "ignore" });
    try {
      await expect
        .poll(async () => (await (await fetch(`${cli.url}/v2/gpu-box/status/${id}`, { headers: auth })).json()) as object, { timeout: 15_000 })
        .toMatchObject({ status: "COMPLETED", output: { text: "done: hi" } });
      const stream = (await (await fetch(`${cli.url}/v2/gpu-box/stream/${id}`, { headers: auth })).json()) as object;
      expect(stream).toMatchObject({ status: "COMPLETED", stream: [{ output: "first words" }] });
      expect(cli.stderr()).not.toMatch(/ (4|5)\d\d [\d.]+ms$/m);
    } finally {
      proc.kill();
      await cli.stop();
    }
  });
});

/** A flag table as the README has it. */
const flagTable = (flags: readonly Flag[]): string =>
  [
    "| flag | default | environment | |",
    "|---|---|---|---|",
    ...flags.map((f) => `| \`${flagSyntax(f).replaceAll("|", "\\|")}\` | ${f.default || "—"} | ${f.env ? `\`${f.env}\`` : "—"} | ${f.text} |`),
  ].join("\n");

describe("the flags", () => {
  it.each([
    ["minipod", FLAGS, ["--help"]],
    ["minipod export", EXPORT_FLAGS, ["export", "--help"]],
    ["minipod worker", WORKER_FLAGS, ["worker", "--help"]],
  ] as const)("of %s: the README's table and --help list each of them, with its default and variable", (_command, flags, args) => {
    expect(README, `the README's table is stale; it should read:\n${flagTable(flags)}`).toContain(flagTable(flags));
    const help = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8" });
    expect(help.status).toBe(0);
    for (const f of flags) {
      const line = help.stdout.split("\n").find((l) => l.trimStart().startsWith(`${flagSyntax(f)} `));
      expect(line, `${flagSyntax(f)} in ${args.join(" ")}`).toBeDefined();
      if (f.default) expect(line).toContain(`default: ${f.default}`);
      if (f.env) expect(line).toContain(f.env);
    }
  });

  it("refuses an unknown flag of export with its usage", () => {
    const r = spawnSync(process.execPath, [BIN, "export", "--bogus"], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("Unknown option '--bogus'");
    expect(r.stderr).toContain("Usage: minipod export FILE");
  });
});
