// A run is repeatable from its plan.json alone: no environment variable read under src/ may
// change what a run computes. Every read is listed here with the reason it does not (or, for
// ARL_SPEC_DIR, whose work it is); a new read fails this test until it is either moved into the
// plan or listed with its reason. (ARL_SPEC_DIR is gone: the data root is the run's, recorded
// in its run directory.)
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** `file: variable` -> why it does not change what a run computes. */
const ALLOWED: Record<string, string> = {
  "cli/io.ts: (whole environment)": "handed to the commands as io.env; each read of io.env is listed here",
  "cli/main.ts: ARL_DEBUG": "prints the stack of an internal error",
  "cli/commands/check.ts: NO_COLOR": "colour of the diagnostics",
  "cli/commands/plan.ts: NO_COLOR": "colour of the diagnostics",
  "cli/commands/run.ts: NO_COLOR": "colour of the progress line",
  "cli/commands/show.ts: NO_COLOR": "colour of the trajectories it prints",
  "cli/commands/run.ts: ARL_COLD_START_CACHE":
    "where cold-started checkpoints are shared between runs, or off; one is loaded only under the key of everything that decides it (the demonstrations' tokens, the steps, the trainer's build and configuration) and only when its files match their digests, so it is the checkpoint training would give (test/runtime/sft-cache.test.ts)",
  "cli/commands/lsp.ts: ARL_LSP_DEBOUNCE_MS": "how long the editor server waits before checking; no run reads it",
  "cli/commands/lsp.ts: ARL_LSP_MAX_MESSAGE_BYTES": "the largest message the editor server reads; no run reads it",
  "trainer/launch.ts: PYTHONPATH":
    "runtime-gpu is put first on it, so the trainer's own code is always the one imported",
  "conformance/process-backend.ts: PYTHONPATH": "the same, for the conformance check of a process trainer",
  "runtime/run/tracking.ts: (whole environment)":
    "the trackers' sidecar inherits it: the trackers' own settings (WANDB_API_KEY for W&B online, never in a plan; proxies, HOME); they say where metrics are copied, never what the run computes",
  "runtime/run/tracking.ts: PYTHONPATH":
    "runtime-gpu is put first on it, so the sidecar's own arl_tracking is the one imported",
  "contracts/python.ts: ARL_ENVS_PYTHON":
    "which Python runs the env libraries' host (the one that has them installed); the library's version is recorded in the run directory (env-NAME-files.json) and a library that is missing refuses the run",
  "envs/adapters/env-host/libraries.ts: ARL_ENV_CACHE":
    "where generated games are cached across runs; the games are the seeds' (same seed, same bytes) and each one's sha256 is recorded in the run directory and checked on reuse",
  "contracts/python.ts: ARL_ENVSERVERS_PYTHON":
    "which Python runs an agent command's python:envservers (std/envs/verifiers's program; the one that has verifiers); the taskset and its tasks are the task file's, hashed into the plan, and a Python without verifiers fails the episode as an env error",
  "contracts/python.ts: ARL_PYTHON":
    "which Python interpreter runs the PyTorch trainer, the trackers' sidecar and the env host; the trainer's versions (python, torch) are recorded in the run manifest",
  "envs/adapters/env-host/client.ts: (whole environment)":
    "the env host inherits it like any child (PATH, HOME, what user verifiers read); the verifier's file and the data are hashed into the plan",
  "envs/adapters/env-host/client.ts: PYTHONPATH":
    "runtime-gpu is put first on it, so the host's own arl_envhost is the one imported",
  "runtime/run/replica.ts: OMP_NUM_THREADS":
    "a thread count the user set is kept rather than halved for the trainer beside its generation replica; threads change speed, not what the plan means (test/runtime/async-replica.test.ts)",
  "trainer/embedded/trainer.ts: ARL_TINY_CHUNK_TOKENS":
    "how a batch is cut into forward/backward chunks; the result is the same (test/trainer/embedded-train-step.test.ts)",
  "cli/commands/run-nodes.ts: (whole environment)":
    "the trainer workers a machine above node 0 starts inherit its environment (PATH, CUDA and NCCL settings), as torchrun's own workers do; what they compute comes from node 0's requests",
  "runtime/run/agent-process.ts: (whole environment)":
    "an agent program inherits the environment, as any program a user starts does; what it computes is its own (its outcome), and its model calls go through the gateway",
  "bench/peer.ts: (whole environment)":
    "the side-by-side bench's Python (TRL and the plain PyTorch floor) inherits it; a benchmark, not a run, and ARL's own run in it reads the plan",
  "inference/engine/launch.ts: (whole environment)":
    "a launched inference server inherits the environment (PATH, CUDA and NCCL settings, HF caches), as torchrun's workers do; what it samples is checked against the trainer per batch (the mismatch metrics) and its weights are the trainer's, synced",
  "inference/engine/launch.ts: CUDA_VISIBLE_DEVICES":
    "a scheduler's GPU allocation: the servers' devices are indices into it (docs/engines.md, Launch); which GPU computes does not change what the plan means",
  "envs/worlds/findmax/isolation.ts: ARL_SANDBOX_WITHOUT":
    "switches findmax sandbox layers off as on a machine without them, to check the fallbacks: the code computes the same in every layer (test/envs/findmax-sandbox.test.ts); without the namespaces a run is refused unless the plan allows it",
  "contracts/sandbox.ts: PATH":
    "where bubblewrap and prlimit are found (whether episodes can be sandboxed, which arl check reports); a run with sandbox.mode required refuses without them",
  "contracts/sandbox.ts: HOME":
    "keeps the user's home from being shown to an episode whole when a program's folder lies above it; what the episode computes is the same",
  "contracts/sandbox.ts: [name]":
    "the variables a sandboxed program keeps (PATH, the locale, VIRTUAL_ENV, PYTHONPATH, NODE_PATH), as it would have them unsandboxed: the program is the user's, run where the user runs it",
  "envs/adapters/subprocess.ts: PATH":
    "finds the env command's program to show its installation read-only in the sandbox; the program itself is the plan's",
  "runtime/run/agent-sandbox.ts: PATH":
    "finds the agent command's program to show its installation read-only in the sandbox; the program itself is the plan's",
  "envs/worlds/swe/run-tests.ts: PATH":
    "finds the test runner's Python and its installation to show it read-only in the sandbox, and is that sandbox's PATH",
  "envs/worlds/swe/tasks.ts: (whole environment)":
    "handed to the task generator's Python process, as to the env host's; the generated tasks are fixed by the sdist's sha256, the seed and the knobs the plan holds",
  "envs/worlds/swe/tasks.ts: PYTHONPATH":
    "runtime-gpu is put first on it, so the generator's own arl_swe is the one imported",
  "envs/worlds/swe/tasks.ts: ARL_SWE_PYTHON":
    "which Python generates and runs the swe tasks (one with pytest), or makes the venv of an env's requirements file (pinned and hashed in the plan); the tasks are fixed by the plan's sdist hash, requirements, seed and knobs",
  "envs/worlds/swe/tasks.ts: ARL_ENV_CACHE":
    "where generated swe tasks are cached; a cached set is keyed by everything that decides it",
  "trainer/embedded/backend.ts: ARL_TINY_BACKEND":
    "the tensor kernels (wasm, or cpu when wasm cannot start); the backend used is recorded in the run manifest (versions.tfjs_backend)",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith(".ts") ? [full] : [];
  });
}

