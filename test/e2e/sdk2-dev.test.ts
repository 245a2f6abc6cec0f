import { spawn } from "node:child_process";
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { flashClientEnv, flashPython, relayedPython } from "../support/flash-python.js";
import { recorder, via, type Recorder } from "../support/recorder.js";

// The SDK 2.x's `rp flash dev main.py --once`, unchanged, pointed at minipod: it saves an endpoint
// of the runpod/queue image for each queue function, whose worker processes run minipod's own
// queue runtime (minipod.runtimes.queue) under the SDK's worker runtime, with a secret of the app's
// env (runpod.Secret) substituted in their env; it deletes them at the end.

const python = flashPython();
const APP = fileURLToPath(new URL("../fixtures/sdk2/main.py", import.meta.url));

describe.skipIf(!python)("rp flash dev --once through minipod: a queue function, a generator's stream, an error", { timeout: 180_000 }, () => {
  let emu: Emulator;
  let rec: Recorder;
  const config = {};
  beforeAll(async () => {
    // The workers' interpreter: the venv, whose runpod is the SDK 2.x (its worker runtime included).
    const relayed = relayedPython(python!);
    vi.stubEnv("MINIPOD_PYTHON", relayed.python);
    vi.stubEnv("PYTHONPATH", "");
    emu = await createEmulator({ clock: "real", config, log: () => {} });
    // What the SDK 2.x sends to GraphQL and /v2, and what its worker processes send, recorded by `npm run contracts:record`.
    const client = "runpod-python-2 (the SDK 2.x): rp flash dev --once, its queue functions on minipod's queue worker";
    rec = await recorder(emu.url, { client, test: "test/e2e/sdk2-dev.test.ts", clock: "real", config });
    relayed.to(emu.url, rec.url);
  });
  afterAll(async () => {
    await rec?.close();
    await emu?.close();
    vi.unstubAllEnvs();
  });

  it("runs the app's local entrypoint against workers of minipod's queue runtime", async () => {
    const project = mkdtempSync(join(tmpdir(), "minipod-sdk2-"));
    cpSync(APP, join(project, "main.py"));
    const { RUNPOD_REST_API_URL: _rest, RUNPOD_CONSOLE_URL: _console, FLASH_IS_LIVE_PROVISIONING: _live, ...env } = flashClientEnv(via(emu.url));
    rec.scenario("sdk2-flash-dev", {
      polls: true,
      about: "a secret made through GraphQL; queue functions saved through GraphQL, called on /v2 (a result, a generator's stream and aggregate, an error, a secret's value in a worker's env), deleted at the end",
    });
    // The secret the app's env refers to (rp secret add sends this mutation).
    const made = await fetch(`${rec.url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.RUNPOD_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        query: "mutation secretCreate($input: SecretCreateInput!) { secretCreate(input: $input) { id name } }",
        variables: { input: { name: "offline-token", value: "t0ken", description: "" } },
      }),
    });
    expect(((await made.json()) as { errors?: unknown }).errors).toBeUndefined();
    // The endpoints the session saves, as minipod serves them while it runs.
    const seen = new Set<string>();
    const watch = setInterval(() => emu.endpoints().forEach((e) => seen.add(`${e.type} ${e.name} ${e.handler}`)), 20);
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(join(dirname(python!), "rp"), ["flash", "dev", "main.py", "--once"], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
      let text = "";
      child.stdout.on("data", (d: Buffer) => (text += d.toString()));
      child.stderr.on("data", (d: Buffer) => (text += d.toString()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
      child.once("close", (c) => {
        clearTimeout(timer);
        resolve({ code: c, output: text });
      });
    });
    clearInterval(watch);
    rec.pause();
    expect(code, output).toBe(0);
    const said = (label: string) => output.split("\n").find((l) => l.startsWith(`${label}: `)) ?? `(no "${label}:" line in)\n${output}`;
    expect(said("greet")).toBe("greet: hello world!");
    expect(said("stream")).toBe("stream: [{'i': 0}, {'i': 1}, {'i': 2}]");
    expect(said("aggregate")).toBe("aggregate: [{'i': 0}, {'i': 1}]");
    expect(said("fail")).toBe("fail: ValueError: no luck with 7");
    // The worker's env had the secret's value where the endpoint's env had its reference.
    expect(said("token")).toBe("token: t0ken");
    // The @app.api class was saved as a load-balancing endpoint of the runpod/api image.
    expect([...seen].filter((e) => e.startsWith("LOAD_BALANCER "))).toEqual([expect.stringMatching(/^LOAD_BALANCER dev-offline-Inference-[0-9a-f]+ external$/)]);
    // The session's endpoints are deleted as it ends.
    expect(emu.endpoints()).toEqual([]);
  });
});
