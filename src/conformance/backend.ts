// Who computes an op's value. The in-process backend is the TypeScript reference (src/rl); a
// trainer backend (the embedded trainer or runtime-gpu, through the trainer protocol's
// `eval_op`) will implement the same interface for the ops that need a trainer's own code
// (policy_loss, kl at least), so both sides are held to the same vectors.
import { opNames, type OpName } from "../contracts/conformance-ops.js";
import { referenceOps } from "../rl/reference-ops.js";

export interface ConformanceBackend {
  /** Shown in reports: "reference", "local", "torch". */
  readonly name: string;
  /** Whether this backend computes `op`; the runner evaluates the others with the reference. */
  supports(op: OpName): boolean;
  /** The op's output for `input` as written in the vector file (snake_case, file shapes). */
  evaluate(op: OpName, input: unknown): Promise<unknown>;
  /** Releases what the backend holds (a trainer process). */
  close(): Promise<void>;
}

export const referenceBackend: ConformanceBackend = {
  name: "reference",
  supports: (op) => opNames.includes(op),
  evaluate: async (op, input) => referenceOps[op](input),
  close: async () => {},
};

/** The trainer names `--trainer` accepts; their backends come with the trainer protocol. */
export const trainerNames = ["local", "torch"] as const;
export type TrainerName = (typeof trainerNames)[number];
