// Build step (`npm run build`): writes the JSON Schema of the trainer protocol's requests to
// runtime-gpu/arl_trainer/protocol.schema.json, where the PyTorch trainer reads it. Generated
// from the zod schemas of trainer-requests.ts, so the two trainers validate against one schema;
// the file is committed, and a test fails when it differs from what this writes.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { trainerRequestsJsonSchema } from "./trainer-requests.js";

/** Relative to the package root. */
export const TRAINER_SCHEMA_FILE = "runtime-gpu/arl_trainer/protocol.schema.json";

export function renderTrainerSchema(): string {
  return `${JSON.stringify(trainerRequestsJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // dist/contracts/write-trainer-schema.js -> the package root is two levels up.
  writeFileSync(fileURLToPath(new URL(`../../${TRAINER_SCHEMA_FILE}`, import.meta.url)), renderTrainerSchema());
}
