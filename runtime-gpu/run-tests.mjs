#!/usr/bin/env node
// Runs the PyTorch trainer's pytest suite with the first Python that has torch and pytest
// ($ARL_PYTHON, python3, /usr/bin/python3: Debian's python3-torch lives with the system Python).
// Without one it says how to install them and skips, except under CI, where it fails.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const candidates = [process.env.ARL_PYTHON, "python3", "/usr/bin/python3"].filter(Boolean);
const python = candidates.find((c) => spawnSync(c, ["-c", "import torch, pytest"], { stdio: "ignore" }).status === 0);
if (!python) {
  const message = "runtime-gpu tests: no Python with torch and pytest found (apt-get install python3-torch python3-pytest python3-numpy)";
  if (process.env.CI) {
    console.error(`${message}; CI must run them`);
    process.exit(1);
  }
  console.log(`${message}; skipped`);
  process.exit(0);
}
const run = spawnSync(python, ["-m", "pytest", "-q", "tests"], { cwd: here, stdio: "inherit" });
process.exit(run.status ?? 1);
