// The process that bench/instructions.ts counts under callgrind: imports only what its case
// needs (node's start and the imports are most of the process's instructions), does the case's
// setup, then runs the case `runs` times. Its argument is one JSON job (FrontendJob).
import { readFileSync } from "node:fs";
import path from "node:path";
import { consume } from "./harness.js";

export interface FrontendJob {
  readonly case: "arl-load" | "yaml-ajv" | "arl-check";
  readonly runs: number;
  /** arl-load: the entry file; yaml-ajv: the YAML files; arl-check: the valid spec. */
  readonly files: readonly string[];
}

async function caseOf(job: FrontendJob): Promise<() => unknown> {
  const [first = ""] = job.files;
  if (job.case === "arl-load") {
    const { ModuleLoader } = await import("../language/imports.js");
    return () => new ModuleLoader().load(first);
  }
  if (job.case === "arl-check") {
    const { Compiler } = await import("../compiler.js");
    return () => new Compiler().check(first);
  }
  const [{ Ajv }, YAML, { yamlSchema }] = await Promise.all([
    import("ajv"),
    import("yaml"),
    import("./frontend-schema.js"),
  ]);
  const validate = new Ajv({ allErrors: false, allowUnionTypes: true }).compile(yamlSchema());
  return () =>
    job.files.map((file) => {
      const data: unknown = YAML.parse(readFileSync(file, "utf8"));
      if (!validate(data)) throw new Error(`${path.basename(file)} does not match the schema`);
      return data;
    });
}

const job = JSON.parse(process.argv[2] ?? "{}") as FrontendJob;
const once = await caseOf(job);
for (let i = 0; i < job.runs; i++) consume(once());
