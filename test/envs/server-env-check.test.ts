// What `arl check` says of AgentRL and OpenEnv envs, with no server running: a controller needs a
// task name, an OpenEnv env one tool (its action), the URL one fetch can call; and the shipped
// AgentBench envs check clean.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { compilePlans } from "../helpers/plans.js";

function errors(env: string): { code: string; message: string; line: number }[] {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-server-env-"));
  const file = path.join(dir, "spec.arl");
  writeFileSync(
    file,
    `experiment e {\n  policy { model: "builtin:tiny" }\n${env}\n  reward { r: outcome.reward }\n  eval { success: outcome.reward >= 1 }\n}\n`,
  );
  return new Compiler()
    .check(file)
    .diagnostics.filter((d) => d.severity === "error")
    .map((d) => ({ code: d.code, message: d.message, line: d.range.start.line }));
}

const SIGNALS = "    signals { reward { scope: outcome, type: number } }";

describe("arl check of agentrl and openenv envs", () => {
  it("an AgentRL controller without a task name is reported at its mode", () => {
    const found = errors(
      `  env os {\n    kind: agentrl\n    mode: controller\n    url: "http://127.0.0.1:5020/api"\n${SIGNALS}\n    tool a { description: "a" }\n  }`,
    );
    expect(found).toEqual([expect.objectContaining({ code: "agentrl-controller-task", line: 5 })]);
    expect(
      errors(
        `  env os {\n    kind: agentrl\n    url: "http://127.0.0.1:5021/api"\n${SIGNALS}\n    tool a { description: "a" }\n  }`,
      ),
    ).toEqual([]);
  });

  it("an OpenEnv env must declare exactly one tool, its action", () => {
    const none = errors(`  env g {\n    kind: openenv\n    url: "http://127.0.0.1:8000"\n${SIGNALS}\n  }`);
    expect(none.map((e) => e.code)).toContain("openenv-tools");
    const two = errors(
      `  env g {\n    kind: openenv\n    url: "http://127.0.0.1:8000"\n${SIGNALS}\n    tool a { description: "a" }\n    tool b { description: "b" }\n  }`,
    );
    expect(two).toEqual([
      expect.objectContaining({
        code: "openenv-tools",
        message: expect.stringContaining("declares 2 tools ('a', 'b')"),
      }),
    ]);
  });

  it("a URL that fetch refuses is reported for both kinds", () => {
    for (const kind of ["agentrl", "openenv"]) {
      const found = errors(
        `  env g {\n    kind: ${kind}\n    url: "http://127.0.0.1:6000"\n${SIGNALS}\n    tool a { description: "a" }\n  }`,
      );
      expect(
        found.map((e) => e.code),
        kind,
      ).toContain("http-env-url");
    }
  });

  it("std/envs/agentbench checks and lowers with no server: AgentBench FC's tasks behind a controller", () => {
    const [plan] = compilePlans(
      `import "std/envs/agentbench" as ab\nexperiment e {\n  policy { model: "builtin:tiny" }\n  env os extends ab.os {}\n  env kg extends ab.kg {}\n  reward { r: outcome.success }\n}\n`,
    );
    expect(plan!.envs.os).toMatchObject({ kind: "agentrl", mode: "controller", task: "os-std", tasks: 144 });
    expect(plan!.tools.filter((t) => t.env === "os").map((t) => t.name)).toEqual([
      "answer_action",
      "bash_action",
      "finish_action",
    ]);
    expect(plan!.tools.filter((t) => t.env === "kg").map((t) => t.name)).toEqual([
      "argmax",
      "argmin",
      "count",
      "get_attributes",
      "get_neighbors",
      "get_relations",
      "intersection",
    ]);
  });
});
