// Forced tool calls (docs/gateway.md#forced-tool-calls): the text a call that tool_choice forces
// begins with, refused before the call counts when it cannot be honoured, and that text
// tokenized and decoded once per session. Apart from the session because it is the one part of
// a chat call that reads tool_choice.
import { callOpening } from "../../contracts/tool-calls.js";
import type { ChatTemplateInfo } from "../../contracts/trainer-protocol.js";
import type { Policy } from "../../episode/policy.js";
import { GatewayError, type ToolChoice } from "./contract.js";

/** A forced call opening as the model is given it: its ids, and their text as the tokenizer decodes them. */
export interface ForcedOpening {
  readonly ids: Int32Array;
  readonly text: string;
}

const cannotTokenize = () =>
  new GatewayError(
    400,
    "tool_choice cannot force a call with this policy: it cannot tokenize the call's opening",
    "invalid_request_error",
    "tool_choice",
    "unsupported_value",
  );

/** One session's forced openings: which text a choice forces, and each text's ids. */
export class ForcedOpenings {
  /** Forced call openings by their text, tokenized and decoded once per session. */
  private readonly openings = new Map<string, Promise<ForcedOpening>>();

  constructor(
    private readonly policy: Policy,
    private readonly format: ChatTemplateInfo["tool_call_format"],
  ) {}

  /**
   * The text a forced call begins with: none for "auto" and "none"; the format's opening for
   * "required"; through the name for a named function. A choice that cannot be honoured is
   * refused.
   */
  text(choice: ToolChoice, offered: readonly unknown[]): string | undefined {
    if (choice === "auto" || choice === "none") return undefined;
    const names = offered.map((t) => (t as { function?: { name?: unknown } }).function?.name);
    if (names.length === 0)
      throw new GatewayError(
        400,
        'tool_choice forces a tool call, but the request offers no tools: send tools, or tool_choice "auto"',
        "invalid_request_error",
        "tool_choice",
        "invalid_value",
      );
    if (typeof choice === "object" && !names.includes(choice.name)) {
      throw new GatewayError(
        400,
        `tool_choice names the tool ${JSON.stringify(choice.name)}, which the request does not offer (offered: ${names.map((n) => JSON.stringify(n)).join(", ")})`,
        "invalid_request_error",
        "tool_choice",
        "invalid_value",
      );
    }
    if (!this.policy.tokenize) throw cannotTokenize();
    return callOpening(this.format, typeof choice === "object" ? choice.name : undefined);
  }

  /** The opening `text` as the model is given it. */
  tokenized(text: string): Promise<ForcedOpening> {
    let opening = this.openings.get(text);
    if (!opening) {
      const { policy } = this;
      opening = (async () => {
        const ids = await policy.tokenize?.(text);
        if (!ids) throw cannotTokenize();
        return { ids, text: await policy.decode(ids) };
      })();
      // A failed tokenize is the call's error, not the session's for good.
      opening.catch(() => this.openings.delete(text));
      this.openings.set(text, opening);
    }
    return opening;
  }
}
