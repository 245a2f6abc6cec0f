import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The README as a reader sees it: fenced blocks under their `##` section. */
export interface Block {
  section: string;
  lang: string;
  text: string;
}

export const README = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");

/** Every fenced code block of the README, with the `##` heading it is under. */
export function readmeBlocks(): Block[] {
  const blocks: Block[] = [];
  let section = "";
  let open: Block | undefined;
  for (const line of README.split("\n")) {
    if (open) {
      if (line.startsWith("```")) {
        blocks.push(open);
        open = undefined;
      } else open.text += (open.text ? "\n" : "") + line;
      continue;
    }
    if (line.startsWith("## ")) section = line.slice(3).trim();
    else if (line.startsWith("```")) open = { section, lang: line.slice(3).trim(), text: "" };
  }
  return blocks;
}

/** The blocks of one section (by the start of its heading), of one language. */
export const blocksOf = (section: string, lang: string): Block[] => readmeBlocks().filter((b) => b.section.startsWith(section) && b.lang === lang);

/** The words of a shell command line, with its single and double quotes taken off. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) words.push(m[1] ?? m[2]?.replace(/\\(.)/g, "$1") ?? m[3]!);
  return words;
}

/** A README `curl` command as the request curl sends: `-s`, `-H`, `-d` (a POST with curl's form type) and `-X`. */
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
    else if (w.startsWith("-")) throw new Error(`the README test does not know curl's ${w}: teach test/support/readme.ts, or write the example with -s, -H, -d and -X`);
    else url = w;
  }
  if (!url) throw new Error(`no URL in ${line}`);
  return { url, init: { method: method ?? (body === undefined ? "GET" : "POST"), headers, ...(body === undefined ? {} : { body }) } };
}

/**
 * Whether an answer is what the README shows: the same text, where `<id>` is the job id named,
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
