import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** One test of `.runpod/tests.json`: a job's input, passing on a completed job within `timeout` ms. */
export interface HubTest {
  name: string;
  input: Record<string, unknown>;
  /** Wall ms; the Hub's field is optional. */
  timeout: number | undefined;
}

/** What `minipod hub-test` reads from a worker's folder. */
export interface HubFiles {
  tests: HubTest[];
  /** The worker's environment: hub.json's static values and input defaults, then tests.json's `config.env`. */
  env: Record<string, string>;
  /** Where the tests came from (relative to the folder). */
  testsSource: string;
  /** Where hub.json came from, or undefined when there is none. */
  hubSource: string | undefined;
  /** Every problem found in the files; the tests are not run while there is one. */
  problems: string[];
  /** Remarks that do not stop the tests (no hub.json). */
  notes: string[];
}

const CATEGORIES = ["audio", "embedding", "language", "video", "image"];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const describe = (v: unknown) => (v === undefined ? "nothing" : v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : `${typeof v} ${JSON.stringify(v)}`);

function readJson(path: string, label: string, problems: string[]): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    problems.push(`${label}: not valid JSON (${(e as Error).message})`);
    return undefined;
  }
}

/** The Hub's `env` list (`[{key, value}]` or `[{key, input: {default}}]`): its values as variables. */
function envList(list: unknown, at: string, problems: string[], into: Record<string, string>): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    problems.push(`${at}: expected an array of {"key", "value"}, got ${describe(list)}`);
    return;
  }
  list.forEach((item, i) => {
    const here = `${at}[${i}]`;
    if (!isObject(item) || typeof item.key !== "string" || item.key === "") {
      problems.push(`${here}: expected {"key": "NAME", "value": ...} with a non-empty string key`);
      return;
    }
    if (item.value !== undefined) into[item.key] = String(item.value);
    else if (isObject(item.input)) {
      if (item.input.default !== undefined) into[item.key] = String(item.input.default);
    } else problems.push(`${here} (${item.key}): expected a "value" or an "input" object`);
  });
}

