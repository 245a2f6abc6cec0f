import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { endWith, textBody } from "../../src/http/large-body.js";

/** 3 MB of text whose pieces would end inside surrogate pairs if cut anywhere. */
const text = "😀".repeat(1_500_000) + "é" + "a".repeat(100);

async function served(write: (res: import("node:http").ServerResponse) => void) {
  const server = createServer((_req, res) => write(res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;
  return new Promise<{ body: string; chunks: number }>((resolve, reject) => {
    request({ host: "127.0.0.1", port, path: "/" }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () => resolve({ body: Buffer.concat(parts).toString("utf8"), chunks: parts.length }));
    })
      .on("error", reject)
      .end();
  });
}

describe("large answers written a piece at a time", () => {
  it("endWith writes the same bytes in pieces, never splitting a surrogate pair, a turn between pieces", async () => {
    let writes = 0;
    const { body } = await served((res) => {
      const write = res.write.bind(res);
      res.write = ((chunk: string, ...rest: never[]) => {
        writes++;
        expect(chunk.length).toBeLessThanOrEqual(512 * 1024);
        return write(chunk, ...rest);
      }) as typeof res.write;
      endWith(res, 200, {}, text);
    });
    expect(body).toBe(text);
    expect(writes).toBeGreaterThanOrEqual(5);
  });

  it("writes an answer given in pieces as they come, a stored payload's parts among them", async () => {
    const parts = ['{"output":', '"', "😀".repeat(400_000), "é".repeat(700_000), '"}'];
    const { body } = await served((res) => endWith(res, 200, {}, parts));
    expect(body).toBe(parts.join(""));
    const short = await served((res) => endWith(res, 200, {}, ["{", '"a":1', "}"]));
    expect(short.body).toBe('{"a":1}');
  });

  it("textBody streams the same bytes in pieces, and leaves short texts as they are", async () => {
    expect(textBody("short")).toBe("short");
    const stream = textBody(text) as ReadableStream<Uint8Array>;
    const chunks: Uint8Array[] = [];
    for await (const c of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(c);
    expect(chunks.length).toBeGreaterThanOrEqual(6);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(text);
  });
});
