// Writes schema/emulator.config.schema.json from the zod config schema, so editors complete
// emulator.config.json through its "$schema" line. `npm run schema` after changing the schema;
// a test fails when the committed file is stale.
import { writeFileSync } from "node:fs";
import { configJsonSchema } from "../src/compose/config.js";

const out = new URL("../schema/emulator.config.schema.json", import.meta.url);
writeFileSync(out, JSON.stringify(configJsonSchema(), null, 2) + "\n");
process.stdout.write(`wrote ${out.pathname}\n`);
