// Shared by the tests of the host library kinds (test/envs/<library>.test.ts): the Python that has
// the env libraries, whether one is installed (the tests skip without it, except under CI, where
// they must run), an env entry as the plan holds it, a kind provisioned for a describe block, and
// playing an episode through the host.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import * as z from "zod";
import type { EnvKind, Signals } from "../../src/contracts/env.js";
import { envLibraryPythonCandidates } from "../../src/contracts/python.js";
import { createHostEnvKinds, type HostLibraryEnv } from "../../src/envs/adapters/env-host/libraries.js";
import type { HostLibrary } from "../../src/contracts/libraries/library.js";

export const python = envLibraryPythonCandidates()[0] ?? "python3";

/** Whether the tests of a library skip: it is not importable, and this is not CI. */
export function skipWithout(module: string): boolean {
  return spawnSync(python, ["-c", `import ${module}`], { stdio: "ignore" }).status !== 0 && !process.env.CI;
}

/** An env of `library` as the plan holds it: the common fields, then its knobs (defaults filled in); `data` are the file knobs' hashed files. */
export function planEnv(
  library: HostLibrary,
  knobs: Record<string, unknown>,
  common: Record<string, unknown> = {},
  data: Record<string, string> = {},
  root = ".",
): HostLibraryEnv {
  const files = Object.fromEntries(
    Object.entries(data).map(([k, file]) => [
      k,
      {
        path: file,
        sha256: createHash("sha256")
          .update(readFileSync(path.join(root, file)))
          .digest("hex"),
      },
    ]),
  );
  const dataKnobs = Object.keys(library.files ?? {});
  const shape = Object.fromEntries(Object.entries(library.knobs).filter(([k]) => !dataKnobs.includes(k)));
  return {
    kind: library.kind,
    description: null,
    version: "1",
    tasks: 4,
    split: { train: 0.5, valid: 0, test: 0.5 },
    weight: 1,
    signals: {},
    optimal_steps: null,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    timeout_s: 60,
    action_tool: "act",
    prepare_timeout_s: 600,
    ...common,
    ...z.object(shape).parse(knobs),
    ...files,
  } as unknown as HostLibraryEnv;
}

export const act = (command: string) => ({ name: "act", arguments: { command } });

/** One episode of `task` with `seed`: the first observation, each step's signals and text, the outcome. */
export async function play(
  kind: EnvKind<HostLibraryEnv>,
  env: HostLibraryEnv,
  task: number,
  seed: number,
  actions: readonly string[],
): Promise<{ first: string; steps: { text: string; signals: Signals; terminated: boolean }[]; outcome: Signals }> {
  const instance = await kind.create(env, task, seed);
  const first = (await instance.reset()).text;
  const steps = [];
  for (const action of actions) {
    const step = await instance.step(act(action));
    steps.push({ text: step.text, signals: step.signals, terminated: step.terminated });
    if (step.terminated) break;
  }
  const outcome = await instance.outcome();
  await instance.close();
  return { first, steps, outcome };
}

/** Runs a Python script in the env libraries' Python; its stdout parsed as JSON. */
export function pythonJson(
  script: string,
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): unknown {
  const run = spawnSync(python, ["-c", script, ...args], { encoding: "utf8", env, timeout: 120_000 });
  if (run.status !== 0) throw new Error(`python failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").at(-1)!);
}

/**
 * The kind of `library` for the enclosing describe block: made on a fresh data root and `env`
 * provisioned before its tests (`before` runs first), its host stopped after them; the getter
 * gives the kind and the lines provision logged.
 */
export function provisionedKind(
  library: HostLibrary,
  env: HostLibraryEnv,
  before: () => void = () => undefined,
): () => { kind: EnvKind<HostLibraryEnv>; logs: readonly string[] } {
  let kind: EnvKind<HostLibraryEnv> | undefined;
  const logs: string[] = [];
  beforeAll(async () => {
    before();
    const runDir = mkdtempSync(path.join(tmpdir(), `arl-${library.kind}-`));
    kind = createHostEnvKinds([library], { root: runDir, python }).get(library.kind)!;
    await kind.provision!(env, { name: "env", runDir, log: (l) => logs.push(l), tools: [] });
  }, 180_000);
  afterAll(async () => {
    await kind?.shutdown?.();
  });
  return () => ({ kind: kind!, logs });
}
