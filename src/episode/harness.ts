// One episode: the agent loop of the plan's harness. The conversation is kept as chat messages
// (conversation.ts); generation through the policy, tool-call parsing (in the template's call
// format) and validation, constraint blocking, tool execution with a time limit, observation
// truncation, budgets. With `history: exact` the generated ids are appended as sampled, each new
// message is encoded as the template continues the conversation, and each prompt must extend the
// previous one (prefix continuity, asserted); with `history: rerender` the whole conversation is
// rendered again before every call and each call becomes its own training sample. With
// cross-policy sampling a turn may come from a pool model instead (cross-policy.ts).
import { at } from "../contracts/checked.js";
import { EnvError, type EnvInstance, type Signals } from "../contracts/env.js";
import type { SignalValue } from "../contracts/signals.js";
import {
  parseFunctionCall,
  parseTextAction,
  type ParsedTurn,
  type ToolCallValidator,
} from "../contracts/tool-calls.js";
import type { ChatTemplateInfo } from "../contracts/trainer-protocol.js";
import type { Plan, PlanTool } from "../plan/schema.js";
import { Role, type EndReason, type ToolCallRecord } from "./buffer.js";
import {
  Conversation,
  DEFAULT_TEMPLATE,
  messageRole,
  TokenContext,
  withoutStop,
  type TokenSequence,
} from "./conversation.js";
import { replyIds, type TurnGenerator } from "./cross-policy.js";
import type { GenerateOptions, Message, Policy } from "./policy.js";
import { constraintBlocks, SignalError, type SignalSource } from "./rewards.js";
import { describeTools, systemWithTools, toolDefinitions } from "./tool-descriptions.js";

export interface EpisodeInput {
  readonly plan: Plan;
  readonly envName: string;
  readonly env: EnvInstance;
  readonly policy: Policy;
  readonly tools: readonly PlanTool[];
  readonly validator: ToolCallValidator;
  readonly stopIds: readonly number[];
  /** Derives the sampling seed of each turn. */
  readonly seed: (turn: number) => number;
  readonly temperature?: number;
  /** Cross-policy sampling: the pool model that generates turn `turn` instead of the policy, if any. */
  readonly turnGenerator?: (turn: number) => TurnGenerator | undefined;
  /** What configure reported of the chat template; absent: DEFAULT_TEMPLATE. */
  readonly template?: ChatTemplateInfo;
}

/**
 * What the update trains on: the whole episode as one token stream (history: exact), or one
 * model call with the context it was given (history: rerender; `step` is the call's turn).
 */
export interface Sample extends TokenSequence {
  readonly step?: number;
  /** Index of the last generated token of each turn the sample trains. */
  readonly turnEnds: readonly number[];
}

export interface EpisodeSignals {
  turns: number;
  tool_calls: number;
  invalid_calls: number;
  tokens: number;
  aborted: boolean;
  truncated: boolean;
  terminated: boolean;
}

/** An episode: its token stream as appended turn by turn (ids, roles, versions, log-probs) and its samples. */
export interface Episode extends TokenSequence {
  /** history exact: the stream itself; rerender: one per policy call, in order (pool turns have none). */
  readonly samples: readonly Sample[];
  readonly end: EndReason;
  readonly error?: string;
  readonly toolCalls: readonly ToolCallRecord[];
  readonly episode: EpisodeSignals;
  /** Signals before each turn and after the last one (for potential shaping). */
  readonly states: readonly SignalSource[];
  /** Signals at the end, outcome signals included. */
  readonly final: SignalSource;
  /** Index of the last generated token of each turn (where a turn's reward is placed). */
  readonly turnEnds: readonly number[];
  /** Which model generated each turn: "policy" or a cross-policy pool model. */
  readonly generators: readonly string[];
  /** The conversation as chat messages (what the template renders) and the tools the template was given. */
  readonly messages: readonly Message[];
  readonly templateTools: readonly unknown[] | null;
}

/** One generated turn: its ids in the policy's context and its text. */
interface Turn {
  readonly ids: Int32Array;
  readonly finish: "stop" | "length";
  /** The text the call parser reads. */
  readonly text: () => Promise<string>;
  /** The text without the end-of-turn token, as a pool model reads it. */
  readonly plainText: () => Promise<string>;
}

function truncateObservation(
  ids: Int32Array,
  max: number,
  overflow: Plan["harness"]["observation"]["overflow"],
): Int32Array | undefined {
  if (ids.length <= max) return ids;
  switch (overflow) {
    case "keep_head":
      return ids.slice(0, max);
    case "keep_tail":
      return ids.slice(ids.length - max);
    case "keep_head_tail": {
      const head = Math.ceil(max / 2);
      const out = new Int32Array(max);
      out.set(ids.subarray(0, head), 0);
      out.set(ids.subarray(ids.length - (max - head)), head);
      return out;
    }
    case "error":
      return undefined;
  }
}

