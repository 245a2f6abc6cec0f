import { expect } from "vitest";

/** Queues `n` jobs of about 250 KB each on endpoint `q` (20 MB for 80: many turns of a copy). */
export async function fillLargeJobs(post: (path: string, body: unknown) => Promise<{ status: number }>, n: number): Promise<void> {
  for (let i = 0; i < n; i++) expect((await post("/v2/q/run", { input: { i, pad: `${i}-`.repeat(80_000) } })).status).toBe(200);
}
