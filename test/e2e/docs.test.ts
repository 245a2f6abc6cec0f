// The shape of the documentation: README.md is a front page with a table of contents, each page
// of docs/ opens with its summary and a way back, and no relative link leads nowhere.
import { existsSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DOC_FILES, markdown, README } from "../support/readme.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The lines of a markdown file outside its fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split("\n").filter((line) => {
    if (line.startsWith("```")) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** The anchor GitHub gives a heading: lower case, inline markup and punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replaceAll("`", "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor of a markdown file, a repeated heading's with GitHub's -1, -2... */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(markdown(file))) {
    const m = /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!.trim());
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative links of a markdown file (inline code and code blocks left out), as written. */
function relativeLinks(file: string): string[] {
  const links: string[] = [];
  for (const line of prose(markdown(file))) {
    const text = line.replace(/`[^`]*`/g, "``");
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target);
    }
  }
  return links;
}

describe("the README, a front page", () => {
  it("is at most 300 lines", () => {
    expect(README.trimEnd().split("\n").length).toBeLessThanOrEqual(300);
  });

  it("has a table of contents that lists each of its sections, in order", () => {
    const sections = prose(README)
      .filter((l) => l.startsWith("## "))
      .map((l) => l.slice(3).trim())
      .filter((s) => s !== "Contents");
    const toc = README.slice(README.indexOf("## Contents"));
    const listed = [...toc.slice(0, toc.indexOf("\n## ", 3)).matchAll(/^- \[([^\]]+)\]\(#([^)]+)\)$/gm)];
    expect(listed.map((m) => m[1])).toEqual(sections);
    expect(listed.map((m) => m[2])).toEqual(sections.map(slug));
  });

  it("links every page of docs/", () => {
    const linked = new Set(relativeLinks("README.md").map((l) => l.split("#")[0]));
    for (const file of DOC_FILES.filter((f) => f !== "README.md")) expect(linked, `README.md does not link ${file}`).toContain(file);
  });
});

describe.each(DOC_FILES.filter((f) => f !== "README.md"))("%s", (file) => {
  it("opens with its title, a one-line summary and a link back to the README", () => {
    if (file === "docs/ARCHITECTURE.md") return; // kept in its own shape
    const [title, blank, summary, blank2, back] = markdown(file).split("\n");
    expect(title).toMatch(/^# \S/);
    expect([blank, blank2]).toEqual(["", ""]);
    expect(summary).toMatch(/^[^#\s[].*[.:)]$/);
    expect(back).toBe("[← minipod](../README.md)");
  });
});

describe.each(DOC_FILES)("the links of %s", (file) => {
  it("each lead to a file that exists, and to an anchor of it when they name one", () => {
    const broken: string[] = [];
    for (const link of relativeLinks(file)) {
      const [path, anchor] = link.split("#") as [string, string | undefined];
      const target = path === "" ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      if (!existsSync(join(ROOT, target))) {
        broken.push(`${link}: no file ${target}`);
        continue;
      }
      if (anchor !== undefined && target.endsWith(".md") && statSync(join(ROOT, target)).isFile() && !anchors(target).has(anchor)) {
        broken.push(`${link}: no heading of ${target} has the anchor #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
