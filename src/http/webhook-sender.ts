import { hasCredentials, isWebhookUrl, type WebhookSender } from "../domain/webhooks.js";
import { stringify } from "../domain/json-text.js";
import { VERSION } from "../version.js";

/** POSTs webhook bodies with fetch, giving up after `timeoutMs` of wall time. */
export function fetchWebhookSender(timeoutMs: number): WebhookSender {
  return async (url, body) => {
    // Submissions refuse other schemes; a job imported from elsewhere is still never sent to a
    // file: or data: URL (fetch would "answer" those itself).
    if (hasCredentials(url)) return { error: "a URL with credentials (user:password@) is never sent" };
    if (!isWebhookUrl(url)) return { error: "not an http:// or https:// URL" };
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": `minipod/${VERSION}` },
        body: stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      return { status: res.status };
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === "TimeoutError") return { error: `no answer within ${timeoutMs} ms` };
      return { error: err.cause?.code ?? err.cause?.message ?? err.message };
    }
  };
}
