// Build step (`npm run build`): publishes the plan's JSON Schema as dist/plan.schema.json,
// exported by the package as `arl/plan.schema.json`. Generated from the zod schema, so the
// two cannot drift apart.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { prettyJson } from "./canonical.js";
import { planJsonSchema } from "./schema.js";

const PUBLISHED_SCHEMA_FILE = "plan.schema.json";

export function renderPlanSchema(): string {
  return prettyJson(planJsonSchema());
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = fileURLToPath(new URL(`../${PUBLISHED_SCHEMA_FILE}`, import.meta.url));
  writeFileSync(target, renderPlanSchema());
}
