import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FLASH_ARTIFACT_PIECE_BYTES } from "../../../src/services/flash-builds/model.js";
import { inProcess, type InProcess } from "../../support/in-process.js";

/**
 * A Flash build's artifact is kept in pieces of at most FLASH_ARTIFACT_PIECE_BYTES, each its own
 * row, written as the upload streams in and read back a piece at a time as a worker downloads it;
 * the pieces go with their artifact (an app deleted, a reset) and travel with snapshots and exports.
 */
let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: {} });
});
afterEach(() => e.close());

const MB = 1024 * 1024;
const SIZE = 3 * FLASH_ARTIFACT_PIECE_BYTES + 12345;
/** Bytes no two pieces share, so a piece out of place shows. */
const artifactOf = (size: number) => {
  const b = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) b.writeUInt32LE(i, i);
  return b;
};

const ok = async (query: string) => {
  const res = await e.request("POST", "/graphql", { query });
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data;
};

async function prepared(size: number, name = "app") {
  const app = (await ok(`mutation { createFlashApp(input: { name: "${name}" }) { id } }`)).createFlashApp;
  const upload = (await ok(`mutation { prepareFlashArtifactUpload(input: { flashAppId: "${app.id}", tarballSize: ${size} }) { uploadUrl objectKey } }`)).prepareFlashArtifactUpload;
  return { appId: app.id as string, url: upload.uploadUrl as string, key: upload.objectKey as string };
}

const pieceRows = (key?: string) =>
  e.core.db
    .prepare<[], { id: string; piece: number; n: number }>(`SELECT id, piece, length(bytes) AS n FROM document_pieces ${key ? `WHERE id = '${key}'` : ""} ORDER BY id, piece`)
    .all();

/** A body the test sends a chunk at a time. */
function controlled() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return { body, send: (b: Buffer) => controller.enqueue(new Uint8Array(b)), end: () => controller.close() };
}

/** Lets the event loop turn until `done()` holds (at most a few thousand turns). */
async function turnsUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 5000 && !done(); i++) await new Promise((r) => setImmediate(r));
  expect(done()).toBe(true);
}

const put = (url: string, body: RequestInit["body"], headers: Record<string, string> = {}) =>
  e.app.request(url, { method: "PUT", body, headers, duplex: "half" } as RequestInit);