function checkHub(hub: unknown, label: string, problems: string[], env: Record<string, string>): void {
  if (!isObject(hub)) {
    problems.push(`${label}: expected an object, got ${describe(hub)}`);
    return;
  }
  for (const field of ["title", "description"]) {
    if (typeof hub[field] !== "string" || hub[field] === "") problems.push(`${label} ${field}: required, a non-empty string`);
  }
  if (hub.type !== "serverless") problems.push(`${label} type: expected "serverless", got ${describe(hub.type)}`);
  if (typeof hub.category !== "string" || !CATEGORIES.includes(hub.category)) problems.push(`${label} category: expected one of ${CATEGORIES.join(", ")}; got ${describe(hub.category)}`);
  if (hub.iconUrl !== undefined && (typeof hub.iconUrl !== "string" || !/^https?:\/\//.test(hub.iconUrl))) problems.push(`${label} iconUrl: expected an http(s) URL, got ${describe(hub.iconUrl)}`);
  const config = hub.config;
  if (!isObject(config)) {
    problems.push(`${label} config: required, an object (runsOn, containerDiskInGb, ...)`);
    return;
  }
  if (config.runsOn !== "GPU" && config.runsOn !== "CPU") problems.push(`${label} config.runsOn: expected "GPU" or "CPU", got ${describe(config.runsOn)}`);
  if (!Number.isInteger(config.containerDiskInGb) || (config.containerDiskInGb as number) <= 0)
    problems.push(`${label} config.containerDiskInGb: required, a positive integer (GB); got ${describe(config.containerDiskInGb)}`);
  if (config.runsOn === "GPU") {
    if (!Number.isInteger(config.gpuCount) || (config.gpuCount as number) < 1)
      problems.push(`${label} config.gpuCount: required when runsOn is "GPU", a positive integer; got ${describe(config.gpuCount)}`);
    if (typeof config.gpuIds !== "string" || config.gpuIds === "")
      problems.push(`${label} config.gpuIds: required when runsOn is "GPU", comma-separated pool ids such as "ADA_24,-NVIDIA RTX 4090"; got ${describe(config.gpuIds)}`);
  }
  if (config.runsOn === "CPU" && (typeof config.cpuFlavor !== "string" || config.cpuFlavor === ""))
    problems.push(`${label} config.cpuFlavor: required when runsOn is "CPU", a CPU flavor such as "cpu3c"; got ${describe(config.cpuFlavor)}`);
  if (config.allowedCudaVersions !== undefined && (!Array.isArray(config.allowedCudaVersions) || !config.allowedCudaVersions.every((v) => typeof v === "string"))) {
    problems.push(`${label} config.allowedCudaVersions: expected an array of version strings such as "12.4"`);
  }
  if (config.presets !== undefined) {
    if (!Array.isArray(config.presets)) problems.push(`${label} config.presets: expected an array of {"name", "defaults"}`);
    else config.presets.forEach((p, i) => {
      if (!isObject(p) || typeof p.name !== "string" || !isObject(p.defaults)) problems.push(`${label} config.presets[${i}]: expected {"name": "...", "defaults": {...}}`);
    });
  }
  envList(config.env, `${label} config.env`, problems, env);
}

function checkTests(doc: unknown, label: string, problems: string[], env: Record<string, string>): HubTest[] {
  if (!isObject(doc) || !Array.isArray(doc.tests)) {
    problems.push(`${label}: expected {"tests": [{"name", "input", "timeout"}], "config": {...}}`);
    return [];
  }
  if (doc.tests.length === 0) problems.push(`${label} tests: empty; the Hub needs at least one test`);
  const seen = new Set<string>();
  const tests: HubTest[] = [];
  doc.tests.forEach((t, i) => {
    const at = `${label} tests[${i}]`;
    if (!isObject(t)) return problems.push(`${at}: expected {"name", "input", "timeout"?}, got ${describe(t)}`);
    if (typeof t.name !== "string" || t.name === "") return problems.push(`${at}.name: required, a non-empty string`);
    if (seen.has(t.name)) problems.push(`${at}.name: "${t.name}" is used twice`);
    seen.add(t.name);
    if (!isObject(t.input)) return problems.push(`${at}.input (${t.name}): required, the job's input object; got ${describe(t.input)}`);
    if (t.timeout !== undefined && (!Number.isInteger(t.timeout) || (t.timeout as number) <= 0))
      return problems.push(`${at}.timeout (${t.name}): expected a positive integer of milliseconds, got ${describe(t.timeout)}`);
    tests.push({ name: t.name, input: t.input, timeout: t.timeout as number | undefined });
  });
  if (doc.config !== undefined) {
    if (!isObject(doc.config)) problems.push(`${label} config: expected an object`);
    else envList(doc.config.env, `${label} config.env`, problems, env);
  }
  return tests;
}

/**
 * Reads a worker folder as the Hub does: `.runpod/tests.json` (else the runtime's local
 * `test_input.json`, one test) and `.runpod/hub.json` (else `hub.json`), checking the fields the
 * Hub documents; every problem is listed with where it is.
 */
export function readHubFiles(dir: string): HubFiles {
  const problems: string[] = [];
  const notes: string[] = [];
  const env: Record<string, string> = {};
  const rel = (p: string) => relative(dir, p) || p;

  const hubPath = [join(dir, ".runpod", "hub.json"), join(dir, "hub.json")].find((p) => existsSync(p));
  if (hubPath) {
    const hub = readJson(hubPath, rel(hubPath), problems);
    if (hub !== undefined) checkHub(hub, rel(hubPath), problems, env);
  } else notes.push("no .runpod/hub.json: the Hub needs one to list the worker (title, description, type, category, config)");

  const testsPath = [join(dir, ".runpod", "tests.json"), join(dir, "tests.json")].find((p) => existsSync(p));
  if (testsPath) {
    const doc = readJson(testsPath, rel(testsPath), problems);
    const tests = doc === undefined ? [] : checkTests(doc, rel(testsPath), problems, env);
    return { tests, env, testsSource: rel(testsPath), hubSource: hubPath && rel(hubPath), problems, notes };
  }
  const inputPath = join(dir, "test_input.json");
  if (existsSync(inputPath)) {
    const doc = readJson(inputPath, "test_input.json", problems);
    if (doc !== undefined && !(isObject(doc) && isObject(doc.input))) problems.push(`test_input.json: expected {"input": {...}}, got ${describe(doc)}`);
    const tests = isObject(doc) && isObject(doc.input) ? [{ name: "test_input", input: doc.input, timeout: undefined }] : [];
    return { tests, env, testsSource: "test_input.json", hubSource: hubPath && rel(hubPath), problems, notes };
  }
  problems.push(`no tests in ${dir}: write .runpod/tests.json ({"tests": [{"name", "input", "timeout"}]}) or test_input.json ({"input": {...}})`);
  return { tests: [], env, testsSource: "", hubSource: hubPath && rel(hubPath), problems, notes };
}
