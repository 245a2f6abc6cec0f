import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The documentation as a reader sees it: fenced blocks under their heading. */
export interface Block {
  /** The `##` heading the block is under (the page's `#` title before the first `##`). */
  section: string;
  /** The `###` heading under that one, when the block is under one. */
  subsection?: string;
  lang: string;
  text: string;
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Where the documentation's examples say minipod listens (`npm start`). */
export const DOC_URL = "http://127.0.0.1:8080";

/** The markdown files the tests read: README.md and every page of docs/, by path from the root. */
export const DOC_FILES: readonly string[] = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];

/** The text of a markdown file, by path from the repository's root (`README.md`, `docs/workers.md`). */
export const markdown = (file: string): string => readFileSync(join(ROOT, file), "utf8");

export const README = markdown("README.md");

/** Every fenced code block of a markdown file, with the heading it is under. */
export function blocksIn(file: string): Block[] {
  const blocks: Block[] = [];
  let section = "";
  let subsection: string | undefined;
  let open: Block | undefined;
  for (const line of markdown(file).split("\n")) {
    if (open) {
      if (line.startsWith("```")) {
        blocks.push(open);
        open = undefined;
      } else open.text += (open.text ? "\n" : "") + line;
      continue;
    }
    if (line.startsWith("### ")) subsection = line.slice(4).trim();
    else if (line.startsWith("## ")) [section, subsection] = [line.slice(3).trim(), undefined];
    else if (line.startsWith("# ")) [section, subsection] = [line.slice(2).trim(), undefined];
    else if (line.startsWith("```")) open = { section, ...(subsection === undefined ? {} : { subsection }), lang: line.slice(3).trim(), text: "" };
  }
  return blocks;
}

/** The blocks of one section or subsection of a file (by the start of its heading), of one language; throws when there are none. */
export function blocksOf(file: string, section: string, lang: string): Block[] {
  const found = blocksIn(file).filter((b) => (b.section.startsWith(section) || b.subsection?.startsWith(section)) && b.lang === lang);
  if (found.length === 0) throw new Error(`${file} has no \`\`\`${lang} block under a heading starting "${section}"`);
  return found;
}

/** The words of a shell command line, with its single and double quotes taken off. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) words.push(m[1] ?? m[2]?.replace(/\\(.)/g, "$1") ?? m[3]!);
  return words;
}

/** A documented `curl` command as the request curl sends: `-s`, `-H`, `-d` (a POST with curl's form type) and `-X`. */
export function curlRequest(line: string): { url: string; init: RequestInit } {
  const words = shellWords(line);
  if (words[0] !== "curl") throw new Error(`not a curl command: ${line}`);
  const headers: Record<string, string> = {};
  let method: string | undefined;
  let body: string | undefined;
  let url: string | undefined;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w === "-s") continue;
    else if (w === "-H") {
      const [name, ...value] = words[++i]!.split(":");
      headers[name!.trim().toLowerCase()] = value.join(":").trim();
    } else if (w === "-d") {
      body = words[++i]!;
      headers["content-type"] ??= "application/x-www-form-urlencoded";
    } else if (w === "-X") method = words[++i]!;
    else if (w.startsWith("-")) throw new Error(`the documentation test does not know curl's ${w}: teach test/support/readme.ts, or write the example with -s, -H, -d and -X`);
    else url = w;
  }
  if (!url) throw new Error(`no URL in ${line}`);
  return { url, init: { method: method ?? (body === undefined ? "GET" : "POST"), headers, ...(body === undefined ? {} : { body }) } };
}

/**
 * Whether an answer is what the documentation shows: the same text, where `<id>` is the job id named,
 * `<worker>` any worker id and `<n>` any number.
 */
export function matchesShown(shown: string, answer: string, id: string | undefined): boolean {
  const escaped = shown.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = escaped
    .replaceAll("<id>", id === undefined ? "[A-Za-z0-9_-]+" : id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .replaceAll("<worker>", "[A-Za-z0-9_-]+")
    .replaceAll("<n>", "\\d+");
  return new RegExp(`^${pattern}$`).test(answer);
}

/** Runs a started minipod's manual clock until no job waits or runs (the control API's run-until-idle). */
export async function runUntilIdle(url: string): Promise<void> {
  const res = await fetch(`${url}/_emulator/run-until-idle`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  if (res.status !== 200) throw new Error(`run-until-idle answered ${res.status}: ${await res.text()}`);
}

/** Runs a JavaScript example as a module with `runpod-sdk` and `minipod` resolved here, its console.log lines as JSON. */
export function runExample(text: string, url: string): Promise<{ code: number | null; printed: Array<Record<string, unknown>>; out: string; err: string }> {
  const resolve = (name: string) => pathToFileURL(createRequire(import.meta.url).resolve(name)).href;
  let script = text.replaceAll(DOC_URL, url);
  for (const pkg of ["runpod-sdk", "openai", "ai", "@runpod/ai-sdk-provider", "hono"]) if (script.includes(`from "${pkg}"`)) script = script.replace(`from "${pkg}"`, `from ${JSON.stringify(resolve(pkg))}`);
  script = script
    .replace('from "minipod"', `from ${JSON.stringify(pathToFileURL(join(ROOT, "dist/index.js")).href)}`)
    .replaceAll("console.log(", "__print(");
  const file = join(mkdtempSync(join(tmpdir(), "minipod-readme-")), "example.mjs");
  writeFileSync(file, `const __print = (v) => process.stdout.write(JSON.stringify(v) + "\\n");\n${script}\n`);
  const proc = spawn(process.execPath, [file], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return new Promise<number | null>((resolve) => proc.once("exit", resolve)).then((code) => {
    const printed = out.trim().startsWith("{") ? out.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>) : [];
    return { code, printed, out, err };
  });
}
