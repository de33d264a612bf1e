// The multi-turn tool configuration veRL's tool agent loop reads
// (actor_rollout_ref.rollout.multi_turn.tool_config_path): one entry per plan tool with its
// OpenAI function schema, each served by arl_env_tool.ArlHttpEnvTool, which forwards the call to
// the env's HTTP task server with ARL's wire format (src/envs/adapters/http.ts).
import type { Plan } from "../../plan/schema.js";
import { type Finding } from "./findings.js";
import type { YamlMapping } from "./yaml.js";

const ENV_TOOL_CLASS = "arl_env_tool.ArlHttpEnvTool";

/** The tool schema veRL validates (OpenAIFunctionToolSchema): no $schema key, which it does not know. */
function functionSchema(tool: Plan["tools"][number]): YamlMapping {
  const { $schema: _dropped, ...parameters } = tool.definition.function.parameters;
  return {
    type: "function",
    function: {
      name: tool.definition.function.name,
      description: tool.definition.function.description,
      parameters: parameters as YamlMapping,
    },
  };
}

export function toolConfig(plan: Plan): { config: YamlMapping; findings: Finding[] } {
  const findings: Finding[] = [];
  const tools = plan.tools.map((tool) => {
    const env = tool.env === null ? undefined : plan.envs[tool.env];
    if (env?.kind !== "http") {
      findings.push({
        setting: `tools.${tool.name}`,
        arl: `tool of ${tool.env === null ? "no env" : `a ${env?.kind ?? "missing"} env`}`,
        verl: `${ENV_TOOL_CLASS} forwards calls to HTTP task servers only`,
        consequence: "the env's logic runs inside ARL; veRL has nothing to execute this tool with",
        handling: "refused",
      });
    }
    return {
      class_name: ENV_TOOL_CLASS,
      config: {
        type: "native",
        env: tool.env ?? "",
        url: env?.kind === "http" ? env.url : "",
        timeout_s: tool.timeout_s,
      },
      tool_schema: functionSchema(tool),
    };
  });
  return { config: { tools: tools }, findings };
}