async function withTimeout<T>(promise: Promise<T>, seconds: number): Promise<T | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), seconds * 1000);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The assistant message of a turn: its text, and for a function call parsed from it the call
 * apart (a template that renders tool_calls writes the call itself after the content).
 */
function assistantMessage(parsed: ParsedTurn, text: string): Message {
  if (parsed.kind !== "call" || parsed.content === undefined) return { role: "assistant", content: text };
  return {
    role: "assistant",
    content: parsed.content.trimEnd(),
    tool_calls: [{ name: parsed.call.name, arguments: parsed.call.arguments }],
  };
}

/** Fixed texts the harness itself writes into contexts (observations it makes up). */
const HARNESS_TEXTS = [
  "Tools:",
  "No tool call found. Call one of: ,.",
  "Error: the tool call is not complete JSON. invalid arguments for there is no tool available must be equal to one of the allowed values have required property",
  "Refused: the call is blocked by the constraint ''.",
  "did not finish within s.",
  '<tool_call> </tool_call> {"name": "arguments": {}}',
];

/**
 * Words and symbols the harness can put into a context for this plan: its own messages, the
 * system prompt and the tool descriptions. Models whose tokenizer is built from a vocabulary
 * (the embedded model) get these besides the envs' own words.
 */
export function harnessVocabulary(plan: Plan): string[] {
  const texts = [
    ...HARNESS_TEXTS,
    plan.harness.system_prompt ?? "",
    describeTools(plan.tools, plan.harness.format),
    ...plan.tools.map((t) => t.name),
  ];
  const words = new Set<string>();
  for (const text of texts) for (const w of text.match(/[A-Za-z0-9_]+|[^\sA-Za-z0-9_]/g) ?? []) words.add(w);
  return [...words].sort();
}

/** Tools an episode of `env` is offered: its own and those declared outside any env. */
export function toolsFor(plan: Plan, env: string): PlanTool[] {
  return plan.tools.filter((t) => t.env === null || t.env === env);
}

/** What rewards and constraints read of an episode of env `envName`: its env signals, episode counters and (at a call) the call's own. */
export function episodeSignalSource(
  envName: string,
  signals: Signals,
  episode: EpisodeSignals,
  tool?: Readonly<Record<string, SignalValue>>,
): SignalSource {
  return {
    env: (n) => signals[n],
    namedEnv: (e, n) => (e === envName ? signals[n] : undefined),
    episode: (n) => episode[n as keyof EpisodeSignals],
    tool: (n) => tool?.[n],
    reported: () => Object.keys(signals).sort(),
  };
}

