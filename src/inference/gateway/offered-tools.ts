// Whether a call the model made through the gateway is valid (docs/gateway.md): it names a
// function the request offered and its arguments pass that function's parameter schema. Apart
// from the session because it caches the offered definitions and the ajv validator across the
// session's calls.
import { ToolCallValidator, type OfferedTool, type ToolCall } from "../../contracts/tool-calls.js";

/** Checks calls against the functions a request offered, compiling each definition once. */
export class OfferedToolCheck {
  /** The request's function definitions as offered tools, by their JSON (so the validator compiles each once). */
  private readonly offeredTools = new Map<string, OfferedTool>();

  /** `validator`: the run's, or made at the first parsed call (ajv is slow to set up, and most sessions of a plain chat never need it). */
  constructor(private validator: ToolCallValidator | undefined) {}

  /** The call names an offered function and its arguments pass that function's parameter schema. */
  valid(call: ToolCall, offered: readonly unknown[]): boolean {
    const tools = offered.map((definition) => {
      const key = JSON.stringify(definition);
      let tool = this.offeredTools.get(key);
      if (!tool) {
        const fn =
          (definition as { function?: { name?: unknown; parameters?: Record<string, unknown> } }).function ?? {};
        tool = { name: String(fn.name), definition: { function: { parameters: fn.parameters ?? {} } } };
        this.offeredTools.set(key, tool);
      }
      return tool;
    });
    try {
      this.validator ??= new ToolCallValidator();
      return this.validator.check(call, tools).ok;
    } catch {
      // A parameter schema ajv cannot compile: the harness's to judge, not counted against the model.
      return tools.some((t) => t.name === call.name);
    }
  }
}
