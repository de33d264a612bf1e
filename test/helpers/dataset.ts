// A one-env experiment around a dataset env, compiled in a folder of its own with its files.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Compiler } from "../../src/compiler.js";
import type { DatasetEnv } from "../../src/envs/adapters/dataset/index.js";
import { lowerModel } from "../../src/plan/lower.js";
import type { Plan } from "../../src/plan/schema.js";

const spec = (fields: string, env: string, body: string) => `import "std/envs/dataset" as dataset
experiment e {
  policy { model: "builtin:tiny" }
  rollout { iterations: 1, tasks_per_batch: 1 }
  algorithm { group_size: 2 }
  env q extends dataset.${env} {
${fields}
  }
${body}
}
`;

/**
 * `files` and spec.arl, whose env `q` extends `dataset.<env>` with `fields` (and the experiment
 * has `body` besides), in a fresh folder: the check's errors and, when there are none, the plan.
 */
export function compileDatasetSpec(fields: string, files: Record<string, string | Buffer>, env = "task", body = "") {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-dataset-spec-"));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  writeFileSync(path.join(dir, "spec.arl"), spec(fields, env, body));
  const result = new Compiler().check(path.join(dir, "spec.arl"));
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  const plan: Plan | undefined =
    errors.length === 0 && result.model ? lowerModel(result.model).plans[0]?.plan : undefined;
  return { dir, errors, plan, env: plan?.envs.q as DatasetEnv | undefined };
}
