import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  path: string;
  body: any;
}

/** A webhook receiver on 127.0.0.1 port 0 that answers each call with the next status of `statuses` (then 200). */
export async function startReceiver(statuses: number[] = []) {
  const calls: Received[] = [];
  const queue = [...statuses];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => {
      calls.push({ method: req.method ?? "", path: req.url ?? "", body: text ? JSON.parse(text) : undefined });
      res.statusCode = queue.shift() ?? 200;
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    calls,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
