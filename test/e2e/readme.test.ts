// The examples of README.md and docs/, run as a reader would run them against `npm start` (the real
// CLI with the demo endpoints of emulator.config.json, on its default clock), so that none of them
// can go stale. Each example is read from the file and section it stands in.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HUB_TEST_FLAGS } from "../../src/cli/hub-test.js";
import { EXPORT_FLAGS, FLAGS, WORKER_FLAGS, flagSyntax, type Flag } from "../../src/config/cli-args.js";
import { parseConfig } from "../../src/compose/config.js";
import { blocksOf, curlRequest, DOC_URL, markdown, matchesShown, README, runExample, runUntilIdle, shellWords } from "../support/readme.js";
import { workerEnv } from "../../src/launch/worker-process.js";
import { startCli, type RunningCli } from "../support/cli.js";
import { PYTHON, pythonAvailable, pythonEnv } from "../support/python.js";

const BIN = fileURLToPath(new URL("../../bin/minipod.js", import.meta.url));
const available = pythonAvailable();

describe("the README and docs/, run as written against npm start", () => {
  let cli: RunningCli;
  beforeAll(async () => {
    cli = await startCli([]);
  });
  afterAll(async () => {
    expect(await cli.stop()).toBe(0);
  });

  const send = async (line: string, to = cli) => {
    const { url, init } = curlRequest(line.replaceAll(DOC_URL, to.url));
    return (await fetch(url, init)).text();
  };

  it("shows the banner npm start prints", () => {
    const [banner] = blocksOf("README.md", "Quick start", "").filter((b) => b.text.startsWith("minipod "));
    const shown = banner!.text.replaceAll(DOC_URL, cli.url).replace(/^minipod \S+/, "minipod");
    const printed = cli.stdout().replace(/^minipod \S+/, "minipod");
    for (const line of shown.split("\n").filter((l) => l.trim() !== "...")) expect(printed.split("\n")).toContain(line);
  });

  it("runs the runpod-sdk example, and it prints what its comments say", async () => {
    const [example] = blocksOf("README.md", "From JavaScript", "js");
    const { code, printed, err } = await runExample(example!.text, cli.url);
    expect(code, err).toBe(0);
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

  it("runs the examples of the openai SDK and the AI SDK against the llm endpoint", async () => {
    const examples = blocksOf("docs/openai.md", "OpenAI-compatible routes", "js");
    expect(examples).toHaveLength(2);
    for (const example of examples) {
      const { code, out, err } = await runExample(example.text, cli.url);
      expect(code, err).toBe(0);
      expect(out.trim().split(/\s+/).length, out).toBeGreaterThan(4);
    }
  });

  it("answers each curl example of the queue API with what it shows, a retry of a job that failed included", async () => {
    // The transcript shows a job's delayTime and executionTime to the millisecond, which only a
    // clock that moves when told gives: the manual clock, run until no job waits or runs before
    // each command, as the reader's patience would.
    const manual = await startCli(["--clock", "manual"]);
    const [example] = blocksOf("docs/queue-api.md", "Trying it with curl", "sh");
    const lines = example!.text.split("\n");
    let id: string | undefined;
    let checked = 0;
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith("curl ")) continue;
      await runUntilIdle(manual.url);
      const answer = await send(lines[i]!.replaceAll("<id>", id ?? "<id>"), manual);
      if (/\/run$/.test(lines[i]!.trim())) id = (JSON.parse(answer) as { id: string }).id;
      const shown = lines[i + 1]?.startsWith("# {") ? lines[i + 1]!.slice(2) : undefined;
      expect(shown, `docs/queue-api.md shows no answer under ${lines[i]}`).toBeDefined();
      expect(matchesShown(shown!, answer, id), `${lines[i]}\n  shown:  ${shown}\n  answer: ${answer}`).toBe(true);
      checked++;
    }
    expect(checked).toBe(lines.filter((l) => l.startsWith("curl ")).length);
    expect(await manual.stop()).toBe(0);
    // The retry it shows is of a job that failed, and it completes.
    expect(lines.findIndex((l) => l.includes('"status":"FAILED"'))).toBeLessThan(lines.findIndex((l) => l.includes("/retry/")));
    expect(lines.at(-1)).toMatch(/"status":"COMPLETED".*"retries":1\}$/);
  });

  it("gives the errors[] of the Errors section for the requests it shows", async () => {
    const commands = blocksOf("docs/limits.md", "Errors", "sh");
    const answers = blocksOf("docs/limits.md", "Errors", "json");
    expect(commands.length).toBeGreaterThan(0);
    expect(answers).toHaveLength(commands.length);
    for (const [i, command] of commands.entries()) expect(await send(command.text)).toBe(answers[i]!.text);
  });

  it("shows configurations that minipod accepts", () => {
    const [example] = blocksOf("docs/configuration.md", "The config file", "json");
    expect(parseConfig(JSON.parse(example!.text)).endpoints.map((e) => e.id)).toEqual(["echo", "slow", "mine", "gpu-box", "local-worker"]);
    const [keys] = blocksOf("docs/security.md", "Authentication", "json");
    expect(parseConfig(JSON.parse(`{${keys!.text}}`)).auth.keys).toHaveLength(3);
    const [essential] = blocksOf("README.md", "Essential configuration", "json");
    const parsed = parseConfig(JSON.parse(essential!.text));
    expect(parsed.endpoints.map((e) => e.id)).toEqual(["echo", "gen", "gpu-box"]);
    expect(parsed.auth.keys).toHaveLength(1);
    const [llm] = blocksOf("docs/openai.md", "The built-in `openai` handler", "json");
    expect(parseConfig({ endpoints: [JSON.parse(llm!.text)] }).endpoints[0]).toMatchObject({ id: "llm", handler: "openai", openai: { models: ["org/my-model"], tokenDelayMs: 30 } });
    const [external] = blocksOf("README.md", "From Python", "json");
    expect(parseConfig(JSON.parse(external!.text)).endpoints).toMatchObject([{ id: "gpu-box", handler: "external" }]);
  });
});

