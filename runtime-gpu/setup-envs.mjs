#!/usr/bin/env node
// `npm run setup:envs`: the venv .venv-envs with the Python env libraries the env host serves
// (runtime-gpu/requirements-envs.txt, pinned and hashed; docs/env-host.md, "Install"). Its own
// venv: the libraries' pins (spacy, numpy, gymnasium's) need not agree with requirements.txt. The
// env host runs on its Python (src/contracts/python.ts, envLibraryPythonCandidates). TextWorld
// builds jericho from source with gcc: 375 MB, 55 s here with pip's cache warm (the issue measured
// 478 s cold). `npm test` and `.ci/run` make it beside .venv, in parallel.
import { join } from "node:path";
import { ensureVenv, here, root } from "./venvs.mjs";

const problem = ensureVenv({
  venv: join(root, ".venv-envs"),
  files: [{ file: join(here, "requirements-envs.txt"), noDeps: false }],
  label: "env libraries (TextWorld, ...) for the env host",
  size: "textworld with jericho built from source and spacy: about 375 MB, 1-8 minutes",
});
if (problem?.noPython && !process.env.CI) {
  console.log(`setup:envs: ${problem.message}; the env library tests skip`);
  process.exit(0);
}
if (problem) {
  console.error(`setup:envs: ${problem.message}`);
  process.exit(1);
}