/** Every environment read of the source tree, as `file: VARIABLE`. */
function environmentReads(): string[] {
  const out = new Set<string>();
  for (const file of sourceFiles(SRC)) {
    const rel = path.relative(SRC, file).split(path.sep).join("/");
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/process\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)(\s*=[^=])?|\[([^\]]+)\]|\b)/g)) {
      if (m[2]) continue; // an assignment (arl run passing --data-root on), not a read
      out.add(`${rel}: ${m[1] ?? (m[3] ? `[${m[3]}]` : "(whole environment)")}`);
    }
    for (const m of text.matchAll(/\bio\.env\.([A-Za-z_][A-Za-z0-9_]*)/g)) out.add(`${rel}: ${m[1]}`);
  }
  return [...out].sort();
}

describe("environment variables under src/", () => {
  it("change nothing a run computes: each read is allowed with a reason", () => {
    const reads = environmentReads();
    expect(reads.length).toBeGreaterThan(5); // the scan finds them at all
    expect(reads.filter((r) => !(r in ALLOWED))).toEqual([]);
  });

  it("lists only reads that exist, so the list cannot hide a removed one's successor", () => {
    const reads = new Set(environmentReads());
    expect(Object.keys(ALLOWED).filter((k) => !reads.has(k))).toEqual([]);
  });

  it("no longer include the embedded model's shape (it is in the model's name)", () => {
    // Read through a helper (process.env[name]) they would not show as reads: no source names them.
    const naming = sourceFiles(SRC).filter((f) => /ARL_TINY_(EMBED|HIDDEN|HEADS|KEY)\b/.test(readFileSync(f, "utf8")));
    expect(naming.map((f) => path.relative(SRC, f))).toEqual([]);
  });
});
