import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { TestProject } from "vitest/node";
import { minipodSetup } from "../../src/vitest.js";

/** What minipodSetup reads of vitest's project, and what it provides to the tests. */
function projectAt(root: string): { project: TestProject; urls: () => string[] } {
  let urls: string[] = [];
  const project = {
    config: { root, maxWorkers: 1 },
    vitest: { config: { maxWorkers: 1, watch: false } },
    provide: (key: string, value: string[]) => {
      if (key === "minipodUrls") urls = value;
    },
  } as unknown as TestProject;
  return { project, urls: () => urls };
}

const clockOf = async (url: string) => ((await (await fetch(`${url}/_emulator/clock`)).json()) as { mode: string; speed: number });

/** `minipod/vitest` as a global setup: which config it serves, on which clock. */
describe("minipodSetup", () => {
  const dirs: string[] = [];
  let teardown: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await teardown?.();
    teardown = undefined;
  });
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const emptyRoot = () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-vitest-"));
    dirs.push(dir);
    return dir;
  };

  it("serves the demo endpoints when the project has no config, on the auto clock though the demo config says real: a 30 s job does not hold the test", async () => {
    const { project, urls } = projectAt(emptyRoot());
    teardown = await minipodSetup()(project);
    const [url] = urls();
    expect((await clockOf(url!)).mode).toBe("auto");
    const res = await fetch(`${url}/v2/scripted/runsync`, { method: "POST", headers: { authorization: "k" }, body: JSON.stringify({ input: { sleepMs: 30_000, output: "done" } }) });
    expect(await res.json()).toMatchObject({ status: "COMPLETED", output: "done", executionTime: 30_000 });
  });

  it("serves the project's emulator.config.json on the auto clock, keeping its speed", async () => {
    const root = emptyRoot();
    writeFileSync(join(root, "emulator.config.json"), JSON.stringify({ clock: { mode: "real", speed: 2 }, endpoints: [{ id: "mine", handler: "echo" }] }));
    const { project, urls } = projectAt(root);
    teardown = await minipodSetup()(project);
    const [url] = urls();
    expect(await clockOf(url!)).toMatchObject({ mode: "auto", speed: 2 });
    const res = await fetch(`${url}/v2/mine/runsync`, { method: "POST", headers: { authorization: "k" }, body: JSON.stringify({ input: { n: 1 } }) });
    expect(await res.json()).toMatchObject({ status: "COMPLETED", output: { n: 1 } });
  });

  it("takes the clock the setup gives, or the mode of a config it is given", async () => {
    const { project, urls } = projectAt(emptyRoot());
    teardown = await minipodSetup({ clock: "manual" })(project);
    expect((await clockOf(urls()[0]!)).mode).toBe("manual");
    await teardown();
    teardown = await minipodSetup({ config: { clock: { mode: "real" }, endpoints: [{ id: "e", handler: "echo" }] } })(project);
    expect((await clockOf(urls()[0]!)).mode).toBe("real");
  });
});
