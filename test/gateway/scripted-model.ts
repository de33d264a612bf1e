// A scripted model half for the gateway's HTTP tests: it answers with whatever the test's
// script returns for each request and keeps every request it was given.
import type {
  ChatRequest,
  ChatResult,
  CompletionRequest,
  CompletionResult,
  SessionModel,
  ServedToolCall,
} from "../../src/inference/gateway/contract.js";

const END = "<|im_end|>";

/** A plain answer spelled by `pieces`, one token each, then the end-of-turn token. */
export function plainAnswer(pieces: readonly string[], promptLength = 5): ChatResult {
  const tokens = [...pieces, END];
  return {
    content: pieces.join(""),
    toolCalls: [],
    finish: "stop",
    stopString: null,
    promptIds: Int32Array.from({ length: promptLength }, (_, i) => 100 + i),
    ids: Int32Array.from(tokens, (_, i) => 10 + i),
    logprobs: Float32Array.from(tokens, (_, i) => -0.25 * (i + 1)),
    tokens,
    policyVersion: 3,
  };
}

/** An answer that is one tool call and nothing else. */
export function toolCallAnswer(call: ServedToolCall, promptLength = 7): ChatResult {
  const tokens = [
    "<tool_call>",
    JSON.stringify({ name: call.name, arguments: JSON.parse(call.arguments) as unknown }),
    "</tool_call>",
    END,
  ];
  return {
    content: null,
    toolCalls: [call],
    finish: "tool_calls",
    stopString: null,
    promptIds: Int32Array.from({ length: promptLength }, (_, i) => 200 + i),
    ids: Int32Array.from(tokens, (_, i) => 40 + i),
    logprobs: Float32Array.from(tokens, () => -0.5),
    tokens,
    policyVersion: 3,
  };
}

export class ScriptedModel implements SessionModel {
  readonly modelName = "arl-policy";
  readonly chats: ChatRequest[] = [];
  readonly completions: CompletionRequest[] = [];

  constructor(
    private readonly answer: (request: ChatRequest) => ChatResult | Promise<ChatResult> = () =>
      plainAnswer(["Hello", ",", " world"]),
  ) {}

  async chat(request: ChatRequest): Promise<ChatResult> {
    this.chats.push(request);
    return this.answer(request);
  }

  async complete(request: CompletionRequest): Promise<CompletionResult> {
    this.completions.push(request);
    const tokens = [" 4", "2", "."];
    return {
      text: tokens.join(""),
      finish: "length",
      promptIds: request.prompt,
      ids: Int32Array.of(7, 8, 9),
      logprobs: Float32Array.of(-1, -0.5, -0.25),
      tokens,
      policyVersion: 3,
    };
  }
}
