// The user's code behind a plan's envs (an agent program's files, a verifiers taskset's module, a
// gymnasium entry point's module: `code` in the plan, src/plan/lower-code-files.ts), checked
// against the sha256 the plan was lowered with before a run starts or resumes on it: a plan run on
// other code than it names is not the experiment its hash identifies, and a resumed run would
// train its later iterations on another env than its earlier ones.
import { statSync } from "node:fs";
import { refusalReason, resolveConfined } from "../contracts/confine.js";
import { sha256File } from "../plan/hash.js";
import type { PlanEnv } from "../plan/schema.js";

/** A code file whose bytes are not the plan's. */
export interface ChangedCodeFile {
  readonly env: string;
  readonly kind: string;
  /** As the plan writes it, relative to the data root. */
  readonly path: string;
  readonly planned: string;
  /** The file's sha256 now; undefined when it cannot be read (`missing` says why). */
  readonly found?: string;
  readonly missing?: string;
}

/** The code files of `envs` below `root` whose sha256 differs from the plan's (or that are gone), in env and path order. */
export function changedCodeFiles(envs: Readonly<Record<string, PlanEnv>>, root: string): ChangedCodeFile[] {
  const out: ChangedCodeFile[] = [];
  for (const [name, env] of Object.entries(envs)) {
    // An agent's and a gymnasium env's plan form carry it (env-schema.ts envCodeSchema).
    const code = (env as { readonly code?: readonly { readonly path: string; readonly sha256: string }[] }).code;
    for (const file of code ?? []) {
      const at = { env: name, kind: env.kind, path: file.path, planned: file.sha256 };
      const confined = resolveConfined(file.path, root, [root]);
      if (!confined.ok) {
        out.push({ ...at, missing: `refused: ${refusalReason(confined.reason, root)}` });
        continue;
      }
      let isFile = false;
      try {
        isFile = statSync(confined.real).isFile();
      } catch {
        // Absent: named below, as a file that is not there.
      }
      if (!isFile) {
        out.push({ ...at, missing: `no file at ${confined.path}` });
        continue;
      }
      const found = sha256File(confined.real);
      if (found !== file.sha256) out.push({ ...at, found });
    }
  }
  return out;
}

/** What `arl run` says of changed code files: one paragraph each, with both hashes and what to do. */
export function changedCodeText(changed: readonly ChangedCodeFile[], root: string, resuming: boolean): string {
  const lines = changed.map((c) => {
    const now = c.found !== undefined ? `has sha256 ${c.found}` : `cannot be read (${c.missing})`;
    return `env '${c.env}' (${c.kind}): the code file '${c.path}' ${now}, but the plan was lowered with sha256 ${c.planned}`;
  });
  const hint = resuming
    ? "the run's earlier iterations ran on the code the plan names; restore that file to resume, or start a new run from the spec ('arl run SPEC.arl'), which lowers it again with the new code (a spec with a lock file: 'arl lock' first)"
    : "to run the changed code, lower the spec again ('arl run SPEC.arl', or 'arl plan' for a plan file; a spec with a lock file: 'arl lock' first); to run this plan, restore the file";
  return `${lines.join("\n")}\n  (code paths are relative to the data root ${root})\n  hint: ${hint}\n`;
}