describe("the README's createEmulator example", () => {
  it("starts minipod in the program, on a free port, and runs a job through runpod-sdk", async () => {
    const examples = blocksOf("README.md", "From JavaScript", "js").filter((b) => b.text.includes("createEmulator"));
    expect(examples).toHaveLength(1);
    expect(examples[0]!.text).toContain("createEmulator({ port: 0");
    const { code, printed, err } = await runExample(examples[0]!.text, DOC_URL);
    expect(code, err).toBe(0);
    expect(printed).toEqual([expect.objectContaining({ id: expect.stringMatching(/^sync-/), status: "COMPLETED", output: { n: 1 } })]);
  });
});

describe.skipIf(!available)("the Python example without pytest (docs/python.md): a handler under minipod worker, and the client", { timeout: 90_000 }, () => {
  it("prints what its comment says, with runpod.endpoint_url_base and with RUNPOD_ENDPOINT_BASE_URL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-readme-python-"));
    const [config] = blocksOf("README.md", "From Python", "json");
    const [handler, client] = blocksOf("docs/python.md", "Without pytest", "python");
    const [commands] = blocksOf("docs/python.md", "Without pytest", "sh");
    expect(handler!.text).toContain("runpod.serverless.start(");
    writeFileSync(join(dir, "emulator.config.json"), config!.text);
    writeFileSync(join(dir, "handler.py"), handler!.text);
    // The commands it shows: minipod on that config, the worker of handler.py, the client.
    const lines = commands!.text.split("\n").map((l) => l.replace(/\s+#.*$/, ""));
    expect(lines).toEqual(["minipod", "minipod worker -- python handler.py", "python client.py"]);
    const cli = await startCli(["--config", join(dir, "emulator.config.json")]);
    const worker = spawn(process.execPath, [BIN, "worker", "--url", cli.url, "--", PYTHON, "handler.py"], { cwd: dir, env: pythonEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let workerOut = "";
    worker.stdout.on("data", (d: Buffer) => (workerOut += d.toString()));
    worker.stderr.on("data", (d: Buffer) => (workerOut += d.toString()));
    const workerExited = new Promise<number | null>((resolve) => worker.once("exit", resolve));
    const python = (file: string, env: Record<string, string> = {}) => {
      const r = spawnSync(PYTHON, [file], { cwd: dir, env: pythonEnv(env), encoding: "utf8", timeout: 60_000 });
      expect(r.status, `${r.stdout}${r.stderr}\nworker:\n${workerOut}`).toBe(0);
      return r.stdout.trim();
    };
    try {
      const shown = /^# (.*)$/m.exec(client!.text)![1]!;
      writeFileSync(join(dir, "client.py"), client!.text.replaceAll(DOC_URL, cli.url));
      expect(python("client.py")).toBe(shown);
      // Without the line that sets endpoint_url_base, the variable it names does the same.
      const [setLine] = client!.text.split("\n").filter((l) => l.startsWith("runpod.endpoint_url_base"));
      expect(setLine).toContain("RUNPOD_ENDPOINT_BASE_URL=");
      writeFileSync(join(dir, "client-env.py"), client!.text.replace(setLine!, ""));
      expect(python("client-env.py", { RUNPOD_ENDPOINT_BASE_URL: `${cli.url}/v2` })).toBe(shown);
    } finally {
      worker.kill("SIGTERM");
      await workerExited;
      await cli.stop();
    }
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
      // In the config's order, as the README names them.
      expect(shown).toEqual(["echo", "scripted", "text-gen", "llm"]);
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});

describe("the worker in a few lines of JavaScript (docs/workers.md)", () => {
  it("takes a job, posts progress, a stream chunk and the output", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-readme-worker-"));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ endpoints: [{ id: "gpu-box", handler: "external" }] }));
    const cli = await startCli(["--config", join(dir, "config.json")]);
    const [worker] = blocksOf("docs/workers.md", "The protocol", "js");
    writeFileSync(join(dir, "worker.mjs"), worker!.text.replaceAll(DOC_URL, cli.url));
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

describe("examples of docs/ that stand for code elsewhere", () => {
  it("the environment of a worker in docs/workers.md is what minipod worker sets", () => {
    const [block] = blocksOf("docs/workers.md", "The environment of a worker", "sh");
    const shown: Record<string, string> = {};
    for (const line of block!.text.split("\n").filter((l) => l.startsWith("export "))) {
      for (const word of shellWords(line.replace(/\s+#.*$/, "")).slice(1)) {
        const [name, ...value] = word.split("=");
        shown[name!] = value.join("=").replace(/^'(.*)'$/, "$1"); // NAME='value': the shell takes the quotes off
      }
    }
    expect(shown).toEqual(workerEnv({ url: DOC_URL, endpoint: "gpu-box", workerId: "worker-1", key: "any-key", pingIntervalMs: 10_000 }));
  });

  it("the handler serving OpenAI routes in docs/openai.md is fixtures/handlers/openai-chat.ts, which the HTTP tests run", () => {
    const [shown] = blocksOf("docs/openai.md", "Serving OpenAI routes from your own handler", "ts");
    const code = (text: string) =>
      text
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .split("\n")
        .map((l) => l.replace(/\s*\/\/.*$/, "").trim())
        .filter((l) => l && !l.startsWith("import "))
        .join("\n");
    expect(code(shown!.text)).toBe(code(readFileSync(new URL("../../fixtures/handlers/openai-chat.ts", import.meta.url), "utf8")));
  });
});

/** A flag table as the documentation has it. */
const flagTable = (flags: readonly Flag[]): string =>
  [
    "| flag | default | environment | |",
    "|---|---|---|---|",
    ...flags.map((f) => `| \`${flagSyntax(f).replaceAll("|", "\\|")}\` | ${f.default || "—"} | ${f.env ? `\`${f.env}\`` : "—"} | ${f.text} |`),
  ].join("\n");

describe("the flags", () => {
  it.each([
    ["minipod", FLAGS, ["--help"], "docs/configuration.md"],
    ["minipod export", EXPORT_FLAGS, ["export", "--help"], "docs/configuration.md"],
    ["minipod worker", WORKER_FLAGS, ["worker", "--help"], "docs/workers.md"],
    ["minipod hub-test", HUB_TEST_FLAGS, ["hub-test", "--help"], "docs/python.md"],
  ] as const)("of %s: the table of the docs and --help list each of them, with its default and variable", (_command, flags, args, file) => {
    expect(markdown(file), `the table of ${file} is stale; it should read:\n${flagTable(flags)}`).toContain(flagTable(flags));
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
    expect(r.stderr).toContain("minipod: unknown flag --bogus\n\nUsage: minipod export FILE");
    const near = spawnSync(process.execPath, [BIN, "export", "x.sqlite", "--ulr", "http://127.0.0.1:9"], { encoding: "utf8" });
    expect(near.stderr).toContain("minipod: unknown flag --ulr: did you mean --url?");
  });
});
