// ESLint flat config: typescript-eslint's type-aware recommended rules plus a few strict ones,
// over the TypeScript sources and tests and the plain-JS launchers and scripts.
// `npm run lint` runs it; `npm test` runs that after tsc and before vitest.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  {
    // editors/vscode is its own package; grammar/diagrams is generated browser code.
    ignores: [
      "dist/**",
      "coverage/**",
      "runs/**",
      "node_modules/**",
      // The Python venvs (.venv, .venv-vllm, .venv-envservers, .venv-ray) ship JavaScript of their own.
      ".venv*/**",
      "editors/**",
      "grammar/diagrams/**",
      "test/fixtures/**",
    ],
  },
  js.configs.recommended,
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { globals: globals.node },
    rules: { eqeqeq: ["error", "always", { null: "ignore" }] },
  },
  {
    files: ["**/*.ts"],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // noUncheckedIndexedAccess is on, and `x!` switches it off where it matters: use a checked
      // accessor from src/contracts/checked.ts where an index is a real invariant.
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": ["error", { considerDefaultExhaustiveForUnions: true }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      // The env, policy and trainer interfaces are async; an implementation that needs no await
      // (an in-memory env, a scripted double) is still correct.
      "@typescript-eslint/require-await": "off",
      eqeqeq: ["error", "always", { null: "ignore" }],
      "prefer-const": "error",
      "no-var": "error",
    },
  },
  {
    // Tests read raw JSON (CLI output, run files) and index results they have just checked the
    // shape of: an `any` or a missing element there fails the test that hit it, which is the point.
    // They also stringify arbitrary values as labels of their cases.
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-base-to-string": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
);
