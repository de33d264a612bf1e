// The plan stage's codes: lowering, bounds, what the runtime would refuse, lock files (src/plan/).
// Each code with the paragraph `arl explain CODE` prints.
import type { CodeExplanation } from "./explanation.js";

export const planCodes = {
  "data-file-outside-root": {
    stage: "plan",
    title: "A data file outside the spec's folder",
    explanation: `Data files (an sql env's database and questions) must lie below the entry spec's folder or
the standard library, like imports: no absolute paths, no '..' out of the folder, and no symbolic
link that leads outside it (links are resolved before the check). The file is neither read nor
hashed. Copy the data into the experiment's folder and name it by a relative path.`,
  },
  "data-file-not-found": {
    stage: "plan",
    title: "A data file named by the spec cannot be read",
    explanation: `Data files (task lists, questions) are resolved relative to the spec file that names them, and
the plan records each file's sha256, so the file must exist when the spec is compiled.`,
  },
  "data-file-too-large": {
    stage: "plan",
    title: "A data file larger than its declared bound",
    explanation: `A cold start's record file (rollout.sft.data) is read whole into records, held in memory with
their tokens through the cold start, so its size is bounded by rollout.sft.max_data_bytes
(256 MiB unless the spec says more). A larger file is neither hashed nor read. Raise the bound
(the message says how far it may go) or cut the file.`,
  },
  "env-knob-invalid": {
    stage: "plan",
    title: "A knob of an env library that the library could not use",
    explanation: `An env served by the env host (kind textworld, reasoning_gym, textarena, skyrl_gym, gymnasium,
textworld_express; docs/env-host.md) is checked at lowering without starting Python: a seed list
that repeats a seed, \`tasks\` that contradicts what the knobs give (a seed list, a folder of games,
a rows file's line count), a rows file whose line is not a JSON object, or a combination the
library cannot take (skyrl-gym's text2sql without its databases, Gymnasium with both or neither
of id and entry_point). The message names the knob and the hint what would work. What only the
library can judge (an unknown game or dataset, a size it cannot generate) is refused at provision.`,
  },
  "data-folder-invalid": {
    stage: "plan",
    title: "A folder of data files that cannot be used",
    explanation: `A knob naming a folder of your own files (TextWorld's \`games\`, skyrl-gym's databases) is confined
like a data file: it must lie inside the experiment's folder, be a folder, and hold files of the
kinds the library reads; each one is hashed into the plan. The message says which of these failed.`,
  },
  "agent-task-file-invalid": {
    stage: "plan",
    title: "An agent env's task file is not one JSON object a line",
    explanation: `An agent env (kind: agent) hands its program one task a episode: line N of task_file (blank lines
skipped) is task N, given to the program as JSON on stdin and in ARL_TASK. Every non-blank line must
be a JSON object, and there must be at least one; the message names the first line that is not.`,
  },
  "sandbox-unavailable": {
    stage: "plan",
    title: "An agent or subprocess env's episodes cannot be sandboxed on this machine",
    explanation: `Each episode of an agent or subprocess env runs in its own bubblewrap sandbox (its own
processes, a private /tmp, the system read-only, no network but the run's gateway, and its limits:
docs/envs.md#what-an-episode-can-reach). Where bubblewrap is not on PATH or cannot create
namespaces (a container that refuses user namespaces, macOS), \`sandbox { mode: auto }\` runs the
episodes unisolated: a program, or code the policy writes that the program runs, can then read the
other episodes' keys in /proc/*/environ and post their outcomes, read your files and reach the
network. \`mode: required\` refuses to run instead; \`mode: off\` accepts running unisolated and is
not reported.`,
  },
  "agent-command-word": {
    stage: "plan",
    title: "An agent command names a stdlib program or a Python arl does not have",
    explanation: `Two kinds of words in an agent env's command are resolved on the machine that runs it, so that a
stdlib env can name what ships with arl without a path in the plan: \`std:PATH\` is the file PATH
below the stdlib's std/ folder (std:agents/verifiers_taskset.py), and a first word
\`python:envservers\` is the env servers' Python ($ARL_ENVSERVERS_PYTHON, else the package's
.venv-envservers, else python3). A \`std:\` path that leaves std/ or names no file, or another
\`python:\` name, is reported here rather than failing every episode.`,
  },
  "agent-task-invalid": {
    stage: "plan",
    title: "A task line does not fit the stdlib program that reads it",
    explanation: `A program shipped in the stdlib may declare the shape of its task lines in a JSON Schema beside it
(std/agents/X.py and std/agents/X.task.schema.json). When an agent env's command names such a
program (std:agents/X.py), every line of its task_file is checked against that schema, and the
first line that does not fit is reported with its line number: a missing field, a field of the
wrong type, a field the program does not read. std/envs/verifiers's lines are
{"taskset": "./my_tasks.py", "index": 0}, with an optional "name" and "config".`,
  },
  "agent-tasks-beyond-file": {
    stage: "plan",
    title: "An agent env asks for more tasks than its task file has",
    explanation: `An agent env's tasks are the lines of its task_file, so tasks defaults to their count. A
smaller tasks uses the first lines only; a larger one would name tasks that do not exist. Remove
tasks or lower it.`,
  },
  "agentrl-controller-task": {
    stage: "plan",
    title: "An AgentRL env in controller mode names no task",
    explanation: `An AgentRL controller serves many tasks (os-std, dbbench-std, ...) and routes each episode to
a worker of the task it is asked for, by name. An env with mode: controller must say which
with \`task\`; a task worker (mode: worker) serves one task and needs none.`,
  },
  "openenv-tools": {
    stage: "plan",
    title: "An OpenEnv env declares no tool or several",
    explanation: `An OpenEnv server takes one kind of action, a JSON object whose schema is the server's /schema
"action". The env declares it as exactly one tool: the model calls that tool, and its arguments
are sent as the action. At provision the tool's parameters are compared with the server's
action schema.`,
  },
  "agent-env-tools": {
    stage: "plan",
    title: "An agent env declares tool blocks",
    explanation: `An agent program (kind: agent) runs its own loop and its own tools: the model sees the tools the
program sends in its chat requests, and the program executes the calls. Tool blocks in the env
would never be offered or run; remove them.`,
  },
  "cross-policy-agent": {
    stage: "plan",
    title: "Cross-policy sampling with an agent env",
    explanation: `rollout.cross_policy lets a pool model generate some turns of an episode. An agent program's model
calls go through the gateway, which serves the policy alone, so the pool would never be asked; the
run refuses the plan rather than train without the mixing it names. Remove rollout.cross_policy or
the agent env.`,
  },
  "uneven-gpus": {
    stage: "plan",
    title: "resources.gpus does not split across the nodes",
    explanation: `With the torch backend each node runs the same number of trainer processes, one per GPU, so
resources.gpus must be a multiple of resources.nodes.`,
  },
  "empty-split": {
    stage: "plan",
    title: "A split the run uses holds no task",
    explanation: `Each split holds floor(tasks x fraction) tasks (the runtime's own arithmetic). Training samples
from the train split and evaluation from eval.split; with tasks: 3 and split.test 0.33 the test
split is empty and every evaluation would be too. Raise tasks or the fraction.`,
  },
  "local-backend-model": {
    stage: "plan",
    title: "The embedded trainer (backend local) cannot serve this model",
    explanation: `The embedded CPU trainer serves only builtin:tiny (its shape written in the name, e.g.
builtin:tiny?hidden=32&embed=16&heads=2&key=8) with its own chat template, training every float32 weight. Hugging Face models,
local checkpoints, LoRA adapters (policy.lora) and other weight dtypes (policy.dtype) need the
PyTorch trainer: resources.backend: torch.`,
  },
  "engine-servers": {
    stage: "plan",
    title: "Inference servers the plan cannot reach",
    explanation: `With resources.rollout.engine vllm or sglang every generation goes to inference servers
(docs/engines.md). Either the runtime starts them (launch: true, and then urls must be empty: it
would never use them) or they are yours (launch: false): then urls lists each one's base URL, and
servers must equal the number of urls, one server per URL.`,
  },
  "http-env-url": {
    stage: "plan",
    title: "An http env's URL that no request can reach",
    explanation: `The http env calls its task server at url with Node's fetch. A url that is not an http(s) URL,
that holds credentials (they are never sent), or whose port is one of the Fetch standard's blocked
ports (6000, 6665-6669, 5060, 10080, ...: ports of other protocols, which fetch refuses before
connecting, "bad port") would fail every request of every episode. Serve the task server on
another port, such as 8000.`,
  },
  "async-engine": {
    stage: "plan",
    title: "Asynchronous rollout beyond one batch ahead with an inference engine",
    explanation: `An inference engine's servers serve one policy version at a time, synced where the trainer takes
its behaviour snapshot. rollout.async with max_staleness above 1 has batches of several snapshots
rolling out at once, and in_flight_updates changes the weights under an episode in flight; neither
can be served by servers holding one version. Use max_staleness: 1 without in_flight_updates with
an engine, or let the trainer generate (resources.rollout.engine: trainer). docs/semantics.md §7.`,
  },
  "async-in-flight-recompute": {
    stage: "plan",
    title: "In-flight weight updates without the keep-sampling mask",
    explanation: `Under rollout.async.in_flight_updates an episode's tokens may be sampled by several policy
versions, and the behaviour snapshot has moved on by the time the batch is scored, so no one set
of weights can recompute their behaviour log-probs: each token's sampled log-prob is the ratio's
denominator. Without the keep-sampling mask the update uses the full distribution, which the
sampled log-probs are not; keep the mask on (mask.keep_sampling_mask: true) or remove
in_flight_updates. docs/semantics.md §7.`,
  },
  "async-correct-without-tis": {
    stage: "plan",
    title: "Stale groups corrected without a truncated importance weight",
    explanation: `rollout.async.past_max_lag: correct keeps a group past max_policy_lag and weights each of its
tokens by min(pi_start / mu_t, C), the truncated importance weight from the version that sampled
the token to the weights that start the update; C is mask.tis.cap. Set mask { tis { cap: 2,
level: token } }, or drop stale groups (past_max_lag: drop). docs/semantics.md §7.`,
  },
  "async-replica-engine": {
    stage: "plan",
    title: "A generation replica beside inference servers",
    explanation: `rollout.async.generation: replica starts a second process of the trainer that holds the behaviour
weights and generates while the trainer trains. With resources.rollout.engine vllm or sglang the
servers already generate apart from the trainer and are synced where the snapshot is taken, so a
replica would never be asked for a token. Remove generation: replica, or let the replica generate
(resources.rollout.engine: trainer). docs/semantics.md §7.`,
  },
  "async-replica-processes": {
    stage: "plan",
    title: "A generation replica of a trainer that runs as several processes",
    explanation: `The replica is started by the trainer's own command as one process holding the whole policy, and
is given the weights by a policy-only save and load. A trainer of several processes (resources.gpus
above 1: torchrun, FSDP) has no one-process form of itself to start. Generate on inference servers
(resources.rollout.engine: vllm or sglang), or train in one process. docs/semantics.md §7.`,
  },
  "lora-reference-refresh": {
    stage: "plan",
    title: "A refreshed KL reference with LoRA adapters",
    explanation: `With policy.lora the KL reference is the base model itself: the same weights with the adapters
disabled, so no second copy of the model is held. There is no copy to re-snapshot every N steps,
so kl.reference refresh(N) cannot be served; use kl.reference: initial (the base model), or train
all the weights.`,
  },
  "torch-backend-model": {
    stage: "plan",
    title: "The PyTorch trainer has no such builtin model or parameter",
    explanation: `The PyTorch trainer's builtin models are tiny, small, qwen2-0.5b and qwen2, shaped by hidden,
intermediate, layers, heads, kv_heads, vocab, rope_theta, eps, max_positions, tie, bias and dtype
in the name (builtin:tiny?layers=2&hidden=32). Anything else it refuses at configure.`,
  },
  "sft-without-walkthroughs": {
    stage: "plan",
    title: "rollout.sft on an env kind that provides no walkthroughs",
    explanation: `The supervised cold start replays each env's walkthroughs (the rooms, findmax and sql kinds
have them). External envs (http, subprocess) provide none, so there is nothing to train on.`,
  },
  "multi-node-unsupported": {
    stage: "plan",
    title: "More than one node, and no rendezvous for them",
    explanation: `A plan with resources.nodes above 1 runs arl run on every machine: node 0 runs the runtime and
trainer rank 0, the others only their trainer processes. They meet at node 0's HOST:PORT, which
arl run takes from --node-rank R --rdzv-endpoint HOST:PORT, or from the cluster's environment
(SLURM_NODEID and SLURM_JOB_NODELIST under srun; NODE_RANK and MASTER_ADDR elsewhere). Without
any of these the run is refused before anything starts (docs/distributed.md).`,
  },
  "overlong-unsupported": {
    stage: "plan",
    title: "Overlong reward shaping, which the runtime does not apply yet",
    explanation: `algorithm.overlong { buffer, penalty } names DAPO's soft penalty for responses near the length
limit (Yu et al. 2025). The plan records it, but the runtime's rewards do not compute it yet, so a
run would silently train without it. Write overlong: none, or express a length penalty as a reward
term, until it is implemented.`,
  },
  "value-out-of-bounds": {
    stage: "plan",
    title: "A size, count or budget above its bound",
    explanation: `Every size, count and budget of a plan has an upper bound (src/plan/bounds.ts), generous for real
GPU runs (1M-token contexts, 64k tasks a batch), so that a typo such as tasks_per_batch: 1e9 is
reported instead of a run that sits at 100% CPU. A plan file beyond a bound is refused at load.`,
  },
  "no-success-criterion": {
    stage: "plan",
    title: "Nothing says when an episode is a success",
    explanation: `The train success rate and pass@k count episodes that meet eval.success (a condition over
signals, e.g. outcome.correct). Unset, it is the success signal every env declares; when an env
declares none there is no criterion, and none is guessed (it used to be "total reward > 0").`,
  },
  "invalid-lock-file": {
    stage: "lock file",
    title: "The spec's .arl.lock cannot be read",
    explanation: `The lock file beside the spec is not valid (hand-edited, truncated or from an incompatible
version). Run 'arl lock FILE' to write it again from the spec.`,
  },
  "lock-mismatch": {
    stage: "lock file",
    title: "A variant's plan no longer matches its lock",
    explanation: `FILE.arl.lock records the plan hash of every variant. A plan hash changes exactly when what
the variant means changes (a setting, a default of the stdlib, an imported file, a data file),
not when only comments or layout do. The message lists the changed fields; if the change is
intended, run 'arl lock FILE' to record the new hashes.`,
  },
  "dataset-tool-unknown": {
    stage: "plan",
    title: "A dataset env declares a tool it does not serve",
    explanation: `A dataset env (std/envs/dataset) serves two tools of its own, calculator and lookup, and
no other. Rename the tool to one of them, or serve the tool from an env of its own (kind http or
subprocess) and list both envs in the experiment.`,
  },
  "dataset-tool-parameters": {
    stage: "plan",
    title: "A dataset tool's declaration lacks the argument it reads",
    explanation: `The calculator tool reads a string argument 'expression' and the lookup tool a string
argument 'key'. The declaration must give that argument with type string (extending
dataset.calculator_task or dataset.lookup_task does), or the model would be told to call the tool
with arguments the env cannot read.`,
  },
  "dataset-lookup-column-missing": {
    stage: "plan",
    title: "A lookup tool without the column it reads",
    explanation: `The lookup tool answers from a column of the data file in which each row holds an object of
entries ({"key": "text"}). Name that column with lookup_column.`,
  },
  "dataset-lookup-column-unused": {
    stage: "plan",
    title: "lookup_column set, but no lookup tool",
    explanation: `lookup_column names the column the lookup tool reads; without the tool nothing reads it.
Declare the lookup tool, or remove lookup_column.`,
  },
  "dataset-verifier-missing": {
    stage: "plan",
    title: "A Python scorer without its verifier file",
    explanation: `Scorers verl and trl call a Python function of the user's (veRL's compute_score, a TRL
reward function) from the file that verifier names. Name the file (verifier: "./reward.py"); the
function is 'function' (compute_score unless written).`,
  },
  "dataset-verifier-unused": {
    stage: "plan",
    title: "A verifier file that the scorer never calls",
    explanation: `The built-in scorers (exact, number, ...) compute the reward themselves; a verifier file is
only called by scorer verl or trl. Choose one of those, or remove verifier.`,
  },
  "dataset-verifier-function-missing": {
    stage: "plan",
    title: "The verifier file does not define the function",
    explanation: `The checker reads the verifier file and finds no top-level 'def NAME' for the function the
env calls. Define it there, or name the function the file defines with function: NAME.`,
  },
  "dataset-pattern-unused": {
    stage: "plan",
    title: "A pattern that the scorer ignores",
    explanation: `pattern extracts the answer from the completion for the scorers exact and number; the other
scorers extract it themselves. Remove pattern, or use one of those scorers with it.`,
  },
  "dataset-pattern-invalid": {
    stage: "plan",
    title: "The answer pattern is not a regular expression",
    explanation: `pattern is a JavaScript regular expression; its first group (or the whole match) is the
answer. The message quotes the parser's complaint.`,
  },
  "dataset-row-invalid": {
    stage: "plan",
    title: "Rows of the data file that a task cannot be made from",
    explanation: `Each row (a JSON line, or a Parquet row) must be one object with the prompt in prompt_column
(text or chat messages) and the ground truth in answer_column, and, where split_column is set, a
split of train, valid or test. The message lists the first bad rows with their line numbers.`,
  },
  "dataset-tasks-beyond-file": {
    stage: "plan",
    title: "More tasks than the data file has rows",
    explanation: `tasks defaults to the data file's row count; a written value may be smaller (the first rows),
never larger. Remove it or write at most the row count.`,
  },
} as const satisfies Record<string, CodeExplanation>;