describe("a Flash artifact in pieces", () => {
  it("is written a piece at a time as the upload streams in, and read back whole, a piece per chunk of the answer", async () => {
    const { url, key } = await prepared(SIZE);
    const bytes = artifactOf(SIZE);
    const { body, send, end } = controlled();
    const answer = put(url, body);
    // Two pieces and a half sent: two pieces are in the database before the rest arrives.
    send(bytes.subarray(0, 2 * FLASH_ARTIFACT_PIECE_BYTES + 100));
    await turnsUntil(() => pieceRows(key).length === 2);
    send(bytes.subarray(2 * FLASH_ARTIFACT_PIECE_BYTES + 100));
    end();
    expect((await answer).status).toBe(200);
    expect(pieceRows(key).map((r) => r.n)).toEqual([FLASH_ARTIFACT_PIECE_BYTES, FLASH_ARTIFACT_PIECE_BYTES, FLASH_ARTIFACT_PIECE_BYTES, 12345]);
    // No copy of the bytes in the artifact's document.
    const doc = e.core.db.prepare<[string], { data: string }>(`SELECT data FROM documents WHERE kind = 'flash-artifact' AND id = ?`).get(key)!;
    expect(doc.data.length).toBeLessThan(1000);

    const download = await e.app.request(url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-length")).toBe(String(SIZE));
    const chunks: Uint8Array[] = [];
    for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    expect(chunks.map((c) => c.length)).toEqual([FLASH_ARTIFACT_PIECE_BYTES, FLASH_ARTIFACT_PIECE_BYTES, FLASH_ARTIFACT_PIECE_BYTES, 12345]);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it("a refused upload keeps nothing: cut short, past its size, or declared another size; a second PUT while one is under way is a conflict", async () => {
    const { url, key } = await prepared(SIZE);
    const bytes = artifactOf(SIZE);
    const first = controlled();
    const answer = put(url, first.body);
    first.send(bytes.subarray(0, FLASH_ARTIFACT_PIECE_BYTES + 1));
    await turnsUntil(() => pieceRows(key).length === 1);
    const second = await put(url, bytes);
    expect(second.status).toBe(409);
    expect(await second.text()).toMatch(/is being uploaded by another request/);
    // The client stops early: 400, and the piece written is deleted.
    first.end();
    const short = await answer;
    expect(short.status).toBe(400);
    expect(await short.text()).toMatch(new RegExp(`declared as ${SIZE} bytes \\(tarballSize\\) but ${FLASH_ARTIFACT_PIECE_BYTES + 1} were sent`));
    expect(pieceRows(key)).toEqual([]);
    // Past its size, as the bytes come (no Content-Length): 413, nothing kept.
    const over = controlled();
    const overAnswer = put(url, over.body);
    over.send(bytes);
    over.send(Buffer.alloc(10));
    over.end();
    expect((await overAnswer).status).toBe(413);
    expect(pieceRows(key)).toEqual([]);
    // A Content-Length other than the size declared is refused before the body is read.
    const declaredShort = await put(url, "x", { "content-length": String(SIZE - 1) });
    expect(declaredShort.status).toBe(400);
    expect(await declaredShort.text()).toMatch(new RegExp(`but ${SIZE - 1} were sent`));
    expect((await put(url, "x", { "content-length": String(SIZE + 1) })).status).toBe(413);
    // The whole of it, then, is taken.
    expect((await put(url, bytes)).status).toBe(200);
    expect(pieceRows(key)).toHaveLength(4);
  });

  it("its pieces go with it: an app deleted (gone at once, its pieces freed one a turn), a reset", async () => {
    const one = await prepared(SIZE, "one");
    const two = await prepared(SIZE, "two");
    expect((await put(one.url, artifactOf(SIZE))).status).toBe(200);
    expect((await put(two.url, artifactOf(SIZE))).status).toBe(200);
    expect(pieceRows()).toHaveLength(8);
    await ok(`mutation { deleteFlashApp(flashAppId: "${one.appId}") }`);
    expect((await e.app.request(one.url)).status).toBe(404);
    const counts: number[] = [];
    await turnsUntil(() => {
      const left = pieceRows(one.key).length;
      if (counts.at(-1) !== left) counts.push(left);
      return left === 0;
    });
    // Never more than one piece freed in a turn.
    expect(counts).toEqual([4, 3, 2, 1, 0].slice(5 - counts.length));
    expect(counts.length).toBeGreaterThanOrEqual(3);
    await turnsUntil(() => e.core.db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM documents WHERE kind = 'flash-artifact'`).get()!.n === 1);
    expect(pieceRows().map((r) => r.id)).toEqual([two.key, two.key, two.key, two.key]);
    expect((await e.post("/_emulator/reset")).status).toBe(200);
    expect(pieceRows()).toEqual([]);
  });

  it("a deletion under way is finished by a restore of a snapshot taken during it, and stops at a restore of one taken before", async () => {
    const { appId, url, key } = await prepared(SIZE);
    const bytes = artifactOf(SIZE);
    expect((await put(url, bytes)).status).toBe(200);
    expect((await e.post("/_emulator/snapshots/before")).status).toBe(200);
    await ok(`mutation { deleteFlashApp(flashAppId: "${appId}") }`);
    expect((await e.post("/_emulator/snapshots/during")).status).toBe(200);
    expect((await e.post("/_emulator/snapshots/before/restore")).status).toBe(200);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(pieceRows(key)).toHaveLength(4);
    expect(Buffer.from(await (await e.app.request(url)).arrayBuffer()).equals(bytes)).toBe(true);
    expect((await e.post("/_emulator/snapshots/during/restore")).status).toBe(200);
    expect((await e.app.request(url)).status).toBe(404);
    await turnsUntil(() => pieceRows(key).length === 0);
  });

  it("a deletion a stop of minipod interrupted is finished at the next start (a database file)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-artifacts-db-"));
    const db = join(dir, "state.db");
    try {
      const first = await inProcess({ config: {}, db });
      const app = (await first.request("POST", "/graphql", { query: `mutation { createFlashApp(input: { name: "gone" }) { id } }` })).body.data.createFlashApp;
      const upload = (await first.request("POST", "/graphql", { query: `mutation { prepareFlashArtifactUpload(input: { flashAppId: "${app.id}", tarballSize: ${SIZE} }) { uploadUrl } }` })).body.data
        .prepareFlashArtifactUpload;
      expect((await first.app.request(upload.uploadUrl, { method: "PUT", body: artifactOf(SIZE) })).status).toBe(200);
      // Deleted, and minipod stopped before a piece was freed.
      expect((await first.request("POST", "/graphql", { query: `mutation { deleteFlashApp(flashAppId: "${app.id}") }` })).body.errors).toBeUndefined();
      await first.close();
      const again = await inProcess({ config: {}, db });
      try {
        const rows = () => again.core.db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM document_pieces`).get()!.n;
        expect((await again.app.request(upload.uploadUrl)).status).toBe(404);
        await turnsUntil(() => rows() === 0);
        await turnsUntil(() => again.core.db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM documents WHERE kind = 'flash-artifact'`).get()!.n === 0);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an upload under way when the state is reset writes nothing more", async () => {
    const { url, key } = await prepared(SIZE);
    const bytes = artifactOf(SIZE);
    const { body, send, end } = controlled();
    const answer = put(url, body);
    send(bytes.subarray(0, FLASH_ARTIFACT_PIECE_BYTES + 1));
    await turnsUntil(() => pieceRows(key).length === 1);
    expect((await e.post("/_emulator/reset")).status).toBe(200);
    send(bytes.subarray(FLASH_ARTIFACT_PIECE_BYTES + 1));
    end();
    expect((await answer).status).not.toBe(200);
    expect(pieceRows()).toEqual([]);
  });

  it("a snapshot and an export carry its pieces", async () => {
    const { appId, url } = await prepared(SIZE);
    const bytes = artifactOf(SIZE);
    expect((await put(url, bytes)).status).toBe(200);
    expect((await e.post("/_emulator/snapshots/built")).status).toBe(200);
    await ok(`mutation { deleteFlashApp(flashAppId: "${appId}") }`);
    await turnsUntil(() => pieceRows().length === 0);
    expect((await e.post("/_emulator/snapshots/built/restore")).status).toBe(200);
    expect(Buffer.from(await (await e.app.request(url)).arrayBuffer()).equals(bytes)).toBe(true);

    const exported = await e.app.request("http://minipod.test/_emulator/export", { headers: { authorization: "Bearer test-key" } });
    expect(exported.status).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), "minipod-artifacts-"));
    const other = await (async () => {
      writeFileSync(join(dir, "state.db"), Buffer.from(await exported.arrayBuffer()));
      return inProcess({ config: {}, importFile: join(dir, "state.db") });
    })().finally(() => rmSync(dir, { recursive: true, force: true }));
    try {
      const got = await other.app.request(url);
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    } finally {
      await other.close();
    }
  });

  it("the bound is the declared size, at most 64 MB: a 64 MB artifact is 64 pieces", async () => {
    const size = 64 * MB;
    const { url, key } = await prepared(size);
    expect((await put(url, Buffer.alloc(size, 1))).status).toBe(200);
    expect(pieceRows(key)).toHaveLength(64);
    let read = 0;
    for await (const chunk of (await e.app.request(url)).body as unknown as AsyncIterable<Uint8Array>) read += chunk.length;
    expect(read).toBe(size);
  });
});
