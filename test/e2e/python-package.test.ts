import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "vitest";
import { pythonPackageAvailable, run, venvWithPackage } from "../support/python-package.js";
import { pythonEnv } from "../support/python.js";

/**
 * The Python package (python/), installed from the clone with pip into a fresh venv, and its own
 * pytest suite (python/tests) run there with the service's library (vendor/python) on the path:
 * the fixture, the real runpod.Endpoint and worker runtime against one minipod per session. The
 * suite runs once, as the file is collected; each pytest test is then one test here, so a failure
 * names it and the suite's count includes them.
 */
const available = pythonPackageAvailable();

interface Case {
  name: string;
  failure?: string;
}

async function runSuite(): Promise<{ cases: Case[]; output: string }> {
  const python = await venvWithPackage();
  const junit = join(mkdtempSync(join(tmpdir(), "minipod-pytest-")), "junit.xml");
  // The package finds the CLI of the clone it was installed from (bin/minipod.js): no MINIPOD_CLI.
  const env = pythonEnv({ PYTHONDONTWRITEBYTECODE: "1" });
  const { code, output } = await run(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", `--junitxml=${junit}`, "python/tests"], { env, wallMs: 240_000 });
  let xml = "";
  try {
    xml = readFileSync(junit, "utf8");
  } catch {
    throw new Error(`pytest wrote no report (exit ${code}):\n${output}`);
  }
  const cases: Case[] = [];
  for (const m of xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const body = m[4] ?? "";
    const failed = /<(failure|error)\b/.test(body);
    cases.push({ name: `${m[1]}.${m[2]}`, ...(failed ? { failure: body.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&") } : {}) });
  }
  if (cases.length === 0) throw new Error(`pytest ran no test (exit ${code}):\n${output}`);
  return { cases, output };
}

const suite = available ? await runSuite() : { cases: [], output: "" };

describe.skipIf(!available)("the Python package: pip install ./python, then its pytest suite", () => {
  for (const c of suite.cases) {
    it(c.name, () => {
      if (c.failure) throw new Error(`${c.failure}\n\npytest's output:\n${suite.output.slice(-4000)}`);
    });
  }
});