export async function runEpisode(input: EpisodeInput): Promise<Episode> {
  const { plan, env, policy, tools } = input;
  const h = plan.harness;
  const template = input.template ?? DEFAULT_TEMPLATE;
  const rerender = h.context.history === "rerender";
  // The template shows the tools itself only for function calls in its own format; text actions
  // and templates that do not render tools get them described in the system prompt.
  const templateTools = template.renders_tools && h.format === "function_call" && tools.length > 0;
  const conversation = new Conversation(policy, templateTools ? toolDefinitions(tools) : undefined);
  const ctx = new TokenContext();
  const samples: Sample[] = [];
  const toolCalls: ToolCallRecord[] = [];
  const episode: EpisodeSignals = {
    turns: 0,
    tool_calls: 0,
    invalid_calls: 0,
    tokens: 0,
    aborted: false,
    truncated: false,
    terminated: false,
  };
  const states: SignalSource[] = [];
  const turnEnds: number[] = [];
  const generators: string[] = [];
  let envSignals: Signals = {};
  const source = (signals: Signals, ep: EpisodeSignals, tool?: Record<string, SignalValue>) =>
    episodeSignalSource(input.envName, signals, ep, tool);
  const snapshot = () => source({ ...envSignals }, { ...episode });
  let end: EndReason = "finished";
  let error: string | undefined;

  try {
    const start = await env.reset();
    envSignals = start.signals;
    // A task written as chat messages brings its own turns; its system message replaces the harness's.
    const taskMessages = start.messages ?? [{ role: "user" as const, content: start.text }];
    const taskSystem = taskMessages.find((m) => m.role === "system")?.content;
    const system = systemWithTools(
      taskSystem ?? h.system_prompt,
      tools.length > 0 && !templateTools ? describeTools(tools, h.format) : "",
    );
    if (system) conversation.add({ role: "system", content: system });
    for (const m of taskMessages) if (m.role !== "system") conversation.add({ role: m.role, content: m.content });
    (await conversation.encodeFrom(0)).forEach((ids, i) => ctx.append(ids, messageRole(at(conversation.messages, i))));
    states.push(snapshot());

    let previous: Int32Array | undefined;
    let budgetHit = false;
    for (;;) {
      if (episode.turns >= h.max_turns) {
        budgetHit = true;
        break;
      }
      if (h.max_total_tokens !== null && ctx.length >= h.max_total_tokens) {
        budgetHit = true;
        break;
      }
      const stream = ctx.prompt(previous);
      previous = stream;
      const maxNew = Math.min(
        plan.policy.sampling.max_new_tokens,
        h.max_response_tokens,
        h.max_total_tokens === null ? Number.MAX_SAFE_INTEGER : h.max_total_tokens - ctx.length,
      );
      const options = {
        maxNewTokens: maxNew,
        temperature: input.temperature ?? plan.policy.sampling.temperature,
        topP: plan.policy.sampling.top_p,
        topK: plan.policy.sampling.top_k,
        stopIds: input.stopIds,
        seed: input.seed(episode.turns),
      };
      const generator = input.turnGenerator?.(episode.turns);
      const turn = generator ? await poolTurn(generator, options) : await policyTurn(stream, options);
      episode.tokens += turn.ids.length;
      episode.turns++;
      turnEnds.push(ctx.length - 1);
      generators.push(generator?.name ?? "policy");
      if (turn.finish === "length" && turn.ids.length >= h.max_response_tokens) {
        budgetHit = true;
        // A single-turn answer cut by the budget is still scored, as veRL and TRL score it.
        if (env.finalAnswer && tools.length === 0)
          envSignals = { ...envSignals, ...(await env.finalAnswer(await turn.plainText())) };
        states.push(snapshot());
        break;
      }
      const text = await turn.text();
      const parsed: ParsedTurn =
        h.format === "text_action" ? parseTextAction(text, tools) : parseFunctionCall(text, template.tool_call_format);
      conversation.add(assistantMessage(parsed, await turn.plainText()));
      // A turn without a call is the final answer of an env that scores answers (a dataset task).
      if (env.finalAnswer && (tools.length === 0 || parsed.kind === "none")) {
        envSignals = { ...envSignals, ...(await env.finalAnswer(await turn.plainText())) };
        episode.terminated = true;
        states.push(snapshot());
        break;
      }
      const observation = await act(parsed);
      if (observation.terminated) {
        episode.terminated = true;
        states.push(snapshot());
        break;
      }
      // The observation as the template continues the conversation after the generated turn.
      const index = conversation.add({ role: "tool", content: observation.text });
      const obsIds = at(await conversation.encodeFrom(index), 0);
      const kept = truncateObservation(obsIds, h.observation.max_tokens, h.observation.overflow);
      if (!kept)
        throw new EnvError(
          `an observation of ${obsIds.length} tokens exceeds observation.max_tokens (${h.observation.max_tokens}) and overflow is 'error'`,
          "protocol",
        );
      ctx.append(kept, Role.observation);
      if (kept !== obsIds) conversation.replace(index, { role: "tool", content: await policy.decode(kept) });
      states.push(snapshot());
    }
    if (budgetHit) {
      episode.aborted = true;
      if (h.on_budget === "truncate") {
        episode.truncated = true;
        end = "truncated";
      } else {
        episode.terminated = true;
        end = "aborted";
      }
    }
    const outcome = await env.outcome();
    envSignals = { ...envSignals, ...outcome };
  } catch (e) {
    if (e instanceof EnvError) {
      end = "env_error";
      error = e.message;
    } else throw e;
  } finally {
    await env.close().catch(() => undefined);
  }

  const sequence = ctx.sequence();
  return {
    ...sequence,
    samples: rerender ? samples : [{ ...sequence, turnEnds }],
    end,
    ...(error ? { error } : {}),
    toolCalls,
    episode,
    states,
    final: source({ ...envSignals }, { ...episode }),
    turnEnds,
    generators,
    messages: conversation.messages,
    templateTools: conversation.tools ?? null,
  };

  /**
   * A turn sampled by the policy; its text is decoded as generated (the call parser's input).
   * Under rerender the model is given the whole conversation rendered again, and the call is kept
   * as its own sample: that context, then the generated ids with their log-probs and version.
   */
  async function policyTurn(stream: Int32Array, options: GenerateOptions): Promise<Turn> {
    const rendered = rerender ? await conversation.render() : undefined;
    const gen = await policy.generate(rendered ? rendered.ids : stream, options);
    ctx.append(gen.ids, Role.generated, gen.policyVersion, gen.logprobs);
    if (rendered) {
      const n = rendered.ids.length;
      const ids = new Int32Array(n + gen.ids.length);
      ids.set(rendered.ids);
      ids.set(gen.ids, n);
      const roles = new Uint8Array(ids.length).fill(Role.generated);
      roles.set(rendered.roles);
      const versions = new Int32Array(ids.length).fill(-1).fill(gen.policyVersion, n);
      const logprobs = new Float32Array(ids.length);
      logprobs.set(gen.logprobs, n);
      samples.push({ ids, roles, versions, logprobs, step: episode.turns, turnEnds: [ids.length - 1] });
    }
    return {
      ids: gen.ids,
      finish: gen.finish,
      text: () => policy.decode(gen.ids),
      plainText: () => policy.decode(withoutStop(gen.ids, input.stopIds)),
    };
  }

  /**
   * A turn generated by a pool model from the conversation's text; its text enters the policy's
   * context once, encoded by the policy's tokenizer, as context only (role pool, no version).
   */
  async function poolTurn(generator: TurnGenerator, options: GenerateOptions): Promise<Turn> {
    // The tools go along when the policy's template renders them (the system prompt then does not describe them).
    const tools = conversation.tools ? { tools: conversation.tools } : {};
    const prompt = Int32Array.from(
      (await generator.policy.encode(conversation.messages, true, tools)).flatMap((ids) => Array.from(ids)),
    );
    const gen = await generator.policy.generate(prompt, { ...options, stopIds: generator.stopIds });
    const text = await generator.policy.decode(withoutStop(gen.ids, generator.stopIds));
    let ids = await replyIds(policy, text, input.stopIds, gen.finish === "stop");
    let finish = gen.finish;
    if (ids.length > options.maxNewTokens) {
      ids = ids.slice(0, options.maxNewTokens);
      finish = "length";
    }
    ctx.append(ids, Role.pool);
    return { ids, finish, text: async () => text, plainText: async () => text };
  }

  /** Whether constraint `name` refuses the call; a signal the env owes it and did not give is the env's error. */
  function blocks(name: string, condition: Plan["constraints"][string]["condition"], signals: SignalSource): boolean {
    try {
      return constraintBlocks(condition, signals);
    } catch (e) {
      if (e instanceof SignalError)
        throw new EnvError(`env '${input.envName}' ${e.message}, which the constraint '${name}' reads`, "protocol");
      throw e;
    }
  }

  /** Parses, validates, checks constraints and executes one turn's call; returns the observation. */
  async function act(parsed: ParsedTurn): Promise<{ text: string; terminated: boolean }> {
    const turn = episode.turns - 1;
    if (parsed.kind !== "call") {
      episode.invalid_calls++;
      const message =
        parsed.kind === "none"
          ? `No tool call found. Call one of: ${tools.map((t) => t.name).join(", ")}.`
          : `Error: ${parsed.error}.`;
      toolCalls.push({ turn, name: "", arguments: null, valid: false, blocked: false, result: message });
      return { text: message, terminated: false };
    }
    const call = parsed.call;
    episode.tool_calls++;
    const checked = input.validator.check(call, tools);
    if (!checked.ok) {
      episode.invalid_calls++;
      toolCalls.push({
        turn,
        name: call.name,
        arguments: call.arguments,
        valid: false,
        blocked: false,
        result: `Error: ${checked.error}`,
      });
      return { text: `Error: ${checked.error}`, terminated: false };
    }
    // The gate judges the call itself (call.*) before it runs; env signals are those of the
    // previous step, so a condition over them can only refuse the calls after a violation.
    const toolSignals: Record<string, SignalValue> = { name: call.name, env: checked.tool.env ?? "" };
    for (const [k, v] of Object.entries(call.arguments))
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") toolSignals[`args.${k}`] = v;
    for (const [name, constraint] of Object.entries(plan.constraints)) {
      if (blocks(name, constraint.condition, source(envSignals, episode, toolSignals))) {
        const refusal = `Refused: the call '${call.name}' is blocked by the constraint '${name}'.`;
        toolCalls.push({
          turn,
          name: call.name,
          arguments: call.arguments,
          valid: true,
          blocked: true,
          result: refusal,
        });
        return { text: refusal, terminated: false };
      }
    }
    const result = await withTimeout(env.step(call), checked.tool.timeout_s);
    if (result === "timeout") {
      const message = `Error: '${call.name}' did not finish within ${checked.tool.timeout_s} s.`;
      toolCalls.push({
        turn,
        name: call.name,
        arguments: call.arguments,
        valid: true,
        blocked: false,
        result: message,
        error: "timeout",
      });
      return { text: message, terminated: false };
    }
    envSignals = result.signals;
    toolCalls.push({
      turn,
      name: call.name,
      arguments: call.arguments,
      valid: true,
      blocked: false,
      result: result.text,
    });
    return { text: result.text, terminated: result.terminated };
  }
}
