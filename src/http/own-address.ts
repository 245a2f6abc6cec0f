import { isIP } from "node:net";
import { networkInterfaces } from "node:os";

/**
 * minipod's own listening socket, as the outgoing calls it makes on a user's say-so (webhooks)
 * must never reach it: a webhook at `{minipod}/_emulator/reset` would reset minipod when no
 * `controlKey` is set. Set once the server listens; before that (in-process use without a
 * socket) nothing is its own.
 */
export class OwnAddress {
  private port: number | undefined;
  private host: string | undefined;

  /** The host (as given to `listen`) and port the server listens on. */
  listening(host: string, port: number): void {
    this.host = normalize(host);
    this.port = port;
  }

  /**
   * Why a call to `host` (a name or an address, as a URL's hostname) and `port` would reach
   * minipod's own socket, or undefined: its port, on a loopback or unspecified address, any
   * address of this machine's interfaces, the bound address, or a name under `localhost`
   * (`localhost`, `{endpoint_id}.localhost`), which only ever means this machine.
   */
  refusal(host: string, port: number): string | undefined {
    if (this.port === undefined || port !== this.port) return undefined;
    const name = normalize(host);
    const own = isIP(name) ? this.isOwnIp(name) : name === "localhost" || name.endsWith(".localhost");
    return own ? refused(host, port) : undefined;
  }

  /** The same check for an address a name resolved to. */
  refusesAddress(address: string, port: number): string | undefined {
    if (this.port === undefined || port !== this.port) return undefined;
    return this.isOwnIp(normalize(address)) ? refused(address, port) : undefined;
  }

  private isOwnIp(ip: string): boolean {
    if (ip === this.host || ip === "::" || ip === "::1" || /^(127|0)\./.test(ip)) return true;
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) if (normalize(a.address) === ip) return true;
    }
    return false;
  }
}

const refused = (host: string, port: number): string =>
  `refused: ${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port} is minipod's own port (its control API, dashboard and management routes); minipod never calls itself`;

/** An address as compared: lower case, without brackets, an IPv4-mapped IPv6 address as its IPv4 one. */
function normalize(host: string): string {
  let h = host.toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) return mapped[1]!;
  // ::ffff:7f00:1, the same address written in hex.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(h);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return h;
}
