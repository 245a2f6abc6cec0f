/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time and
 * the most total (inclusive) time. Usage: npx tsx bench/profile-summary.ts FILE [N]
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, nText] = process.argv.slice(2);
if (!file) throw new Error("usage: profile-summary FILE [N]");
const top = Number(nText ?? 25);
const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const label = (n: Node) => {
  const url = n.callFrame.url.replace(/^file:\/\//, "").replace(/.*node_modules\//, "~/").replace(/.*\/work\/main\//, "");
  return `${n.callFrame.functionName || "(anonymous)"} ${url}:${n.callFrame.lineNumber + 1}`;
};
const self = new Map<string, number>();
const total = new Map<string, number>();
let sum = 0;
p.samples.forEach((id, i) => {
  const dt = p.timeDeltas[i] ?? 0;
  sum += dt;
  const n = byId.get(id)!;
  self.set(label(n), (self.get(label(n)) ?? 0) + dt);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (seen.has(l)) continue;
    seen.add(l);
    total.set(l, (total.get(l) ?? 0) + dt);
  }
});
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (of ${(sum / 1000).toFixed(0)} ms sampled)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * v) / sum).toFixed(1).padStart(5)}%  ${k}`);
};
show("self time", self);
show("total time", total);
