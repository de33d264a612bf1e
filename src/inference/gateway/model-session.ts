// The model half of one agent gateway session (docs/gateway.md#exact-tokens-and-rewrites): a
// validated chat or completion request becomes tokens through the trainer protocol, and the
// session keeps the exact ids it served, so that the episode trains on what the model saw and
// sampled, never on generated text tokenized again.
//
//   new ModelSession({
//     policy,       // the Policy that generates (TrainerPolicy: the current or the behaviour weights)
//     template,     // configure's ChatTemplateInfo: renders_tools, tool_call_format
//     stopIds,      // the tokenizer's end-of-turn ids (configure's stop_ids)
//     plan,         // policy.sampling, harness budgets (max_turns, max_response_tokens,
//                   // max_total_tokens, on_budget) and harness.context.history
//     seed,         // (call) => the sampling seed of the session's call `call` (0-based)
//     temperature,  // optional: the eval temperature; absent: the plan's sampling temperature
//     onBudget,     // optional: called once when a budget ends the episode (stop the program)
//     validator,    // optional: the run's ToolCallValidator (else one made at the session's first call)
//   })
//
// A chat request whose messages begin with exactly the messages of the previous request and the
// reply served for it continues the trajectory: only the new messages are encoded, as the
// template continues the conversation, and the prompt is the served stream plus their ids. Any
// other history (rewritten, summarised, a changed tool offer, a turn cut before its end-of-turn
// token), and every call under `harness.context { history: rerender }`, renders the request
// afresh and starts a new sample (step-wise training). Sampling is the plan's: what a request asks
// for (temperature, top_p, seed) is recorded, never applied, since the trained log-probs must be
// those of the distribution the tokens were sampled from.
import { at } from "../../contracts/checked.js";
import { parseFunctionCall, type ParsedTurn, type ToolCallValidator } from "../../contracts/tool-calls.js";
import type { ChatTemplateInfo } from "../../contracts/trainer-protocol.js";
import type { Plan } from "../../plan/schema.js";
import { Role } from "../../episode/buffer.js";
import { Conversation, messageRole, withoutStop } from "../../episode/conversation.js";
import type { EpisodeSignals } from "../../episode/harness.js";
import type { Message, Policy } from "../../episode/policy.js";
import {
  GatewayError,
  type ChatRequest,
  type ChatResult,
  type CompletionRequest,
  type GatewayMessage,
  type CompletionResult,
  type ServedToolCall,
  type SessionModel,
} from "./contract.js";
import { ForcedOpenings } from "./forced-openings.js";
import { OfferedToolCheck } from "./offered-tools.js";
import {
  contextLengthError,
  contextLimit,
  textPastContext,
  type ContextLimit,
  type ModelContext,
} from "./prompt-bound.js";
import { requestError } from "./request-errors.js";
import { continuesFrom, renderable, renderedMessages, servedAssistant } from "./session-messages.js";
import {
  assembleSamples,
  SessionSample,
  toolCallRecords,
  type RequestedSampling,
  type SampleStart,
  type SessionRecord,
  type SessionToolCall,
} from "./session-trajectory.js";
import { completingToken, firstStop } from "./stop-strings.js";

/** The budget that ended an episode: its turns, or its tokens (one response's or the whole context's). */
export type BudgetCode = "max_turns" | "max_response_tokens" | "max_total_tokens";

export interface ModelSessionOptions {
  readonly policy: Policy;
  readonly template: ChatTemplateInfo;
  readonly stopIds: readonly number[];
  readonly plan: Plan;
  readonly seed: (call: number) => number;
  readonly temperature?: number;
  readonly onBudget?: (code: BudgetCode) => void;
  /** The run's tool-call validator (RunContext.validator), shared by its sessions: each schema compiled once per run. */
  readonly validator?: ToolCallValidator;
  /** The model's context (configure's max_context) and its tokens' longest text: every prompt must fit it. */
  readonly model?: ModelContext;
}

/** What one call generated, after stop strings. */
interface GeneratedTurn {
  readonly ids: Int32Array;
  readonly logprobs: Float32Array;
  readonly finish: "stop" | "length";
  /** The text without the end-of-turn token(s), cut before the first stop string. */
  readonly text: string;
  readonly tokens: string[];
  readonly policyVersion: number;
  readonly call: number;
  /** The stop string that cut the text, if one did. */
  readonly stopString: string | null;
}

interface SamplingRequest {
  readonly maxTokens: number | null;
  readonly stop: readonly string[];
  readonly temperature: number | null;
  readonly topP: number | null;
  readonly seed: number | null;
}

