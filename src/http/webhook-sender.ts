import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { hasCredentials, isWebhookUrl, type WebhookSender } from "../domain/webhooks.js";
import { stringify } from "../domain/json-text.js";
import { VERSION } from "../version.js";
import type { OwnAddress } from "./own-address.js";

/** Redirects a webhook call follows (each one checked as the first URL is), as fetch's 20 are more than any receiver needs. */
export const WEBHOOK_MAX_REDIRECTS = 5;

/** What a webhook call did on the wire, for tests: bytes of the receivers' answers read (headers and body), in all. */
export interface WebhookWire {
  answerBytes: number;
}

/**
 * POSTs webhook bodies, giving up after `timeoutMs` of wall time. Only the receiver's status is
 * read: the connection is closed as soon as the answer's head has come, so a receiver answering
 * an endless body costs minipod a socket buffer (at most about 64 KiB), never the body. A call to
 * minipod's own port (`own`), by any name or address or through a redirect, is refused.
 */
export function webhookSender(timeoutMs: number, own: OwnAddress, wire?: WebhookWire): WebhookSender {
  return async (url, body) => {
    // Submissions refuse other schemes; a job imported from elsewhere is still never sent to a
    // file: or data: URL.
    if (hasCredentials(url)) return { error: "a URL with credentials (user:password@) is never sent" };
    if (!isWebhookUrl(url)) return { error: "not an http:// or https:// URL" };
    const signal = AbortSignal.timeout(timeoutMs);
    let target = new URL(url);
    let method = "POST";
    for (let hop = 0; ; hop++) {
      const refusal = own.refusal(target.hostname, portOf(target));
      if (refusal) return { error: refusal };
      const answer = await call(target, method, method === "POST" ? stringify(body) : undefined, own, signal, wire).catch((e: unknown) => failure(e, timeoutMs));
      if ("error" in answer) return answer;
      if (answer.location === undefined) return { status: answer.status };
      if (hop === WEBHOOK_MAX_REDIRECTS) return { error: `more than ${WEBHOOK_MAX_REDIRECTS} redirects` };
      let next: URL;
      try {
        next = new URL(answer.location, target);
      } catch {
        return { status: answer.status };
      }
      if (!isWebhookUrl(next.href)) return { error: `redirected to a URL that is not http:// or https:// without credentials (answered ${answer.status})` };
      // As fetch does: 303, and 301 or 302 to a POST, become a GET without a body.
      if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === "POST")) method = "GET";
      target = next;
    }
  };
}

const portOf = (u: URL): number => (u.port !== "" ? Number(u.port) : u.protocol === "https:" ? 443 : 80);

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

type Answer = { status: number; location?: string } | { error: string };

/** One request: its answer's status (and where a redirect points), read from the head alone. */
function call(target: URL, method: string, body: string | undefined, own: OwnAddress, signal: AbortSignal, wire: WebhookWire | undefined): Promise<Answer> {
  const port = portOf(target);
  // A name is resolved once, and the address connected to is the one checked.
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 4);
      const refusal = addresses.map((a) => own.refusesAddress(a.address, port)).find((r) => r !== undefined);
      if (refusal) return callback(Object.assign(new Error(`${hostname}: ${refusal}`), { code: "EMINIPODSELF" }), "", 4);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  return new Promise((resolve, reject) => {
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { "user-agent": `minipod/${VERSION}`, connection: "close" };
    if (body !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
    let req: ClientRequest;
    try {
      req = send(target, { method, headers, agent: false, lookup, signal });
    } catch (e) {
      return reject(e);
    }
    req.on("error", reject);
    req.on("socket", (socket) => {
      if (!wire) return;
      const before = socket.bytesRead;
      socket.once("close", () => (wire.answerBytes += socket.bytesRead - before));
    });
    req.on("response", (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const location = REDIRECTS.has(status) && typeof res.headers.location === "string" ? res.headers.location : undefined;
      // Nothing more of the answer is wanted: the connection is closed rather than drained.
      res.on("error", () => undefined);
      req.destroy();
      resolve(location === undefined ? { status } : { status, location });
    });
    req.end(body);
  });
}

function failure(e: unknown, timeoutMs: number): { error: string } {
  const err = e as Error & { code?: string; cause?: { code?: string; message?: string } };
  if (err.name === "AbortError" || err.name === "TimeoutError") return { error: `no answer within ${timeoutMs} ms` };
  if (err.code === "EMINIPODSELF") return { error: err.message };
  return { error: err.code ?? err.cause?.code ?? err.message };
}
