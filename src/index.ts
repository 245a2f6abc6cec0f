export { createEmulator, buildEmulator, type Emulator, type EmulatorOptions, type EmulatorClock } from "./emulator.js";
export type { Handler, HandlerContext } from "./domain/handlers/types.js";
export type { ConfigInput as EmulatorConfig } from "./config/schema.js";
export { ConfigError } from "./config/load.js";
