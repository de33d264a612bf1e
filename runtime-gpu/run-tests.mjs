#!/usr/bin/env node
// The Python side of `npm test`: ruff over runtime-gpu/, then the PyTorch trainer's pytest suite,
// both in the repository's virtual environment .venv.
//
// .venv is made from a Python 3 ($ARL_PYTHON, else /usr/bin/python3, else python3) without the
// system's site-packages, so an old Debian python3-torch never leaks in; everything comes from
// PyPI, pinned with hashes in runtime-gpu/requirements.txt (torch, transformers, peft, ...), then
// runtime-gpu/requirements-envs.txt (the env host's Python env libraries: reasoning-gym, textarena,
// skyrl-gym, gymnasium, textworld-express; compiled under requirements.txt's pins, so they share
// .venv; docs/env-libraries.md), then runtime-gpu/requirements-engines.txt without their dependencies: vLLM, SGLang and veRL, whose
// request classes and config loader the tests validate against, pin versions of transformers,
// openai and CUDA kernels that conflict with ours and cannot run here; what their protocol and
// config modules import is pinned in requirements.txt. Both are installed when .venv is missing
// or when either file changed since the last install (.venv/arl-requirements.sha256 holds the
// hash of the files that were installed). pip is told not to warn that their declared
// dependencies are unmet: that is the point of installing them without. A machine without
// a Python that has venv skips the trainer's lint and tests with a hint, except under CI, where it
// fails.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ensureVenv, here, root, run, venvPythonOf } from "./venvs.mjs";

const venv = join(root, ".venv");
const venvPython = venvPythonOf(venv);

function fail(message) {
  console.error(`runtime-gpu tests: ${message}`);
  process.exit(1);
}

const problem = ensureVenv({
  venv,
  files: [
    { file: join(here, "requirements.txt"), noDeps: false },
    { file: join(here, "requirements-envs.txt"), noDeps: false },
    { file: join(here, "requirements-engines.txt"), noDeps: true },
  ],
  label: "runtime-gpu tests",
  size: "torch with its CUDA libraries and the env libraries: about 7.6 GB, a few minutes",
  needGB: 11,
});
if (problem?.noPython) {
  // Like a missing torch below: a machine without Python skips the trainer's lint and tests, CI fails.
  if (process.env.CI) fail(`${problem.message}; CI must run the trainer's tests`);
  console.log(`runtime-gpu tests: ${problem.message}; ruff and pytest skipped`);
  process.exit(0);
}
if (problem) fail(problem.message);
// `--setup` (npm run setup:python, and setup:envs for the env libraries): only make .venv (npm test runs this before vitest, whose suites start the PyTorch trainer).
if (process.argv.includes("--setup")) process.exit(0);

// ruff reads its settings from runtime-gpu/pyproject.toml.
if (run(venvPython, ["-m", "ruff", "check", "--no-cache", "."]).status !== 0) fail("ruff check found problems (see above)");

if (spawnSync(venvPython, ["-c", "import torch"], { stdio: "ignore" }).status !== 0) {
  const message = "no torch in .venv's Python (delete .venv and run npm test again to reinstall runtime-gpu/requirements.txt)";
  if (process.env.CI) fail(`${message}; CI must run the trainer's tests`);
  console.log(`runtime-gpu tests: ${message}; pytest skipped`);
  process.exit(0);
}
// -rs: each skipped test's reason (a missing system package, venv or library) in the summary.
process.exit(run(venvPython, ["-m", "pytest", "-q", "-rs", "tests"]).status);
