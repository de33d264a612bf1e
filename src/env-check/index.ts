// `arl env-check`'s work, apart from the command line: every env of the selected plans probed
// through its kind (probe.ts), each distinct env once however many variants share it. The kinds
// are checked against this machine (hostCheck) and provisioned as a run would provision them,
// into a scratch folder in place of a run directory, and shut down at the end.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { EnvError, type EnvKind } from "../contracts/env.js";
import { canonicalize } from "../plan/canonical.js";
import type { Plan, PlanEnv, PlanTool } from "../plan/schema.js";
import { probeEnv, type EnvReport, type ProbeOptions } from "./probe.js";

export interface EnvCheckOptions extends ProbeOptions {
  /** Probe only the env of this name. */
  readonly env?: string;
  /** Where the probe's scratch files go (env-host.log); default: a fresh temporary folder, removed at the end. */
  readonly scratchDir?: string;
  /** Progress lines (provisioning an env can take long). */
  readonly log: (line: string) => void;
}

export interface CheckedEnv {
  readonly report: EnvReport;
  /** The plans that have this env, as experiment/variant. */
  readonly plans: readonly string[];
  readonly wallS: number;
}

interface Target {
  readonly name: string;
  readonly env: PlanEnv;
  readonly tools: readonly PlanTool[];
  readonly seed: number;
  readonly plans: string[];
}

/**
 * The distinct envs of `plans` (by name, content and tools), in the plans' order. Variants that
 * differ in their seed only share the env: it is probed once, with the first one's seed.
 */
function targets(plans: readonly Plan[], only: string | undefined): Target[] {
  const byKey = new Map<string, Target>();
  for (const plan of plans) {
    for (const [name, env] of Object.entries(plan.envs)) {
      if (only !== undefined && name !== only) continue;
      const tools = plan.tools.filter((t) => t.env === name);
      const key = canonicalize({ name, env, tools });
      const target = byKey.get(key) ?? { name, env, tools, seed: plan.seed, plans: [] };
      target.plans.push(`${plan.experiment}/${plan.variant}`);
      byKey.set(key, target);
    }
  }
  return [...byKey.values()];
}

/** The env names of `plans`, for a usage error naming what `--env` may be. */
export function envNamesOf(plans: readonly Plan[]): string[] {
  return [...new Set(plans.flatMap((p) => Object.keys(p.envs)))].sort();
}

/** Probes every env of `plans` with the kinds of `kinds`; one report per distinct env. */
export async function checkEnvs(
  plans: readonly Plan[],
  kinds: ReadonlyMap<string, EnvKind>,
  options: EnvCheckOptions,
): Promise<CheckedEnv[]> {
  const scratch = options.scratchDir ?? mkdtempSync(path.join(tmpdir(), "arl-env-check-"));
  const used = new Set<EnvKind>();
  const out: CheckedEnv[] = [];
  try {
    for (const target of targets(plans, options.env)) {
      const started = Date.now();
      const report = await checkOne(target, kinds, scratch, used, options);
      out.push({ report, plans: target.plans, wallS: (Date.now() - started) / 1000 });
    }
  } finally {
    await Promise.all(
      [...used].map((kind) => (kind.shutdown ? kind.shutdown().catch(() => undefined) : Promise.resolve())),
    );
    if (options.scratchDir === undefined) rmSync(scratch, { recursive: true, force: true });
  }
  return out;
}

async function checkOne(
  target: Target,
  kinds: ReadonlyMap<string, EnvKind>,
  scratch: string,
  used: Set<EnvKind>,
  options: EnvCheckOptions,
): Promise<EnvReport> {
  const { name, env, tools } = target;
  const unprobed = (message: string): EnvReport => ({
    name,
    kind: env.kind,
    lines: [],
    findings: [{ check: "not probed", message }],
  });
  const kind = kinds.get(env.kind);
  if (!kind) return unprobed(`this arl has no env kind '${env.kind}' (it has ${[...kinds.keys()].sort().join(", ")})`);
  if (env.kind === "agent") return probeEnv(kind, name, env, tools, target.seed, options);
  const host = await kind.hostCheck?.(env);
  if (host?.refusal !== undefined) return unprobed(`this machine cannot run it: ${host.refusal}`);
  if (kind.provision) {
    options.log(`provisioning env '${name}' (${env.kind})`);
    used.add(kind);
    try {
      await kind.provision(env, {
        name,
        tools: tools.map((t) => t.definition.function),
        runDir: scratch,
        log: options.log,
      });
    } catch (error) {
      if (!(error instanceof EnvError)) throw error;
      return {
        name,
        kind: env.kind,
        lines: [],
        findings: [{ check: "fault", message: `provision failed (${error.kind}): ${error.message}` }],
      };
    }
  }
  const report = await probeEnv(kind, name, env, tools, target.seed, options);
  if (host?.warning !== undefined) report.lines.unshift(`warning: ${host.warning}`);
  return report;
}
