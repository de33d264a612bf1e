#!/usr/bin/env node
// The Python side of `npm test`: ruff over runtime-gpu/, then the PyTorch trainer's pytest suite,
// both in the repository's virtual environment .venv.
//
// .venv is made from a Python 3 ($ARL_PYTHON, else /usr/bin/python3, else python3) without the
// system's site-packages, so an old Debian python3-torch never leaks in; everything comes from
// PyPI, pinned with hashes in runtime-gpu/requirements.txt (torch, transformers, peft, ...), then
// runtime-gpu/requirements-engines.txt without their dependencies: vLLM, SGLang and veRL, whose
// request classes and config loader the tests validate against, pin versions of transformers,
// openai and CUDA kernels that conflict with ours and cannot run here; what their protocol and
// config modules import is pinned in requirements.txt. Both are installed when .venv is missing
// or when either file changed since the last install (.venv/arl-requirements.sha256 holds the
// hash of the files that were installed). pip is told not to warn that their declared
// dependencies are unmet: that is the point of installing them without. A machine without
// a Python that has venv skips the trainer's lint and tests with a hint, except under CI, where it
// fails.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const root = join(here, "..");
const venv = join(root, ".venv");
const venvPython = join(venv, process.platform === "win32" ? "Scripts/python.exe" : "bin/python");
const requirements = join(here, "requirements.txt");
const requirementsEngines = join(here, "requirements-engines.txt");
const stamp = join(venv, "arl-requirements.sha256");

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: here, stdio: "inherit", ...options });
  if (result.error) return { status: 1, error: result.error };
  return { status: result.status ?? 1 };
}

function fail(message) {
  console.error(`runtime-gpu tests: ${message}`);
  process.exit(1);
}

function basePython() {
  const candidates = [process.env.ARL_PYTHON, "/usr/bin/python3", "python3"].filter(Boolean);
  return candidates.find((c) => spawnSync(c, ["-c", "import venv"], { stdio: "ignore" }).status === 0);
}

function ensureVenv() {
  const wanted = createHash("sha256").update(readFileSync(requirements)).update(readFileSync(requirementsEngines)).digest("hex");
  const installed = existsSync(stamp) ? readFileSync(stamp, "utf8").trim() : undefined;
  if (existsSync(venvPython) && installed === wanted) return;
  if (!existsSync(venvPython)) {
    const python = basePython();
    if (!python) {
      // Like a missing torch below: a machine without Python skips the trainer's lint and tests, CI fails.
      const message = "no Python 3 with the venv module found (Debian: apt-get install python3 python3-venv)";
      if (process.env.CI) fail(`${message}; CI must run the trainer's tests`);
      console.log(`runtime-gpu tests: ${message}; ruff and pytest skipped`);
      process.exit(0);
    }
    // A half-made .venv (interrupted, or made without pip) is replaced, not repaired.
    rmSync(venv, { recursive: true, force: true });
    console.log(`runtime-gpu tests: creating ${venv} from ${python}`);
    if (run(python, ["-m", "venv", venv]).status !== 0) fail(`could not create ${venv} (Debian: apt-get install python3-venv)`);
  }
  console.log("runtime-gpu tests: installing runtime-gpu/requirements.txt into .venv (torch with its CUDA libraries: about 5.6 GB, a few minutes)");
  const pip = run(venvPython, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes", "-r", requirements]);
  if (pip.status !== 0) fail("pip could not install runtime-gpu/requirements.txt into .venv");
  const noDeps = run(venvPython, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes", "--no-deps", "--no-warn-conflicts", "-r", requirementsEngines]);
  if (noDeps.status !== 0) fail("pip could not install runtime-gpu/requirements-engines.txt into .venv");
  writeFileSync(stamp, `${wanted}\n`);
}

ensureVenv();
// `--setup`: only make .venv (npm test runs this before vitest, whose suites start the PyTorch trainer).
if (process.argv.includes("--setup")) process.exit(0);

// ruff reads its settings from runtime-gpu/pyproject.toml.
if (run(venvPython, ["-m", "ruff", "check", "--no-cache", "."]).status !== 0) fail("ruff check found problems (see above)");

if (spawnSync(venvPython, ["-c", "import torch"], { stdio: "ignore" }).status !== 0) {
  const message = "no torch in .venv's Python (delete .venv and run npm test again to reinstall runtime-gpu/requirements.txt)";
  if (process.env.CI) fail(`${message}; CI must run the trainer's tests`);
  console.log(`runtime-gpu tests: ${message}; pytest skipped`);
  process.exit(0);
}
process.exit(run(venvPython, ["-m", "pytest", "-q", "tests"]).status);
