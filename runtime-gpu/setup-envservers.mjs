#!/usr/bin/env node
// `npm run setup:envservers`: the venv .venv-envservers with the field's env servers as they are
// published (requirements-envservers.in: AgentRL's task worker, OpenEnv's server under uvicorn,
// verifiers), which test/envs/agentrl.test.ts and test/envs/openenv.test.ts serve their small
// tasks from on loopback (docs/envs.md). Its own venv: their pins (openai 2.x, mcp 2.0, antlr4
// 4.13) conflict with requirements.txt's. About 0.9 GB, 3 to 4 minutes here; `.ci/run` makes it
// beside .venv, in parallel. Without it those tests skip locally and fail under CI.
import { join } from "node:path";
import { ensureVenv, here, root } from "./venvs.mjs";

const problem = ensureVenv({
  venv: join(root, ".venv-envservers"),
  files: [{ file: join(here, "requirements-envservers.txt"), noDeps: false }],
  label: "env servers (AgentRL, OpenEnv, verifiers) for the env adapters' tests",
  size: "about 0.9 GB, no torch",
  needGB: 1.5,
});
if (problem) {
  console.error(`setup:envservers: ${problem.message}`);
  process.exit(1);
}