function startsWith(ids: Int32Array, prefix: Int32Array): boolean {
  if (ids.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

export class ModelSession implements SessionModel {
  readonly modelName: string;
  private readonly samples: SessionSample[] = [];
  private current: SessionSample | undefined;
  /** The previous chat request's messages and the reply served for it: what a continuing request begins with. */
  private served: Message[] | undefined;
  private calls = 0;
  private readonly toolCalls: SessionToolCall[] = [];
  private nextCallId = 0;
  private readonly requested: RequestedSampling[] = [];
  private readonly signals: EpisodeSignals = {
    turns: 0,
    tool_calls: 0,
    invalid_calls: 0,
    tokens: 0,
    aborted: false,
    truncated: false,
    terminated: false,
  };
  private rewrites = 0;
  private cuts = 0;
  private ended: { code: BudgetCode; message: string } | undefined;
  /** Calls run one at a time: each one's context depends on what the previous one served. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly toolCheck: OfferedToolCheck;
  private readonly openings: ForcedOpenings;

  constructor(private readonly options: ModelSessionOptions) {
    this.modelName = options.plan.policy.model;
    this.toolCheck = new OfferedToolCheck(options.validator);
    this.openings = new ForcedOpenings(options.policy, options.template.tool_call_format);
  }

  chat(request: ChatRequest): Promise<ChatResult> {
    return this.serialized(() => this.chatNow(request)).catch(requestError);
  }

  complete(request: CompletionRequest): Promise<CompletionResult> {
    return this.serialized(() => this.completeNow(request)).catch(requestError);
  }

  /** The budget that ended the episode, if one did. */
  get budgetEnd(): BudgetCode | undefined {
    return this.ended?.code;
  }

  /** The episode's pieces so far: samples, the whole stream, calls, signals, rewrites. */
  record(): SessionRecord {
    const stepwise = this.rerender || this.samples.filter((s) => s.turnEnds.length > 0).length > 1;
    const { samples, starts, stream, turnEnds } = assembleSamples(this.samples, stepwise);
    const lastChat = [...this.samples].reverse().find((s) => s.conversation !== null)?.conversation ?? null;
    const truncate = this.options.plan.harness.on_budget === "truncate";
    return {
      ...stream,
      samples,
      turnEnds,
      stepwise,
      starts,
      rewrites: this.rewrites,
      cuts: this.cuts,
      generators: turnEnds.map(() => "policy"),
      messages: lastChat ? [...lastChat.messages] : [],
      templateTools: lastChat?.tools ?? null,
      toolCalls: toolCallRecords(this.toolCalls),
      // The program ending its episode is the task's end; a truncating budget is not.
      episode: { ...this.signals, terminated: !this.signals.truncated },
      end: this.ended ? (truncate ? "truncated" : "aborted") : "finished",
      requested: [...this.requested],
    };
  }

  private get rerender(): boolean {
    return this.options.plan.harness.context.history === "rerender";
  }

  private serialized<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async chatNow(r: ChatRequest): Promise<ChatResult> {
    // Results first: the request a budget refuses still brings the last call's result.
    for (const m of r.messages) {
      const call =
        m.role === "tool" && m.toolCallId !== undefined ? this.toolCalls.find((c) => c.id === m.toolCallId) : undefined;
      if (call) call.result = m.content;
    }
    const offered = r.toolChoice === "none" ? [] : r.tools;
    const forced = this.openings.text(r.toolChoice, offered);
    this.admit(r);
    this.boundText(r.messages);
    // A call that fails half-way (the trainer's error) leaves no history to continue from.
    const served = this.served;
    this.served = undefined;
    const messages = r.messages.map(renderable);
    const sample = await this.chatContext(messages, offered, served);
    // A forced opening is context the model is given, not a token it sampled: never a target.
    const opening = forced === undefined ? undefined : await this.openings.tokenized(forced);
    if (opening) sample.ctx.append(opening.ids, Role.rendered);
    const prompt = sample.ctx.prompt(sample.lastPrompt);
    const turn = await this.generate(sample, prompt, r);
    const text = (opening?.text ?? "") + turn.text;
    const parsed = offered.length > 0 ? parseFunctionCall(text, this.options.template.tool_call_format) : undefined;
    const reply = servedAssistant(parsed, text);
    sample.conversation?.add(reply);
    this.served = [...messages, reply];
    const toolCalls = this.noteCall(parsed, offered, turn.call);
    const content = toolCalls.length > 0 ? reply.content || null : text;
    return {
      content,
      toolCalls,
      finish: toolCalls.length > 0 ? "tool_calls" : turn.finish,
      stopString: turn.stopString,
      promptIds: prompt,
      ids: turn.ids,
      logprobs: turn.logprobs,
      tokens: turn.tokens,
      policyVersion: turn.policyVersion,
    };
  }

  /** A token-id prompt that begins with the served stream continues it (the rest is observation); any other starts a new sample. */
  private async completeNow(r: CompletionRequest): Promise<CompletionResult> {
    this.admit(r);
    const prev = this.current;
    let sample: SessionSample;
    if (prev && !this.rerender && prev.turnEnds.length > 0 && startsWith(r.prompt, prev.ctx.sequence().ids)) {
      sample = prev;
      sample.ctx.append(r.prompt.subarray(prev.ctx.length), Role.observation);
    } else {
      sample = this.startSample(prev === undefined ? "first" : this.rerender ? "rerender" : "rewrite", null, "");
      sample.ctx.append(r.prompt, Role.prompt);
    }
    // A chat request after this cannot continue a stream its messages do not describe.
    this.served = undefined;
    const prompt = sample.ctx.prompt(sample.lastPrompt);
    const turn = await this.generate(sample, prompt, r);
    return {
      text: turn.text,
      finish: turn.finish,
      promptIds: prompt,
      ids: turn.ids,
      logprobs: turn.logprobs,
      tokens: turn.tokens,
      policyVersion: turn.policyVersion,
    };
  }

  /** Refuses a call after a budget ended the episode, or one past harness.max_turns; records what it asked for. */
  private admit(r: SamplingRequest): void {
    if (this.ended) throw this.budgetError(this.ended.code, `the episode has ended: ${this.ended.message}`);
    const maxTurns = this.options.plan.harness.max_turns;
    if (this.calls >= maxTurns)
      throw this.endBy("max_turns", `the episode has made its ${maxTurns} model calls (harness.max_turns)`);
    this.requested.push({
      call: this.calls,
      temperature: r.temperature,
      topP: r.topP,
      seed: r.seed,
      maxTokens: r.maxTokens,
    });
  }

  /** The sample this chat call generates in: the current one continued, or a new one rendered from the request. */
  private async chatContext(
    messages: readonly Message[],
    offered: readonly unknown[],
    served: readonly Message[] | undefined,
  ): Promise<SessionSample> {
    const toolsKey = JSON.stringify(offered);
    const prev = this.current;
    let start: SampleStart = prev === undefined ? "first" : this.rerender ? "rerender" : "rewrite";
    if (prev?.conversation && !this.rerender && served && prev.toolsKey === toolsKey) {
      const from = continuesFrom(messages, served);
      if (from !== undefined && from < messages.length) {
        // The template continues after the end-of-turn token the model sampled; a turn cut before
        // it (a stop string, a length finish) has none, and a token the model never sampled would
        // have to be made up.
        if (prev.closed) return this.extend(prev, prev.conversation, messages.slice(from));
        start = "cut";
      }
    }
    const templateTools = this.options.template.renders_tools && offered.length > 0;
    const conversation = new Conversation(this.options.policy, templateTools ? offered : undefined);
    for (const m of renderedMessages(messages, templateTools ? [] : offered)) conversation.add(m);
    const sample = this.startSample(start, conversation, toolsKey);
    (await conversation.encodeFrom(0)).forEach((ids, i) =>
      sample.ctx.append(ids, messageRole(at(conversation.messages, i))),
    );
    return sample;
  }

  private startSample(start: SampleStart, conversation: Conversation | null, toolsKey: string): SessionSample {
    if (start === "rewrite") this.rewrites++;
    if (start === "cut") this.cuts++;
    const sample = new SessionSample(this.calls, start, conversation, toolsKey);
    this.samples.push(sample);
    this.current = sample;
    return sample;
  }

  /** Appends the new messages as the template continues the conversation after the served reply. */
  private async extend(
    sample: SessionSample,
    conversation: Conversation,
    fresh: readonly Message[],
  ): Promise<SessionSample> {
    const context = conversation.messages.length;
    for (const m of fresh) conversation.add(m);
    (await conversation.encodeFrom(context)).forEach((ids, i) =>
      sample.ctx.append(ids, messageRole(at(conversation.messages, context + i))),
    );
    return sample;
  }

  /** One call of the model on `prompt` within the budgets; the kept ids are appended to the sample as generated. */
  private async generate(sample: SessionSample, prompt: Int32Array, r: SamplingRequest): Promise<GeneratedTurn> {
    const { policy, stopIds, plan } = this.options;
    const h = plan.harness;
    const s = plan.policy.sampling;
    const limit = this.contextLimit();
    const room = limit === undefined ? Number.POSITIVE_INFINITY : limit.tokens - prompt.length;
    if (limit !== undefined && room <= 0) throw this.tooLong(limit, `the prompt has ${prompt.length} tokens`);
    const maxNewTokens = Math.min(
      r.maxTokens ?? Number.POSITIVE_INFINITY,
      s.max_new_tokens,
      h.max_response_tokens,
      room,
    );
    const call = this.calls;
    const temperature = this.options.temperature ?? s.temperature;
    const gen = await policy.generate(prompt, {
      maxNewTokens,
      temperature,
      topP: s.top_p,
      topK: s.top_k,
      stopIds,
      seed: this.options.seed(call),
    });
    this.calls++;
    let { ids, logprobs } = gen;
    let finish = gen.finish;
    // Each token's text (OpenAI log-probs, streamed pieces) in the same round trip as the text.
    let [text, tokens] = await Promise.all([policy.decode(withoutStop(ids, stopIds)), this.tokenTexts(ids)]);
    const cut = firstStop(text, r.stop);
    if (cut) {
      const k = await completingToken(policy, stopIds, ids, cut.stop);
      ids = ids.slice(0, k);
      logprobs = logprobs.slice(0, k);
      tokens = tokens.slice(0, k);
      text = text.slice(0, cut.at);
      finish = "stop";
    }
    sample.ctx.append(ids, Role.generated, gen.policyVersion, logprobs);
    sample.turnEnds.push(sample.ctx.length - 1);
    sample.lastPrompt = prompt;
    sample.closed = !cut && ids.length > 0 && stopIds.includes(at(ids, ids.length - 1));
    this.signals.turns++;
    this.signals.tokens += ids.length;
    // A turn that reaches the response budget is served, cut, and ends the episode (as in the harness).
    if (gen.finish === "length" && gen.ids.length >= h.max_response_tokens)
      this.endBy("max_response_tokens", `a response reached harness.max_response_tokens (${h.max_response_tokens})`);
    return {
      ids,
      logprobs,
      finish,
      text,
      tokens,
      policyVersion: gen.policyVersion,
      call,
      stopString: cut?.stop ?? null,
    };
  }

  private async tokenTexts(ids: Int32Array): Promise<string[]> {
    const { policy } = this.options;
    if (policy.decodeEach) return policy.decodeEach(ids);
    return Promise.all(Array.from(ids, (id) => policy.decode(Int32Array.of(id))));
  }

  /** Records the call the model made (or tried to make) and returns it as served; malformed call text is counted, not served. */
  private noteCall(parsed: ParsedTurn | undefined, offered: readonly unknown[], turn: number): ServedToolCall[] {
    if (!parsed || parsed.kind === "none") return [];
    if (parsed.kind === "malformed") {
      this.signals.invalid_calls++;
      this.toolCalls.push({ id: "", turn, name: "", arguments: null, valid: false, result: "", error: parsed.error });
      return [];
    }
    const { call } = parsed;
    this.signals.tool_calls++;
    const valid = this.toolCheck.valid(call, offered);
    if (!valid) this.signals.invalid_calls++;
    const id = `call_${this.nextCallId++}`;
    this.toolCalls.push({ id, turn, name: call.name, arguments: call.arguments, valid, result: "" });
    return [{ id, name: call.name, arguments: JSON.stringify(call.arguments) }];
  }

  private contextLimit(): ContextLimit | undefined {
    return contextLimit(this.options.plan.harness.max_total_tokens, this.options.model);
  }

  /** Refuses, before anything is tokenized, messages whose text cannot fit the context. */
  private boundText(messages: readonly GatewayMessage[]): void {
    const limit = this.contextLimit();
    const what = textPastContext(messages, limit, this.options.model);
    if (limit !== undefined && what !== undefined) throw this.tooLong(limit, what);
  }

  /** A prompt past the context: the harness's budget ends the episode; the model's context refuses this request alone. */
  private tooLong(limit: ContextLimit, what: string): GatewayError {
    if (limit.harness)
      return this.endBy(
        "max_total_tokens",
        `${what} and harness.max_total_tokens is ${limit.tokens}, which leaves none to generate`,
      );
    return contextLengthError(limit.tokens, what);
  }

  /** Ends the episode by a budget (once) and returns the error the call is answered with. */
  private endBy(code: BudgetCode, message: string): GatewayError {
    if (!this.ended) {
      this.ended = { code, message };
      this.signals.aborted = true;
      if (this.options.plan.harness.on_budget === "truncate") this.signals.truncated = true;
      else this.signals.terminated = true;
      this.options.onBudget?.(code);
    }
    return this.budgetError(
      code,
      `${message}; the episode has ended (harness.on_budget: ${this.options.plan.harness.on_budget})`,
    );
  }

  private budgetError(code: BudgetCode, message: string): GatewayError {
    return new GatewayError(
      400,
      message,
      "invalid_request_error",
      null,
      code === "max_turns" ? "max_turns" : "context_length_exceeded",
    );
  }
}
