// Which process serves a plan's trainer: the embedded CPU trainer for `backend: local`, the
// PyTorch trainer from runtime-gpu/ for `backend: torch` (under torchrun when the plan's update
// stage needs several processes), or a command the user names (any program speaking the
// trainer protocol).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Plan } from "../plan/schema.js";
import type { TrainerCommand } from "../trainer/protocol/client.js";

const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

export class TrainerUnavailable extends Error {}

export function trainerCommand(plan: Plan, override?: readonly string[]): TrainerCommand {
  if (override && override.length > 0) return { file: override[0]!, args: override.slice(1) };
  const update = plan.stages.update;
  if (update.backend === "local") {
    const embedded = fileURLToPath(new URL("../trainer/embedded/main.js", import.meta.url));
    if (!existsSync(embedded)) {
      throw new TrainerUnavailable("the embedded CPU trainer (backend local, builtin:tiny) is not part of this build yet; run with 'backend: torch' or name a trainer with --trainer-command");
    }
    return { file: process.execPath, args: [embedded] };
  }
  const env = { PYTHONPATH: [`${packageRoot}runtime-gpu`, process.env.PYTHONPATH].filter(Boolean).join(":") };
  if (update.launcher === "torchrun") {
    return {
      file: "torchrun",
      args: [`--nnodes=${update.nodes}`, `--nproc_per_node=${update.processes_per_node}`, "-m", "arl_trainer"],
      env,
    };
  }
  return { file: process.env.ARL_PYTHON ?? "python3", args: ["-m", "arl_trainer"], env };
}
