import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { clientsFolder, flashClientEnv, flashPython, PYTHON_PACKAGE, runFlashPython } from "../support/flash-python.js";
import { blocksOf, shellWords } from "../support/readme.js";

// Both Python SDKs call a load-balancing endpoint at https://{endpoint_id}.{host of
// RUNPOD_ENDPOINT_BASE_URL}, always https. minipod answers TLS on its port with a certificate of
// its local authority; the client process trusts it (SSL_CERT_FILE) and resolves the endpoint's
// name to 127.0.0.1 (`python -m minipod.tls --`, what minipod's Python package gives a program a
// test starts): the SDKs themselves are unchanged. Not recorded: the recorder relays plain HTTP
// (see test/contract/recorded.test.ts).

const python = flashPython();
const FIXTURES = fileURLToPath(new URL("../fixtures/https/", import.meta.url));

/** Runs `args` (after `python -m minipod.tls --`) in `cwd`, killed past 150 s: its exit code and all it printed. */
const runResolved = (args: string[], cwd: string, env: Record<string, string>) => runFlashPython(["-m", "minipod.tls", "--", ...args], cwd, env);

describe.skipIf(!python)("the Python SDKs' https calls to a load-balancing endpoint reach minipod", { timeout: 180_000 }, () => {
  let emu: Emulator;
  let tlsDir: string;
    beforeAll(async () => {
    tlsDir = mkdtempSync(join(tmpdir(), "minipod-sdk-tls-"));
    // The workers' interpreter: the venv; Flash's load-balanced worker and the api worker are minipod's.
    vi.stubEnv("MINIPOD_PYTHON", python!);
    vi.stubEnv("PYTHONPATH", "");
    // A load-balancing endpoint of minipod's built-in echo worker, for runpod-flash's client mode.
    const config = { endpoints: [{ id: "lb-echo", type: "LOAD_BALANCER" as const, handler: "echo" }] };
    emu = await createEmulator({ clock: "real", config, tls: { dir: tlsDir }, log: () => {} });
  });
  afterAll(async () => {
    await emu?.close();
    vi.unstubAllEnvs();
    rmSync(tlsDir, { recursive: true, force: true });
  });

  /** The client's environment: pointed at minipod by its URL variables, trusting its authority, minipod's package importable. */
  const clientEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...flashClientEnv(emu.url, extra),
    SSL_CERT_FILE: emu.tls!.caFile,
    PYTHONPATH: PYTHON_PACKAGE,
    MINIPOD_RESOLVE_HOST: "127.0.0.1",
  });
  const said = (output: string, label: string) => output.split("\n").find((l) => l.startsWith(`${label}: `)) ?? `(no "${label}:" line in)\n${output}`;

  it("runpod-flash: a load-balancing endpoint called by its id, .post and .get", async () => {
    const project = mkdtempSync(join(tmpdir(), "minipod-flash-lb-"));
    cpSync(join(FIXTURES, "flash_lb.py"), join(project, "flash_lb.py"));
    const { code, output } = await runResolved(["flash_lb.py"], project, clientEnv());
    expect(code, output).toBe(0);
    expect(said(output, "post")).toBe("post: POST /generate {'prompt': 'hello'}");
    expect(said(output, "get")).toBe("get: GET /items/42 {'full': '1'}");
    // They came by the endpoint's own name, over TLS, and took the load-balancing route.
    expect(emu.requests({ endpoint: "lb-echo" }).requests.map((r) => `${r.method} ${r.path}`).sort()).toEqual(["GET /lb/lb-echo/items/42", "POST /lb/lb-echo/generate"]);
  });

  it("runpod-flash under pytest, run as docs/flash.md shows: python -m minipod.tls -- pytest", async () => {
    const project = mkdtempSync(join(tmpdir(), "minipod-flash-pytest-"));
    cpSync(join(FIXTURES, "test_flash_lb.py"), join(project, "test_flash_lb.py"));
    const line = blocksOf("docs/flash.md", "What runs, and what does not", "sh").find((b) => b.text.includes("-- pytest"));
    const [setting, interpreter, ...args] = shellWords(line!.text.trim());
    expect([setting!.split("=")[0], interpreter, ...args]).toEqual(["SSL_CERT_FILE", "python", "-m", "minipod.tls", "--", "pytest"]);
    // The venv's pytest, on PATH as an activated venv puts it.
    const env = clientEnv({ PATH: `${dirname(python!)}:${process.env.PATH ?? "/usr/bin:/bin"}` });
    const { code, output } = await runResolved(["pytest", "-q", "-p", "no:cacheprovider"], project, env);
    expect(code, output).toBe(0);
    expect(output).toMatch(/1 passed/);
  });

  it.skipIf(!clientsFolder())("the SDK 2.x: an @app.api class's routes called through runpod.App under rp flash dev --once", async () => {
    const project = mkdtempSync(join(tmpdir(), "minipod-sdk2-api-"));
    cpSync(join(FIXTURES, "sdk2_api.py"), join(project, "main.py"));
    const { RUNPOD_REST_API_URL: _rest, RUNPOD_CONSOLE_URL: _console, FLASH_IS_LIVE_PROVISIONING: _live, ...env } = clientEnv();
    // docs/flash.md's command, as written: the authority's certificate in SSL_CERT_FILE, the command under minipod.tls.
    const [, shown] = blocksOf("docs/flash.md", "The SDK 2.x apps", "sh");
    const [setting, interpreter, ...args] = shellWords(shown!.text.trim());
    expect([setting!.split("=")[0], interpreter, ...args.slice(0, 3)]).toEqual(["SSL_CERT_FILE", "python", "-m", "minipod.tls", "--"]);
    const [rp, ...rest] = args.slice(3);
    const { code, output } = await runResolved([join(dirname(python!), rp!), ...rest], project, env);
    expect(code, output).toBe(0);
    expect(said(output, "generate")).toBe("generate: {'text': 'HELLO', 'calls': 1}");
    expect(said(output, "again")).toBe("again: {'text': 'AGAIN', 'calls': 2}");
    expect(said(output, "count")).toBe("count: {'calls': 2}");
  });
});
