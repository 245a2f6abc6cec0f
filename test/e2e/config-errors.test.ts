// A config value that stops the start names its field, through the real CLI: what a user sees.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { markdown } from "../support/readme.js";
import { forStarts, startCli } from "../support/cli.js";

/** Starts the CLI on `config` (files beside it first) and resolves with what it printed when it stopped. */
async function refused(config: unknown, files: Record<string, string> = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "minipod-config-errors-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const file = join(dir, "emulator.config.json");
  writeFileSync(file, JSON.stringify(config));
  const error = await startCli(["--config", file, "--clock", "manual"]).then(
    async (cli) => {
      await cli.stop();
      throw new Error(`minipod started on ${JSON.stringify(config)}`);
    },
    (e: Error) => e.message,
  );
  expect(error).toMatch(/exited with 2 before listening/);
  expect(error).toContain(`minipod: config file ${file} is invalid:`);
  return error.replaceAll(dir, "<dir>");
}

describe("a config that breaks the start names the field", () => {
  it("a handler module that is missing, exports no function, or throws as it loads", async () => {
    const endpoints = [{ id: "a" }, { id: "b", handler: "scripted" }];
    expect(await refused({ endpoints: [...endpoints, { id: "c", handler: "./x.ts" }] })).toContain(
      "  - endpoints[2].handler: cannot load ./x.ts: no such file (looked for <dir>/x.ts)",
    );
    expect(await refused({ endpoints: [{ id: "a", handler: "./five.js" }] }, { "five.js": "export default 5;" })).toContain(
      '  - endpoints[0].handler: cannot load ./five.js: it exports no function as default or as "handler"',
    );
    // The module's own stack, naming the file, under the field.
    const throwing = 'function init(): void {\n  throw new Error("no GPU here");\n}\ninit();\n';
    const boom = await refused({ endpoints: [{ id: "a", handler: "./boom.ts" }] }, { "boom.ts": throwing, "package.json": '{ "type": "module" }' });
    expect(boom).toContain("  - endpoints[0].handler: cannot load ./boom.ts (<dir>/boom.ts): it threw as it loaded: Error: no GPU here\n      at init (<dir>/boom.ts:2:9)\n");
    expect(boom).not.toMatch(/node:internal|node_modules\/tsx|minipod\.js/);
    // In a CommonJS package, tsx runs the compiled code from a data: URL on Node 20 and 22: its
    // frames name the file (Node 24 loads it itself, with line and column).
    const compiled = await refused({ endpoints: [{ id: "a", handler: "./boom.ts" }] }, { "boom.ts": throwing });
    expect(compiled).toMatch(/it threw as it loaded: Error: no GPU here\n {6}at init \(<dir>\/boom\.ts(:2:9)?\)\n/);
    expect(compiled).not.toContain("data:");
    const cjs = await refused({ endpoints: [{ id: "a", handler: "./boom.cjs" }] }, { "boom.cjs": 'require("./helper.cjs");\n', "helper.cjs": 'throw new TypeError("bad helper");\n' });
    expect(cjs).toContain("  - endpoints[0].handler: cannot load ./boom.cjs (<dir>/boom.cjs): it threw as it loaded: TypeError: bad helper\n");
    expect(cjs).toMatch(/\n {6}at .*<dir>\/helper\.cjs:1:\d+/);
    expect(await refused({ endpoints: [{ id: "a", handler: "nonsense" }] })).toContain(
      '  - endpoints[0].handler: unknown handler "nonsense": use one of echo, scripted, openai, external, a module path',
    );
    expect(await refused({ endpoints: [{ id: "a", handler: "http://[::1" }] })).toContain('  - endpoints[0].handler: "http://[::1" is not a valid URL for an HTTP worker');
  }, forStarts(7));

  it("every problem at once: a type error hides no handler, and every bad handler is named", async () => {
    const printed = await refused({
      endpoints: [
        { id: "a", workersMax: "3", handler: "ecoh" },
        { id: "b", handler: "./missing.ts" },
        { id: "c", handler: "./five.js" },
        { id: "d", handler: "scripted" },
      ],
      templates: [{ id: "t", name: "T", handler: "nonsense" }],
      defaultHandler: "./gone.js",
    }, { "five.js": "export default 5;" });
    expect(printed).toContain("  - endpoints[0].workersMax: ");
    expect(printed).toContain('  - endpoints[0].handler: unknown handler "ecoh": did you mean "echo"?');
    expect(printed).toContain("  - endpoints[1].handler: cannot load ./missing.ts: no such file");
    expect(printed).toContain('  - endpoints[2].handler: cannot load ./five.js: it exports no function as default or as "handler"');
    expect(printed).toContain('  - templates[0].handler: unknown handler "nonsense"');
    expect(printed).toContain("  - defaultHandler: cannot load ./gone.js: no such file");
    expect(printed).not.toContain("endpoints[3]");
    // A config that validates stops at its handlers all the same: each is named.
    const valid = await refused({ endpoints: [{ id: "a", handler: "./x.ts" }, { id: "b", handler: "ecoh" }] });
    expect(valid).toContain("  - endpoints[0].handler: cannot load ./x.ts: no such file");
    expect(valid).toContain('  - endpoints[1].handler: unknown handler "ecoh"');
  }, forStarts(2));

  it("the example of such a message in docs/configuration.md is what minipod prints", async () => {
    const shown = /^ {2}- endpoints\[2\]\.handler: cannot load \.\/handlers\/gen\.ts: no such file \(looked for \/home\/me\/project\/handlers\/gen\.ts\)$/m;
    expect(markdown("docs/configuration.md")).toMatch(shown);
    const printed = await refused({ endpoints: [{ id: "a" }, { id: "b" }, { id: "gen", handler: "./handlers/gen.ts" }] });
    expect(printed.replaceAll("<dir>", "/home/me/project")).toMatch(shown);
  });

  it("the example of a module that throws in docs/configuration.md is what minipod prints", async () => {
    const shown = markdown("docs/configuration.md").match(/^ {2}- endpoints\[0\]\.handler: cannot load \.\/gen\.ts [^]*?(?=\n```)/m)?.[0];
    expect(shown).toBeDefined();
    const printed = await refused(
      { endpoints: [{ id: "gen", handler: "./gen.ts" }] },
      {
        "package.json": '{ "type": "module" }',
        "model.ts": '// Loads the model once, as the worker starts.\nexport function loadModel(): never {\n  throw new Error("CUDA not found");\n}\n',
        "gen.ts":
          'import { loadModel } from "./model.ts";\n\nconst model = loadModel();\n\nexport default async function handler(input: { prompt: string }) {\n  return { text: String(model) + input.prompt };\n}\n',
      },
    );
    expect(printed.replaceAll("<dir>", "/home/me/project")).toContain(shown);
  });

  it("a template's handler and defaultHandler", async () => {
    expect(await refused({ templates: [{ id: "t", name: "T", handler: "./gone.js" }], endpoints: [{ id: "a", templateId: "t" }] })).toContain(
      "  - templates[0].handler: cannot load ./gone.js: no such file",
    );
    expect(await refused({ defaultHandler: "./gone.js", endpoints: [{ id: "a" }] })).toContain("  - defaultHandler: cannot load ./gone.js: no such file");
  }, forStarts(2));

  it("references, duplicate ids and values the API's own checks refuse", async () => {
    expect(await refused({ endpoints: [{ id: "a", templateId: "nope" }] })).toContain('  - endpoints[0].templateId: unknown template "nope"; declare it in templates[]');
    expect(await refused({ templates: [{ id: "t", name: "T", isServerless: false }], endpoints: [{ id: "a", templateId: "t" }] })).toContain(
      '  - endpoints[0].templateId: template "t" has isServerless: false',
    );
    expect(await refused({ endpoints: [{ id: "a" }, { id: "a" }] })).toContain('  - endpoints[1].id: duplicate endpoint id "a"');
    expect(await refused({ templates: [{ id: "t", name: "x" }, { id: "t", name: "y" }] })).toContain('  - templates[1].id: duplicate template id "t"');
    const pod = {
      networkVolumes: [{ id: "v1", name: "v", size: 10, dataCenter: "EU-RO-1" }],
      pods: [{ name: "p", imageName: "x", networkVolumeId: "v1", dataCenterIds: ["US-TX-3"] }],
    };
    expect(await refused(pod)).toContain('  - pods[0].dataCenterIds: network volume "v1" is in EU-RO-1, which is not listed');
    expect(await refused({ clock: { start: "yesterday" } })).toMatch(/ {2}- clock\.start: /);
  }, forStarts(6));
});
