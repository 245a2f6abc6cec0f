import { nearest } from "../nearest.js";
import type { HandlerRef } from "../endpoint.js";
import { EmulatorError } from "../errors.js";
import { EXTERNAL_HANDLER } from "../external-workers.js";
import type { LoopTime } from "../openai/bounds.js";
import type { OpenAiSettingsOf } from "../openai/settings.js";
import { builtinHandlers } from "./builtins.js";
import { httpHandler, isHttpRef } from "./http-handler.js";
import { isModuleRef, loadHandlerModule } from "./load-module.js";
import type { Handler } from "./types.js";

/**
 * Resolves handler references: built-ins, functions registered by name through the programmatic
 * API, and module paths (loaded once, relative to the config file's folder).
 */
export class HandlerRegistry {
  private readonly named: Map<string, Handler>;
  private readonly modules = new Map<string, Handler>();
  /** References that could not be prepared for endpoints kept in the database, and why. */
  private readonly missing = new Map<string, string>();

  /**
   * `time`: the wall the built-in OpenAI answers pace themselves by (the clock's); `openAiSettings`:
   * each endpoint's settings of those answers (defaults when not given).
   */
  constructor(private readonly baseDir: string, time: LoopTime, functions: Record<string, Handler> = {}, openAiSettings?: OpenAiSettingsOf) {
    this.named = new Map(Object.entries(builtinHandlers(time, openAiSettings)));
    for (const [name, fn] of Object.entries(functions)) this.named.set(name, fn);
  }

  /** Names usable as `handler` besides module paths. */
  names(): string[] {
    return [...this.named.keys(), EXTERNAL_HANDLER];
  }

  register(name: string, fn: Handler): void {
    this.named.set(name, fn);
  }

  /** Loads every module a reference names, so a bad path fails at startup, not at the first job. */
  async prepare(ref: HandlerRef): Promise<void> {
    if (typeof ref !== "string") ref = ref.url;
    if (ref === EXTERNAL_HANDLER || this.named.has(ref) || this.modules.has(ref)) return;
    if (isHttpRef(ref)) {
      if (!URL.canParse(ref)) throw new EmulatorError("BAD_REQUEST", `"${ref}" is not a valid URL for an HTTP worker; give it as http://host:port`);
      this.modules.set(ref, httpHandler(ref));
      return;
    }
    if (!isModuleRef(ref)) {
      throw new EmulatorError(
        "BAD_REQUEST",
        `unknown handler "${ref}": ${(() => {
          const near = nearest(ref, this.names());
          return near ? `did you mean "${near}"? ` : "";
        })()}use one of ${this.names().join(", ")}, a module path such as ./handlers/my-handler.ts, or a worker's URL such as http://127.0.0.1:8000`,
      );
    }
    try {
      this.modules.set(ref, await loadHandlerModule(ref, this.baseDir));
    } catch (error) {
      throw new EmulatorError("BAD_REQUEST", (error as Error).message, { cause: error });
    }
  }

  /**
   * Notes a reference that cannot be prepared here (an endpoint from the database or an imported
   * state whose handler was a function of another process, or a module since removed): its jobs
   * fail with `reason` instead of the start failing.
   */
  unavailable(ref: HandlerRef, reason: string): void {
    this.missing.set(typeof ref === "string" ? ref : ref.url, reason);
  }

  /**
   * Loads every module handler again (after an edit): jobs that start from now on run the new
   * code, those running keep the function they started with. A module that fails to load keeps
   * its previous handler and is reported.
   */
  async reloadModules(): Promise<{ reloaded: string[]; failed: Array<{ handler: string; error: string }> }> {
    const reloaded: string[] = [];
    const failed: Array<{ handler: string; error: string }> = [];
    for (const ref of [...this.modules.keys()]) {
      if (isHttpRef(ref)) continue;
      try {
        this.modules.set(ref, await loadHandlerModule(ref, this.baseDir, true));
        reloaded.push(ref);
      } catch (error) {
        failed.push({ handler: ref, error: (error as Error).message });
      }
    }
    return { reloaded, failed };
  }

  /** The handler for a prepared reference. */
  resolve(ref: HandlerRef): Handler {
    if (typeof ref !== "string") ref = ref.url;
    const fn = this.named.get(ref) ?? this.modules.get(ref);
    if (!fn) throw new EmulatorError("BAD_REQUEST", this.missing.get(ref) ?? `handler "${ref}" was not loaded`);
    return fn;
  }
}
