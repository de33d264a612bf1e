import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { planJsonSchema, planSchema } from "../../src/plan/schema.js";
import { renderPlanSchema } from "../../src/plan/write-schema.js";
import { examplesDir, lower, validatePlan } from "./support.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("the published plan JSON Schema", () => {
  it("is a draft 2020-12 schema that ajv compiles in strict mode, with the field docs", () => {
    const schema = planJsonSchema();
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(() => new Ajv2020({ strict: true, allowUnionTypes: true }).compile(schema)).not.toThrow();
    expect(renderPlanSchema()).toContain("sha256 of the RFC 8785 canonical JSON");
  });

  it("is exported by the package as ./plan.schema.json and written by the build", () => {
    const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
      exports: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(pkg.exports["./plan.schema.json"]).toBe("./dist/plan.schema.json");
    expect(pkg.scripts.build).toContain("dist/plan/write-schema.js");
    // `npm test` builds first; a stale build would publish a schema other than the source's.
    const published = path.join(root, "dist/plan.schema.json");
    if (existsSync(published))
      expect(readFileSync(published, "utf8"), "dist/plan.schema.json is stale: run npm run build").toBe(
        renderPlanSchema(),
      );
  });

  it("validates every plan of the shared examples, and zod agrees", () => {
    for (const name of ["tw-max-steps.arl", "agentrl-ablation.arl", "findmax.arl", "shaping.arl"]) {
      for (const p of lower(path.join(examplesDir, name))) {
        expect(validatePlan(p.plan), `${p.experiment}/${p.variant}`).toEqual([]);
        expect(planSchema.safeParse(p.plan).success).toBe(true);
      }
    }
  });

  it("rejects what the runtime must not accept: unknown fields, a missing default, a bad hash", () => {
    const [p] = lower(path.join(examplesDir, "findmax.arl"));
    const plan = JSON.parse(JSON.stringify(p!.plan)) as Record<string, any>;
    expect(validatePlan({ ...plan, extra: 1 })).not.toEqual([]);
    const { batch_size: _b, ...algorithm } = plan.algorithm;
    expect(validatePlan({ ...plan, algorithm })).not.toEqual([]);
    expect(validatePlan({ ...plan, hash: "md5:00" })).not.toEqual([]);
    expect(validatePlan({ ...plan, algorithm: { ...plan.algorithm, reduction: { mode: "constant" } } })).not.toEqual(
      [],
    );
  });

  it("follows the semantic schema: every typed field of a variant has its place in the plan", () => {
    // A field added to src/semantics/schema must be added to src/plan/schema.ts (and lowered).
    const fieldsOf = (o: object) => Object.keys(o).sort();
    const shapeOf = (s: unknown) => Object.keys((s as { shape: Record<string, unknown> }).shape).sort();
    const plan = planSchema.shape;
    const renamed: Record<string, string[]> = { harness: ["tools"] }; // harness.tools: the resolved top-level `tools`
    for (const file of ["tw-max-steps.arl", "agentrl-ablation.arl", "findmax.arl", "shaping.arl"]) {
      const model = new Compiler().check(path.join(examplesDir, file), { plan: false }).model!;
      const config = model.experiments[0]!.variants[0]!.config!;
      for (const block of [
        "policy",
        "harness",
        "mask",
        "algorithm",
        "rollout",
        "eval",
        "resources",
        "tracking",
      ] as const) {
        const expected = fieldsOf(config[block]).filter((k) => !(renamed[block] ?? []).includes(k));
        expect(shapeOf(plan[block]), `${file}: ${block}`).toEqual(expected);
      }
      expect(shapeOf(plan.policy.shape.sampling), "policy.sampling").toEqual(fieldsOf(config.policy.sampling));
      for (const [name, env] of Object.entries(config.env)) {
        const option = plan.envs.valueType.options.find((o) => o.shape.kind.value === env.kind)!;
        expect(shapeOf(option), `${file}: env ${name}`).toEqual(
          fieldsOf({ ...env, description: null }).filter((k) => k !== "tool"),
        );
      }
      expect(
        fieldsOf({ ...config, description: null }).filter(
          (k) => !["env", "tool", "reward", "constraints", "allow"].includes(k),
        ),
      ).toEqual(
        shapeOf(planSchema).filter(
          (k) =>
            ![
              "format_version",
              "hash",
              "experiment",
              "variant",
              "overrides",
              "envs",
              "tools",
              "reward",
              "constraints",
              "silenced",
              "stages",
              "provenance",
            ].includes(k),
        ),
      );
    }
  });
});
