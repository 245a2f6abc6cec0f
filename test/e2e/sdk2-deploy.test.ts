import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { flashClientEnv, flashPython, PYTHON_PACKAGE, runCommand } from "../support/flash-python.js";
import { blocksOf } from "../support/readme.js";
import { STUBS } from "../support/shared.js";

// The SDK 2.x's `rp flash deploy`, unchanged, pointed at minipod: its vendoring step (pip into the
// artifact's env/) satisfied offline through pip's own variables, PIP_NO_INDEX and PIP_FIND_LINKS
// (the local wheel folder, and stand-ins this test makes for what that folder lacks), then its
// GraphQL, the artifact's upload and the endpoints of the environment, all to minipod. A plain
// script then calls the deployed functions with .remote() and .stream() (through /v2/flash/...),
// answered by minipod's queue runtime on the deployed path (minipod.runtimes.sdk_deployed); the
// @app.api class is served by its api runtime from the build, its routes called by the SDK at
// https://flash.{host}/... (under minipod.tls) and reached through /lb/{id} too; an @app.api
// function's FastAPI app (an app factory) is served by uvicorn, which the workers' venv has.
// The app, the commands and the script are docs/flash.md's, run as written.

const PAGE = "docs/flash.md";
const SECTION = "Deploy an SDK 2.x app: rp flash deploy";

const python = flashPython();
/** The local wheel folder (no registry here): MINIPOD_WHEELS, else /opt/pypi/files. */
const WHEELS = process.env.MINIPOD_WHEELS ?? "/opt/pypi/files";
const FIXTURES = fileURLToPath(new URL("../fixtures/sdk2/", import.meta.url));
const why = !existsSync(WHEELS) ? `no local wheel folder at ${WHEELS} (MINIPOD_WHEELS)` : !existsSync(join(STUBS, "aiohttp_retry")) ? `no Python stand-ins at ${STUBS}` : undefined;
if (python && why) console.warn(`rp flash deploy test skipped: ${why}`);

/** Runs `cmd` with `args` in `cwd` and `env` (killed past 200 s): its exit code and all it printed. */
const run = (cmd: string, args: string[], cwd: string, env: Record<string, string>) => runCommand(cmd, args, cwd, env, 200_000);

describe("docs/flash.md: rp flash deploy", () => {
  it("its commands are: rp flash deploy with pip's variables naming a wheels folder, then the script under minipod.tls", () => {
    const [commands] = blocksOf(PAGE, SECTION, "sh");
    const [deploy, call] = commands!.text.split("\n");
    expect(deploy).toBe('PIP_NO_INDEX=1 PIP_FIND_LINKS="$HOME/wheels" rp flash deploy');
    const [setting, ...args] = call!.split(" ");
    expect([setting!.split("=")[0], ...args]).toEqual(["SSL_CERT_FILE", "python", "-m", "minipod.tls", "--", "call.py"]);
  });
});

