import type { Agent as NodeAgent } from "node:http";
import type { Agent } from "undici";
import { workerAgent } from "./proxy.js";
import { relayAgent } from "./upstream.js";

/**
 * An emulator's connections to its load-balancing workers, kept open between requests: the
 * relay's (undici) and the app's (node's client), each made on first use. `close()` ends every
 * one, idle or busy, so a closed emulator leaves no socket to a worker and no keep-alive timer
 * behind; another emulator of the same process has pools of its own.
 */
export class WorkerConnections {
  private relayPool: Agent | undefined;
  private appPool: NodeAgent | undefined;

  /** The relay's pool (requests relayed from node's request). */
  get relay(): Agent {
    return (this.relayPool ??= relayAgent());
  }

  /** The app's pool (requests served through Hono). */
  get app(): NodeAgent {
    return (this.appPool ??= workerAgent());
  }

  /** Ends every connection of both pools; a later request opens new ones. */
  close(): Promise<void> {
    const relay = this.relayPool;
    this.relayPool = undefined;
    this.appPool?.destroy();
    this.appPool = undefined;
    return relay ? relay.destroy().catch(() => {}) : Promise.resolve();
  }
}
