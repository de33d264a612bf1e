// Conformance through a trainer process: every op is sent as the trainer protocol's `eval_op`
// (docs/protocol.md) and answered by the trainer's own code. `local` is the embedded CPU trainer
// (builtin:tiny, dist/trainer/embedded/main.js), `torch` the PyTorch trainer of runtime-gpu/
// (`python3 -m arl_trainer`, PYTHONPATH=runtime-gpu, with the first Python that has torch).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { opNames, type OpName } from "../contracts/conformance-ops.js";
import { arlVersion } from "../plan/version.js";
import { pythonWithTorch } from "../trainer/launch.js";
import { TrainerClient, type TrainerCommand } from "../trainer/protocol/client.js";
import type { ConformanceBackend, TrainerName } from "./backend.js";

const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

export class BackendUnavailable extends Error {
  constructor(
    message: string,
    readonly stderrTail: readonly string[] = [],
  ) {
    super(message);
  }
}

/** The command that starts trainer `name`. */
function conformanceTrainerCommand(name: TrainerName): TrainerCommand {
  if (name === "local") {
    // The built entry point, also when this module runs from src/ (tests).
    const embedded = `${packageRoot}dist/trainer/embedded/main.js`;
    if (!existsSync(embedded))
      throw new BackendUnavailable(`the embedded trainer is not built (${embedded} is missing); run 'npm run build'`);
    return { file: process.execPath, args: [embedded] };
  }
  const env = { PYTHONPATH: [`${packageRoot}runtime-gpu`, process.env.PYTHONPATH].filter(Boolean).join(":") };
  return { file: pythonWithTorch(), args: ["-m", "arl_trainer"], env };
}

/** Starts the trainer and checks that it answers `eval_op`. */
export async function processBackend(
  name: TrainerName,
  command: TrainerCommand = conformanceTrainerCommand(name),
): Promise<ConformanceBackend> {
  let client: TrainerClient;
  try {
    client = await TrainerClient.start(command, arlVersion());
  } catch (error) {
    const e = error as Error & { stderrTail?: readonly string[] };
    throw new BackendUnavailable(
      `could not start the ${name} trainer (${[command.file, ...command.args].join(" ")}): ${e.message}`,
      e.stderrTail ?? [],
    );
  }
  const methods = client.handshakeResult?.capabilities.methods ?? [];
  if (!methods.includes("eval_op")) {
    await client.shutdown();
    throw new BackendUnavailable(`the ${name} trainer does not implement eval_op (its methods: ${methods.join(", ")})`);
  }
  return {
    name,
    supports: (op: OpName) => opNames.includes(op),
    evaluate: async (op, input) => (await client.request("eval_op", { op, input })).output,
    close: () => client.shutdown(),
  };
}
