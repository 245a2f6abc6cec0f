import { createServer, request as httpRequest, type Agent, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Raw } from "./recording.js";

/**
 * A relay on 127.0.0.1 (port 0) in front of the HTTP server at `target`: each request is sent on
 * as it comes and its answer relayed as it comes, both kept in a Raw (numbered in arrival order),
 * given to `done` once the answer has ended. A request whose client goes away is dropped upstream.
 */
export async function relayTap(target: string, done: (raw: Raw) => void, agent?: Agent): Promise<{ server: Server; url: string }> {
  const to = new URL(target);
  let seq = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const raw: Raw = { seq: seq++, method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, body: [], answer: [], done: false };
    const up = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host }, agent }, (answer) => {
      raw.status = answer.statusCode;
      raw.contentType = answer.headers["content-type"];
      raw.answerHeaders = answer.headers;
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on("data", (d: Buffer) => {
        raw.answer.push(d);
        res.write(d);
      });
      answer.on("end", () => {
        raw.done = true;
        done(raw);
        res.end();
      });
      answer.on("error", () => res.destroy());
    });
    up.on("error", () => res.destroy());
    req.on("data", (d: Buffer) => {
      raw.body.push(d);
      up.write(d);
    });
    req.on("end", () => up.end());
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
  });
  // A client's kept-alive connection may rest longer than Node's 5 s default; no request is cut.
  server.keepAliveTimeout = 75_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
