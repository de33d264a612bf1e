#!/usr/bin/env node
// `npm run setup:ray`: the venv .venv-ray with Ray as it is published (requirements-ray.in:
// ray[default], whose dashboard serves the Jobs API), the `ray` command that `arl submit
// --scheduler ray` submits, watches and stops jobs with, and that test/cluster/ray.test.ts starts
// a one-node head from on loopback (docs/distributed.md, "Sweeps on a Ray cluster"). Its own venv:
// Ray's pins (protobuf, grpcio, pydantic) are not the trainer's. About 0.4 GB, about a minute here;
// `.ci/run` makes it beside .venv, in parallel. Without it those tests skip locally and fail under CI.
import { join } from "node:path";
import { ensureVenv, here, root } from "./venvs.mjs";

const problem = ensureVenv({
  venv: join(root, ".venv-ray"),
  files: [{ file: join(here, "requirements-ray.txt"), noDeps: false }],
  label: "Ray (ray job submit, a local head) for arl submit --scheduler ray",
  size: "about 0.4 GB, no torch",
  needGB: 1.5,
});
if (problem) {
  console.error(`setup:ray: ${problem.message}`);
  process.exit(1);
}
