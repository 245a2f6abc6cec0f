// A load-balancing worker for the benchmark: node's http, /ping 200, a small JSON answer, and an
// event stream whose first event is written at once and the second 50 ms later.
import { createServer } from "node:http";

const port = Number(process.argv[2]);
const hello = JSON.stringify({ generated_text: "Hello, bench" });
createServer((req, res) => {
  if (req.url === "/ping") return void res.writeHead(200, { "content-type": "application/json" }).end('{"status":"healthy"}');
  if (req.url === "/stream") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: first\n\n");
    setTimeout(() => res.end("data: second\n\n"), 50);
    return;
  }
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(hello) }).end(hello);
}).listen(port, "127.0.0.1");
