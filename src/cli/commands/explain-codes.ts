// The compiler's diagnostic codes outside the lint rules, one paragraph each, for `arl explain`.
// Data only: the lookup, suggestions and listing are explain.ts's.

export interface CompilerCode {
  /** The stage that reports it. */
  readonly stage: string;
  /** One line, for the list. */
  readonly title: string;
  /** What triggers it and what to do about it. */
  readonly explanation: string;
}

/** Every diagnostic code the compiler reports outside the lint rules (test/cli/explain.test.ts keeps this complete). */
export const compilerCodes: Readonly<Record<string, CompilerCode>> = {
  "syntax-error": {
    stage: "parser",
    title: "The text does not follow the grammar",
    explanation: `The parser expected something else at this point (a value after ':', a closing bracket, a
block name). It recovers and keeps going, so every independent syntax error of a file is reported
in one run; fix the first one of a cluster first, later ones may follow from it. The normative
grammar is grammar/arl.ebnf.`,
  },
  "invalid-token": {
    stage: "lexer",
    title: "Characters that are not an ARL token",
    explanation: `The lexer found characters that start no token, or a malformed one (a number such as 1_ or
1e, a stray symbol). Numbers look like 8, 1_000, 0.2 or 5e-7, with underscores only between
digits; names are letters, digits and '_', not starting with a digit.`,
  },
  "unterminated-string": {
    stage: "lexer",
    title: "A string without its closing quote",
    explanation: `A "..." string must close on the same line; a """...""" string may span lines and closes
with three quotes. Everything after the opening quote up to the end of the line (or file) was
taken as the string.`,
  },
  "unterminated-comment": {
    stage: "lexer",
    title: "A /* comment without its closing */",
    explanation: `A block comment runs to the matching '*/'. Without one, the rest of the file is a comment.`,
  },
  "invalid-escape": {
    stage: "lexer",
    title: "An unknown escape sequence in a string",
    explanation: `Strings accept \\n \\t \\r \\0 \\" \\\\ \\uXXXX and \\u{X...} (a Unicode code point, not a surrogate).
Write a literal backslash as \\\\.`,
  },
  "nesting-too-deep": {
    stage: "lexer",
    title: "Brackets nested too deeply",
    explanation: `Blocks, lists and parentheses may nest 64 levels deep. Deeper nesting is refused rather than
risking the parser's stack; flatten the value or move parts into their own declarations.`,
  },
  "expression-too-deep": {
    stage: "parser",
    title: "An expression or dotted name nested too deeply",
    explanation: `A field's value may be at most 256 levels deep: each operator of a chain (a + b + c is two),
each prefix (- or !), each .name, call, list, record or block is one level, and so is each dot of a
field's name. Deeper values are refused where the limit is passed, so that no later stage (types,
lowering, printing, the editor) can run out of stack. Split a long sum or condition into named
terms or declarations.`,
  },
  "format-internal-error": {
    stage: "formatter",
    title: "arl fmt could not format a file without changing its meaning",
    explanation: `arl fmt parses what it prints and refuses to write a result whose syntax tree or comments
differ from the input's. The file is left exactly as it was; this is a bug in the formatter, not
in the spec: please report it with the file.`,
  },
  "import-not-found": {
    stage: "imports",
    title: "An import names a file that does not exist",
    explanation: `Relative imports ("./lib", "../common/envs") are resolved from the importing file, with or
without the .arl extension; "std/..." imports come from the standard library (stdlib/std/).`,
  },
  "invalid-import-path": {
    stage: "imports",
    title: "An import path of the wrong form",
    explanation: `Import paths start with "std/" (the standard library), "./" or "../" (a file relative to the
importing one). Bare names and absolute paths are refused so that a spec means the same on every
machine.`,
  },
  "import-outside-root": {
    stage: "imports",
    title: "An import leaves the entry file's folder",
    explanation: `A spec may import files below its own folder and the standard library, nothing else: a plan's
hash covers every imported file, and a checkout must contain all of them. Move the shared file
into the experiment's folder or use "std/...".`,
  },
  "data-file-outside-root": {
    stage: "plan",
    title: "A data file outside the spec's folder",
    explanation: `Data files (an sql env's database and questions) must lie below the entry spec's folder or
the standard library, like imports: no absolute paths, no '..' out of the folder, and no symbolic
link that leads outside it (links are resolved before the check). The file is neither read nor
hashed. Copy the data into the experiment's folder and name it by a relative path.`,
  },
  "import-cycle": {
    stage: "imports",
    title: "Files that import each other",
    explanation: `An import cycle (a -> b -> a) has no order in which the files can be read. Move what both files
need into a third file that both import.`,
  },
  "duplicate-import": {
    stage: "imports",
    title: "Two imports under the same name",
    explanation: `Each import binds a name (the file's name, or the one after 'as'); two imports cannot bind the
same one. Give one of them another name with 'as'.`,
  },
  "missing-name": {
    stage: "declarations",
    title: "A top-level block without a name",
    explanation: `Top-level blocks are declarations that other blocks refer to and extend, so they need a name:
'env NAME { ... }', 'experiment NAME { ... }'.`,
  },
  "duplicate-declaration": {
    stage: "declarations",
    title: "Two declarations with the same name in one file",
    explanation: `Names of top-level declarations are unique within a file, whatever their kind; the related
location shows the first one. Rename one of them.`,
  },
  "unresolved-reference": {
    stage: "declarations",
    title: "An extends target that no declaration or import provides",
    explanation: `'extends NAME' names a declaration of the same kind, in this file or through an import
('alias.name'); none was found. Check the spelling (the hint suggests the closest name), declare
it, or import the file that does.`,
  },
  "extends-cycle": {
    stage: "declarations",
    title: "Declarations that extend each other",
    explanation: `'a extends b' takes b's values and overrides some; when b (directly or not) extends a, there is
no base to start from. Break the cycle.`,
  },
  "extends-kind-mismatch": {
    stage: "declarations",
    title: "A block extending a declaration of another kind",
    explanation: `A block can extend only a declaration of its own kind ('env x extends some_env', 'algorithm
extends algo.grpo'): the fields of one kind mean nothing in another. The related location shows
what the target is.`,
  },
  "duplicate-field": {
    stage: "semantics",
    title: "A field set twice in one block",
    explanation: `Within one block each field (or dotted path) is set once; the related location shows the first
one. Overriding belongs in a block that extends this one, a variant or an ablation arm.`,
  },
  "unknown-block": {
    stage: "semantics",
    title: "A top-level block of an unknown kind",
    explanation: `Top-level blocks are declarations of one of the kinds experiment, env, tool, policy, harness,
reward, algorithm, mask, rollout, eval and resources; the hint names the closest kind.`,
  },
  "unknown-field": {
    stage: "schema",
    title: "A field the block's schema does not have",
    explanation: `Every block is checked against its schema, and an unknown field is an error rather than being
ignored, so a misspelt setting never silently takes its default. The hint suggests the closest
field; editor hover and completion list the block's fields.`,
  },
  "missing-field": {
    stage: "schema",
    title: "A required field is not set",
    explanation: `The block's schema requires this field and has no default for it (for example an env's 'kind'
or a policy's 'model'). Set it, or extend a declaration that does.`,
  },
  "type-mismatch": {
    stage: "schema",
    title: "A value of the wrong type",
    explanation: `The field expects another kind of value (a number, a string, a list, a block, a reward
expression over signals). The message says what was expected and what was found.`,
  },
  "invalid-enum": {
    stage: "schema",
    title: "A name that is not one of the field's choices",
    explanation: `The field takes one of a fixed set of names (for example a baseline: mean, leave_one_out,
none); the message lists them and the hint suggests the closest.`,
  },
  "invalid-value": {
    stage: "schema",
    title: "A value of the right type that the field does not accept",
    explanation: `The value has the right type but is out of range or inconsistent (a negative count, a
probability above 1, an empty sweep). The message says what the field accepts.`,
  },
  "unknown-function": {
    stage: "reward expressions",
    title: "A function that reward expressions do not have",
    explanation: `Reward expressions may call min, max, abs and clip; potential(...) is allowed as a whole reward
term (potential-based shaping).`,
  },
  "invalid-call": {
    stage: "reward expressions",
    title: "A function called with the wrong number of arguments",
    explanation: `Each reward-expression function takes a fixed number of positional arguments; the message says
how many.`,
  },
  "unknown-tool": {
    stage: "types",
    title: "A condition names a tool no env or declaration offers",
    explanation: `call.tool == "NAME" compares with the tool the model is calling; NAME must be a tool of one of
the experiment's envs or a tool declaration (one that an ablation arm leaves out is fine). A typo
would make the test never hold and the constraint never fire.`,
  },
  "unknown-env": {
    stage: "types",
    title: "A condition names an env the experiment does not have",
    explanation: `call.env == "NAME" compares with the env whose tool is being called; NAME must be one of the
experiment's env names.`,
  },
  "unknown-argument": {
    stage: "types",
    title: "call.args.NAME is not a parameter of the tool",
    explanation: `call.args.NAME reads an argument of the call being judged, so NAME must be a parameter in the
tool's schema (of the tool the condition narrows to with call.tool == "X", or of any tool).`,
  },
  "impossible-argument-value": {
    stage: "types",
    title: "An argument compared with a value its enum never takes",
    explanation: `The tool's schema lists the values this argument may take (an enum); the value compared with is
not one of them, so the test never holds and the constraint never fires. Use one of the listed
values.`,
  },
  "invalid-regex": {
    stage: "types",
    title: "matches(s, PATTERN) with a pattern that is not a regular expression",
    explanation: `The pattern of matches() must be a string literal that is a valid JavaScript regular expression;
it is compiled at check time so that a run never meets a broken gate.`,
  },
  "outcome-in-constraint": {
    stage: "types",
    title: "A constraint reads an outcome signal",
    explanation: `Constraints judge each call while the episode runs, and outcome signals are known only when it
ends. Judge the call itself (call.tool, call.args.NAME) or the env's state signals; put what
depends on the outcome in the reward.`,
  },
  "unknown-signal": {
    stage: "reward expressions",
    title: "A name in a reward expression that is not a signal",
    explanation: `Reward expressions are written over signals, namespace.name: outcome.*, state.*, episode.*,
env.*, tool.* where a tool's result is in scope, and each env's own signals under its name
(docs/semantics.md §2). The hint suggests the closest signal or lists the namespaces.`,
  },
  "potential-not-top-level": {
    stage: "reward expressions",
    title: "potential(...) inside a larger expression",
    explanation: `Potential-based shaping adds gamma * Phi(s') - Phi(s) per step, which keeps the optimal policy
only when the term stands alone (Ng et al. 1999). Write it as its own reward term:
'progress: potential(...)'.`,
  },
  "duplicate-tool": {
    stage: "semantics",
    title: "Two tools with the same name offered to the model",
    explanation: `The model calls tools by name, so the tools one episode sees must have distinct names; the
related location shows the other one. Rename one, or offer only one of them.`,
  },
  "invalid-tool-schema": {
    stage: "semantics",
    title: "A tool's parameter schema is not valid JSON Schema",
    explanation: `A tool's parameters are given to the model (and checked on each call) as a JSON Schema; this one
does not compile. The message names the problem.`,
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
  "unknown-rule": {
    stage: "lint",
    title: "An allow entry names no lint rule",
    explanation: `'allow { CODE: "reason" }' silences an RL lint rule for one experiment; the code must be one of
the lint rules ('arl explain --list'). Syntax and schema errors cannot be allowed: they must be
fixed.`,
  },
  "unused-allow": {
    stage: "lint",
    title: "An allow entry for a rule that does not fire",
    explanation: `The allowed rule reports nothing in any variant of this experiment. Remove the entry, so the
rule speaks up if the problem appears later.`,
  },
};
