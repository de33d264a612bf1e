// `arl export verl PLAN.json | SPEC.arl[#experiment/variant] --out DIR [--force]
// [--allow-approximate]`: one plan as the files a veRL 0.9.1 user runs (src/export/verl/).
import { chmodSync, existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { displayPath } from "../../diagnostics/render.js";
import { envKinds } from "../../envs/registry.js";
import { CONFIG_NAME, exportVerl } from "../../export/verl/index.js";
import { writeFileAtomic } from "../../plan/files.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";
import { selectPlans } from "./run.js";

const usage = `Usage: arl export verl PLAN.json | SPEC.arl[#experiment/variant] --out DIR [options]

Writes what a veRL 0.9.1 user runs for one plan: the Hydra config ${CONFIG_NAME}.yaml (veRL's
ppo_trainer defaults with the plan's settings over them), SEMANTICS.md (every setting whose
veRL counterpart means something else, or that has none), data/train.jsonl and data/val.jsonl
with prepare_data.py (turns them into the parquet files veRL reads), reward.py (veRL's
compute_score), tool_config.yaml and arl_env_tool.py for multi-turn plans, and run.sh.
  --out DIR             the export folder; it must be empty or missing
  --force               write into a non-empty DIR (files of the same name are replaced)
  --config-only         leave out the data files (no env is reset): the config, report,
                        reward, tools and scripts only
  --allow-approximate   export settings with no safe veRL mapping as their closest veRL
                        setting (listed in SEMANTICS.md) instead of refusing them
A spec must name one variant (SPEC.arl#experiment/variant) unless it has only one.
Exit status: 0 exported, 1 compile errors or settings refused, 2 usage error.`;

function nonEmptyDir(dir: string): boolean {
  return existsSync(dir) && statSync(dir).isDirectory() && readdirSync(dir).length > 0;
}

export const exportCommand = defineCommand({
  name: "export",
  summary: "write a plan as a veRL run (config, data, reward, tools, run.sh)",
  usage,
  options: {
    out: { type: "string" },
    force: { type: "boolean", default: false },
    "allow-approximate": { type: "boolean", default: false },
    "config-only": { type: "boolean", default: false },
  },
  async run(parsed, io) {
    const [target, source, ...extra] = parsed.positionals;
    if (target !== "verl")
      throw new UsageError(
        target === undefined
          ? "name the target: arl export verl ..."
          : `unknown export target '${target}' (known: verl)`,
      );
    if (source === undefined || extra.length > 0)
      throw new UsageError("give exactly one plan file or SPEC.arl#experiment/variant");
    if (parsed.values.out === undefined) throw new UsageError("--out DIR is required");
    const out = path.resolve(io.cwd, parsed.values.out);
    if (existsSync(out) && !statSync(out).isDirectory())
      throw new UsageError(`--out '${parsed.values.out}' is a file, not a folder`);
    if (nonEmptyDir(out) && parsed.values.force !== true)
      throw new UsageError(`--out '${parsed.values.out}' is not empty; pass --force to write into it`);
    const { plans, errors } = selectPlans(source, io);
    if (errors) {
      io.stderr(`arl export: '${source}' has errors; nothing written\n`);
      return ExitCode.errors;
    }
    const [plan, ...more] = plans;
    if (plan === undefined) throw new UsageError(`'${source}' declares no experiment`);
    if (more.length > 0)
      throw new UsageError(
        `'${source}' has ${plans.length} variants; name one: ${plans
          .slice(0, 4)
          .map((p) => `${source.split("#")[0]}#${p.experiment}/${p.variant}`)
          .join(", ")}${plans.length > 4 ? ", ..." : ""}`,
      );
    const allow = parsed.values["allow-approximate"] === true;
    const exported = await exportVerl(plan, envKinds, {
      allowApproximate: allow,
      configOnly: parsed.values["config-only"] === true,
    });
    if (exported.refused.length > 0 && !allow) {
      io.stderr(
        `arl export: ${plan.experiment}/${plan.variant} has ${exported.refused.length} setting(s) veRL has no safe mapping for; nothing written:\n`,
      );
      for (const f of exported.refused) io.stderr(`  ${f.setting} = ${f.arl}: ${f.verl} (${f.consequence})\n`);
      io.stderr(
        "  hint: change these settings, or pass --allow-approximate to export the closest veRL settings (listed in SEMANTICS.md)\n",
      );
      return ExitCode.errors;
    }
    for (const [name, text] of exported.files) writeFileAtomic(path.join(out, name), text);
    chmodSync(path.join(out, "run.sh"), 0o755);
    const counts = (h: string) => exported.findings.filter((f) => f.handling === h).length;
    io.stdout(
      `wrote ${displayPath(out, io.cwd)}: ${exported.files.size} files for ${plan.experiment}/${plan.variant}; SEMANTICS.md lists ${counts("refused")} approximated, ${counts("differs")} differing, ${counts("exact")} exact\n`,
    );
    return ExitCode.ok;
  },
});
