import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { forStarts, startCli } from "../support/cli.js";

const run = promisify(execFile);
const BIN = new URL("../../bin/minipod.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "minipod-export-"));

describe("minipod export / --import", () => {
  it("carries the state of one process to another, without secrets", async () => {
    const first = await startCli(["--clock", "manual", "--config", new URL("../../emulator.config.json", import.meta.url).pathname]);
    let id = "";
    try {
      const res = await fetch(`${first.url}/v2/echo/run`, {
        method: "POST",
        headers: { authorization: "k", "content-type": "application/json" },
        body: JSON.stringify({ input: { carried: true }, s3Config: { accessId: "a", accessSecret: "CARRIED-SECRET", bucketName: "b", endpointUrl: "u" } }),
      });
      id = ((await res.json()) as { id: string }).id;
      await first.advance(0);
      const file = join(dir, "state.db");
      const out = await run(process.execPath, [BIN, "export", file, "--url", first.url]);
      expect(out.stdout).toContain(`to ${file}`);
      expect(readFileSync(file).includes(Buffer.from("CARRIED-SECRET"))).toBe(false);

      const second = await startCli(["--clock", "manual", "--import", file, "--config", new URL("../../emulator.config.json", import.meta.url).pathname]);
      try {
        const status = await fetch(`${second.url}/v2/echo/status/${id}`, { headers: { authorization: "k" } });
        expect(await status.json()).toMatchObject({ id, status: "COMPLETED", output: { carried: true } });
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
  }, forStarts(3));

  it("explains a missing server or file", async () => {
    await expect(run(process.execPath, [BIN, "export", join(dir, "x.db"), "--url", "http://127.0.0.1:9"])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("cannot reach minipod") });
    await expect(run(process.execPath, [BIN, "--import", join(dir, "missing.db"), "--port", "0"])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("cannot read state file") });
  }, forStarts(2));
});
