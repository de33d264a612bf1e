// The policy as the harness sees it: tokenize messages once, generate, decode. Backed by the
// trainer process; concurrent generate calls are gathered into one request (one batch).
import { at } from "../contracts/checked.js";
import { ragged, row, rowCount, type PolicySlot, type ToolCallMessage } from "../contracts/trainer-protocol.js";
import type { TrainerClient } from "../trainer/protocol/client.js";

/** What TrainerPolicy needs of a trainer: its requests (the process client, or a trainer driven in-process by tests and benchmarks). */
export type TrainerRequests = Pick<TrainerClient, "request">;

export interface Message {
  readonly role: "system" | "user" | "tool" | "assistant";
  readonly content: string;
  /** An assistant turn's parsed call, for templates that render calls apart from the content. */
  readonly tool_calls?: readonly ToolCallMessage[];
}

/** encode's optional params (docs/protocol.md `encode`). */
export interface EncodeOptions {
  /** OpenAI function definitions, for a template that renders tools itself. */
  readonly tools?: readonly unknown[];
  /** How many leading messages are already in the context: ids come back for the rest only. */
  readonly context?: number;
}

export interface Generation {
  readonly ids: Int32Array;
  readonly logprobs: Float32Array;
  readonly finish: "stop" | "length";
  readonly policyVersion: number;
}

export interface GenerateOptions {
  readonly maxNewTokens: number;
  readonly temperature: number;
  readonly topP: number;
  /** 0: off. */
  readonly topK: number;
  readonly stopIds: readonly number[];
  readonly seed: number;
}

export interface Policy {
  /** Token ids of each message, chat template applied; concatenated they are the context. */
  encode(messages: readonly Message[], addGenerationPrompt: boolean, options?: EncodeOptions): Promise<Int32Array[]>;
  decode(ids: Int32Array): Promise<string>;
  /** The text of each token on its own, in one request where the policy can (OpenAI logprobs' `token`); absent: one decode per token. */
  decodeEach?(ids: Int32Array): Promise<string[]>;
  /** Plain text to ids without the template (the gateway's forced tool-call openings); absent: the policy cannot. */
  tokenize?(text: string): Promise<Int32Array>;
  generate(prompt: Int32Array, options: GenerateOptions): Promise<Generation>;
}

interface PendingGeneration {
  readonly prompt: Int32Array;
  readonly options: GenerateOptions;
  readonly resolve: (g: Generation) => void;
  readonly reject: (e: Error) => void;
}

/** Same sampling settings can share one generate request. */
function batchKey(o: GenerateOptions): string {
  return `${o.maxNewTokens}|${o.temperature}|${o.topP}|${o.topK}|${o.stopIds.join(",")}`;
}

export class TrainerPolicy implements Policy {
  private queue: PendingGeneration[] = [];
  private running = false;
  /** The decode request being gathered, until it is sent. */
  private decodes: { readonly rows: Int32Array[]; readonly texts: Promise<string[]> } | undefined;
  /** encode requests sent and not yet answered, and their answers' joint promise. */
  private encoding = 0;
  private encoded: Promise<unknown> = Promise.resolve();

  /** `slot` "behaviour": generate from the trainer's behaviour snapshot (asynchronous rollout). */
  constructor(
    private readonly trainer: TrainerRequests,
    private readonly slot: PolicySlot = "current",
  ) {}

  async encode(
    messages: readonly Message[],
    addGenerationPrompt: boolean,
    options: EncodeOptions = {},
  ): Promise<Int32Array[]> {
    const answer = this.trainer.request("encode", {
      messages,
      add_generation_prompt: addGenerationPrompt,
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.context ? { context: options.context } : {}),
    });
    this.encoding++;
    const settled = answer.then(
      () => undefined,
      () => undefined,
    );
    this.encoded = Promise.all([this.encoded, settled]);
    try {
      const { ids } = await answer;
      return Array.from({ length: rowCount(ids) }, (_, i) => row(ids, i).slice());
    } finally {
      if (--this.encoding === 0) this.encoded = Promise.resolve();
    }
  }

  async decode(ids: Int32Array): Promise<string> {
    return (await this.decodeRows([ids]))[0] ?? "";
  }

  decodeEach(ids: Int32Array): Promise<string[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.decodeRows(Array.from(ids, (id) => Int32Array.of(id)));
  }

  /**
   * The texts of `rows`: the decodes asked for in one synchronous stretch (a reply's text and its
   * tokens' texts) go as one request, each one's rows a slice of it (a trainer round trip saved).
   */
  private decodeRows(rows: Int32Array[]): Promise<string[]> {
    let batch = this.decodes;
    if (!batch) {
      const gathered: Int32Array[] = [];
      const texts = new Promise<void>((resolve) => queueMicrotask(resolve)).then(async () => {
        this.decodes = undefined;
        return (await this.trainer.request("decode", { ids: ragged(gathered, Int32Array) })).texts;
      });
      batch = this.decodes = { rows: gathered, texts };
    }
    const from = batch.rows.length;
    batch.rows.push(...rows);
    return batch.texts.then((texts) => texts.slice(from, from + rows.length));
  }

  async tokenize(text: string): Promise<Int32Array> {
    const { ids } = await this.trainer.request("tokenize", { texts: [text] });
    return row(ids, 0).slice();
  }

  generate(prompt: Int32Array, options: GenerateOptions): Promise<Generation> {
    return new Promise((resolve, reject) => {
      this.queue.push({ prompt, options, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /** Sends everything queued (grouped by sampling settings), repeatedly, until the queue is empty. */
  private async drain(): Promise<void> {
    this.running = true;
    // Let the other episodes of this tick queue their requests first, and those whose prompt is
    // being encoded: the trainer answers in order, so a generate sent now would wait behind those
    // encodes anyway, and their episodes would make a second, smaller batch after it.
    await new Promise((r) => setImmediate(r));
    while (this.encoding > 0) {
      await this.encoded;
      await new Promise((r) => setImmediate(r));
    }
    while (this.queue.length > 0) {
      const key = batchKey(at(this.queue, 0).options);
      const batch = this.queue.filter((p) => batchKey(p.options) === key);
      this.queue = this.queue.filter((p) => batchKey(p.options) !== key);
      const o = at(batch, 0).options;
      try {
        const result = await this.trainer.request("generate", {
          prompts: ragged(
            batch.map((p) => p.prompt),
            Int32Array,
          ),
          max_new_tokens: o.maxNewTokens,
          temperature: o.temperature,
          top_p: o.topP,
          top_k: o.topK,
          stop_ids: [...o.stopIds],
          seeds: Int32Array.from(batch.map((p) => p.options.seed | 0)),
          policy: this.slot,
        });
        batch.forEach((p, i) =>
          p.resolve({
            ids: row(result.ids, i).slice(),
            logprobs: row(result.logprobs, i).slice(),
            finish: result.finish[i] ?? "stop",
            policyVersion: result.policy_version,
          }),
        );
      } catch (error) {
        for (const p of batch) p.reject(error as Error);
      }
      await new Promise((r) => setImmediate(r));
    }
    this.running = false;
  }
}