describe.skipIf(!python || why)("rp flash deploy through minipod, offline; then .remote() from a plain script", { timeout: 300_000 }, () => {
  let emu: Emulator;
  let tlsDir: string;
  const workerLines: string[] = [];
  beforeAll(async () => {
    tlsDir = mkdtempSync(join(tmpdir(), "minipod-sdk2-deploy-tls-"));
    // The workers' interpreter: the venv, whose runpod is the SDK 2.x.
    vi.stubEnv("MINIPOD_PYTHON", python!);
    vi.stubEnv("PYTHONPATH", "");
    emu = await createEmulator({ clock: "real", config: {}, tls: { dir: tlsDir }, log: (line) => workerLines.push(line) });
  });
  afterAll(async () => {
    await emu?.close();
    vi.unstubAllEnvs();
    rmSync(tlsDir, { recursive: true, force: true });
  });

  it("deploys the app; its queue functions answer .remote() and .stream(), its api class its routes", async () => {
    const root = mkdtempSync(join(tmpdir(), "minipod-sdk2-deploy-"));
    const project = join(root, "shop");
    mkdirSync(project);
    const [main, script] = blocksOf(PAGE, SECTION, "python").map((b) => b.text);
    writeFileSync(join(project, "main.py"), main!);
    const standIns = join(root, "stand-in-wheels");
    const made = spawnSync(python!, [join(FIXTURES, "standin_wheels.py"), standIns, STUBS], { encoding: "utf8", timeout: 60_000 });
    expect(made.status, made.stderr).toBe(0);
    const env = flashClientEnv(emu.url);

    // `rp flash deploy`, its pip step reading the local wheels and the stand-ins alone (for $HOME/wheels).
    const deployed = await run(join(dirname(python!), "rp"), ["flash", "deploy"], project, { ...env, PIP_NO_INDEX: "1", PIP_FIND_LINKS: `${WHEELS} ${standIns}` });
    expect(deployed.code, deployed.output).toBe(0);
    expect(deployed.output).toContain("shop/default is live");

    // The app, its environment with the build active, an endpoint per resource, of the runtime images.
    const res = await fetch(`${emu.url}/graphql`, {
      method: "POST",
      headers: { authorization: "Bearer any-key", "content-type": "application/json" },
      body: JSON.stringify({ query: "{ myself { flashApps { name flashEnvironments { name state endpoints { id name } } } } }" }),
    });
    const [app] = ((await res.json()) as any).data.myself.flashApps;
    expect(app).toMatchObject({ name: "shop", flashEnvironments: [{ name: "default", state: "HEALTHY" }] });
    const endpoints = Object.fromEntries(app.flashEnvironments[0].endpoints.map((e: { id: string; name: string }) => [e.name, e.id]));
    expect(Object.keys(endpoints).sort()).toEqual(["broken", "countdown", "greet", "inventory", "status"]);
    const kinds = Object.fromEntries(emu.endpoints().map((e) => [e.name, `${e.type ?? "QUEUE"} ${e.handler}`]));
    expect(kinds).toEqual({ broken: "QUEUE external", countdown: "QUEUE external", greet: "QUEUE external", inventory: "LOAD_BALANCER external", status: "LOAD_BALANCER external" });

    // A plain script calls the deployed app, in the project's folder under minipod.tls (trusting
    // minipod's authority, minipod's package importable), as the section runs it.
    writeFileSync(join(project, "call.py"), script!);
    const callerEnv = { ...env, SSL_CERT_FILE: emu.tls!.caFile, PYTHONPATH: PYTHON_PACKAGE };
    const called = await run(python!, ["-m", "minipod.tls", "--", "call.py"], project, callerEnv);
    expect(called.code, called.output).toBe(0);
    const said = (label: string) => called.output.split("\n").find((l) => l.startsWith(`${label}: `)) ?? `(no "${label}:" line in)\n${called.output}`;
    // The @init hook ran on the worker before its first job.
    expect(said("greet")).toBe("greet: hello world!");
    expect(said("greet again")).toBe("greet again: hello there?");
    // A generator's items: the job's output is their list, and .stream() yields them one by one.
    expect(said("countdown")).toBe("countdown: [{'left': 3}, {'left': 2}, {'left': 1}]");
    expect(said("stream")).toBe("stream: [{'left': 2}, {'left': 1}]");
    expect(said("broken")).toMatch(/^broken: remote execution failed: .*no luck with 7/);
    // What the function printed is in the worker's output.
    expect(workerLines.some((l) => l.endsWith("] greeting world"))).toBe(true);
    // The api class's routes, called by the SDK at https://flash.{host}/... with the app's names.
    expect(said("added")).toBe("added: {'items': {'apple': 3}}");
    expect(said("listed")).toBe("listed: {'items': {'apple': 3}}");
    expect(emu.requests({ endpoint: endpoints.inventory }).requests.map((r) => `${r.method} ${r.path}`).sort()).toEqual(["GET /lb/flash/items", "POST /lb/flash/items"]);
    // The app of the api factory, served by uvicorn (the venv has it) with FastAPI's routing.
    expect(said("status")).toBe("status: {'part': 'db', 'ok': True, 'verbose': True}");
    expect(workerLines.some((l) => l.includes("serving the ASGI app with uvicorn"))).toBe(true);

    // The same class's routes at /lb/{id}: the same instance.
    const lb = (method: string, path: string, body?: unknown) =>
      fetch(`${emu.url}/lb/${endpoints.inventory}${path}`, {
        method,
        headers: { authorization: "Bearer any-key", "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    expect(await lb("POST", "/items", { name: "pear", count: 2 })).toEqual({ status: 200, body: { items: { apple: 3, pear: 2 } } });
    // A deployed worker has no sync route: the module comes from the build only.
    expect((await lb("POST", "/_runpod/sync", { source: "", resource: "inventory" })).status).toBe(404);
  });
});
