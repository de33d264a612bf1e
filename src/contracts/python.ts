// The Python that arl's Python children run on (the PyTorch trainer, the trackers' sidecar, the
// env host) and the folder of their packages.
import { existsSync } from "node:fs";
import path from "node:path";
import { PACKAGE_ROOT } from "./paths.js";

/** runtime-gpu/, the folder of the Python packages (arl_trainer, arl_tracking, arl_envhost), for PYTHONPATH. */
export const RUNTIME_GPU_DIR = path.join(PACKAGE_ROOT, "runtime-gpu");

/** The Pythons arl may use, in order: $ARL_PYTHON, the repository's .venv, `python3` on the PATH, /usr/bin/python3. */
export function pythonCandidates(): string[] {
  const venv = path.join(PACKAGE_ROOT, ".venv/bin/python");
  return [process.env.ARL_PYTHON, existsSync(venv) ? venv : undefined, "python3", "/usr/bin/python3"].filter(
    (c): c is string => Boolean(c),
  );
}

/**
 * The Pythons the env libraries' host may use, in order: $ARL_ENVS_PYTHON (a Python that has the
 * user's own env libraries), then pythonCandidates(): the repository's .venv holds the pinned ones
 * (`npm run setup:envs`).
 */
export function envLibraryPythonCandidates(): string[] {
  return [process.env.ARL_ENVS_PYTHON, ...pythonCandidates()].filter((c): c is string => Boolean(c));
}

/**
 * The Python of the field's env servers (`npm run setup:envservers`: verifiers, AgentRL's worker,
 * OpenEnv), which `python:envservers` in an agent command names: $ARL_ENVSERVERS_PYTHON, else
 * the package's .venv-envservers, else `python3` on the PATH.
 */
export function envServersPython(): string {
  const venv = path.join(PACKAGE_ROOT, ".venv-envservers/bin/python");
  return process.env.ARL_ENVSERVERS_PYTHON ?? (existsSync(venv) ? venv : "python3");
}
