// The semantic stage's codes: declarations, extends, sweeps, the block schemas, types and reward expressions (src/semantics/).
// Each code with the paragraph `arl explain CODE` prints.
import type { CodeExplanation } from "./explanation.js";

export const semanticsCodes = {
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
  "empty-file": {
    stage: "declarations",
    title: "A spec that declares nothing",
    explanation: `The file has no block and no import (it is empty, or holds only comments), so there is
nothing to check and no experiment to run: 'arl check' would pass it and 'arl run' would do
nothing. Write an experiment (docs/language.md), or remove the file. 'arl run' and the other
commands that select plans refuse a spec that declares no experiment.`,
  },
} as const satisfies Record<string, CodeExplanation>;
