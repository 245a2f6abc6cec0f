import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "vitest";
import { pythonPackageAvailable, run, venvWithPackage } from "../support/python-package.js";
import { pythonEnv, runpodMissing } from "../support/python.js";
import { blocksOf } from "../support/readme.js";

/**
 * The Python package (python/), installed from the clone with pip into a fresh venv, and its own
 * pytest suite (python/tests) run there with the service's library on the path where it can be
 * imported (installed, or from MINIPOD_CLIENTS): the fixture, the real runpod.Endpoint and worker
 * runtime against one minipod per session; without it, the suite's modules that need `runpod` skip
 * themselves, and so do the README's and docs' examples here. The suite runs once, as the file is
 * collected; each pytest test is then one test here, so a failure names it and the suite's count
 * includes them.
 */
const available = pythonPackageAvailable();
const noRunpod = available ? runpodMissing() : undefined;
if (noRunpod) console.warn(`python/tests: its modules that use runpod, and the docs' pytest examples, skipped: ${noRunpod}`);

interface Case {
  name: string;
  failure?: string;
  skipped?: boolean;
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
    cases.push({ name: `${m[1]}.${m[2]}`, ...(/<skipped\b/.test(body) ? { skipped: true } : {}), ...(failed ? { failure: body.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&") } : {}) });
  }
  if (cases.length === 0) throw new Error(`pytest ran no test (exit ${code}):\n${output}`);
  if (noRunpod) cases.push({ name: "docs/python.md's pytest examples, in an empty project", skipped: true }, { name: "docs/python.md's kept worker, in an empty project", skipped: true });
  else cases.push(await docsExample(python), await keptExample(python));
  return { cases, output };
}

/**
 * docs/python.md's pytest examples, as written, in an empty project: the conftest.py, the test of
 * the client (a 429, a ttl), and the per-test configuration (with python/tests/lb_server.py as
 * the server.py it names).
 */
async function docsExample(python: string): Promise<Case> {
  const name = "docs/python.md's pytest examples, in an empty project";
  const [conftest, tests, perTest] = blocksOf("docs/python.md", "The pytest fixture", "python");
  if (!conftest?.text.includes("def minipod_config") || !tests?.text.includes("def test_")) return { name, failure: "docs/python.md's fixture example changed shape" };
  // The fixture's examples run on its default clock: none moves time by hand.
  if (/advance\(|clock/.test(tests.text)) return { name, failure: "docs/python.md's test of the client moves the clock by hand" };
  const project = mkdtempSync(join(tmpdir(), "minipod-docs-pytest-"));
  writeFileSync(join(project, "conftest.py"), conftest!.text);
  writeFileSync(join(project, "test_client.py"), tests!.text);
  writeFileSync(join(project, "test_per_test.py"), perTest!.text);
  writeFileSync(join(project, "server.py"), readFileSync(fileURLToPath(new URL("../../python/tests/lb_server.py", import.meta.url)), "utf8"));
  const { code, output } = await run(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider"], { cwd: project, env: pythonEnv({ PYTHONDONTWRITEBYTECODE: "1" }), wallMs: 120_000 });
  return code === 0 && /4 passed/.test(output) ? { name } : { name, failure: `pytest in ${project} exited ${code}:\n${output}` };
}

/**
 * docs/python.md's examples of a worker kept over tests, as written, in an empty project with the
 * fixture's conftest.py and the handlers.py they name: the tests of a kept worker, and the
 * module-scoped fixture, each file on its own.
 */
async function keptExample(python: string): Promise<Case> {
  const name = "docs/python.md's kept worker examples, in an empty project";
  const [conftest] = blocksOf("docs/python.md", "The pytest fixture", "python");
  const [kept, moduleScoped] = blocksOf("docs/python.md", "A worker for one test, or kept over tests", "python");
  const handlers = /`handlers\.py`, beside the tests, holds `([^`]+)`/.exec(readFileSync(fileURLToPath(new URL("../../docs/python.md", import.meta.url)), "utf8"))?.[1];
  if (!kept?.text.includes("keep=True") || !moduleScoped?.text.includes('scope="module"') || !handlers) return { name, failure: "docs/python.md's kept worker examples changed shape" };
  const project = mkdtempSync(join(tmpdir(), "minipod-docs-kept-"));
  writeFileSync(join(project, "conftest.py"), conftest!.text);
  writeFileSync(join(project, "handlers.py"), handlers.replace(": return", ":\n    return") + "\n");
  writeFileSync(join(project, "test_kept.py"), kept.text);
  writeFileSync(join(project, "test_module_scoped.py"), moduleScoped.text);
  const env = pythonEnv({ PYTHONDONTWRITEBYTECODE: "1", PYTHONPATH: `${project}:${pythonEnv().PYTHONPATH ?? ""}` });
  const { code, output } = await run(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider"], { cwd: project, env, wallMs: 120_000 });
  return code === 0 && /3 passed/.test(output) ? { name } : { name, failure: `pytest in ${project} exited ${code}:\n${output}` };
}

const suite = available ? await runSuite() : { cases: [], output: "" };

describe.skipIf(!available)("the Python package: pip install ./python, then its pytest suite", () => {
  // Skipped (the reason was printed above): one entry, so the skip shows in the count.
  if (!available) it("runs the package's pytest suite", () => {});
  for (const c of suite.cases) {
    it.skipIf(c.skipped === true)(c.name, () => {
      if (c.failure) throw new Error(`${c.failure}\n\npytest's output:\n${suite.output.slice(-4000)}`);
    });
  }
});
