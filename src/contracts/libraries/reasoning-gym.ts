// reasoning-gym (docs/env-libraries.md, "reasoning-gym"): a procedural dataset by name, task i its
// entry i, scored by the dataset's own score_answer; a single-turn task (the reply is the answer)
// or an answer tool.
import * as z from "zod";
import { doc, enumOf, nonNegativeInt, positiveInt } from "../schema-primitives.js";
import { didYouMean } from "../suggest.js";
import { reasoningGymCatalog } from "./catalog/reasoning-gym.js";
import { hostLibrary, libraryObject, type KnobProblem } from "./library.js";

const { datasets } = reasoningGymCatalog;

/** An unknown dataset, or a config field its config class does not have (the pinned version's names: catalog/reasoning-gym.ts). */
function checkDataset(config: Readonly<Record<string, unknown>>): KnobProblem[] {
  const name = config.dataset;
  if (typeof name !== "string") return [];
  const fields = Object.hasOwn(datasets, name) ? datasets[name] : undefined;
  if (!fields) {
    const hint =
      didYouMean(name, Object.keys(datasets)) ??
      `one of its ${Object.keys(datasets).length} datasets, e.g. ${Object.keys(datasets).slice(0, 5).join(", ")}`;
    return [
      {
        knob: "dataset",
        message: `reasoning-gym ${reasoningGymCatalog.version} has no dataset '${name}'`,
        hint,
      },
    ];
  }
  const written = config.config && typeof config.config === "object" ? Object.keys(config.config) : [];
  return written
    .filter((key) => !fields.includes(key))
    .map((key) => ({
      knob: `config.${key}`,
      message: `'${key}' is not a field of ${name}'s config`,
      hint:
        didYouMean(key, fields) ??
        (fields.length > 0 ? `its fields: ${fields.join(", ")}` : `${name}'s config has no fields but size and seed`),
    }));
}

export const reasoningGymLibrary = hostLibrary({
  kind: "reasoning_gym",
  knobs: {
    dataset: doc(
      z.string().min(1),
      "The dataset's name as reasoning-gym registers it (chain_sum, basic_arithmetic, ...); an unknown name is refused at check time with the close ones.",
    ),
    size: doc(
      positiveInt.nullable().default(null),
      "Entries in the dataset (its create_dataset size); `tasks` is this when written. none: the dataset's own size (usually 500).",
    ),
    seed: doc(
      nonNegativeInt.default(0),
      "The dataset's seed: the entries depend on the dataset, its config and this seed alone.",
    ),
    config: doc(
      libraryObject.default({}),
      "The dataset config's own fields (e.g. min_terms), each of its default's type; the dataset's validate() runs at provision.",
    ),
    answer: doc(
      enumOf(["text", "tool"]).default("text"),
      "text: the reply without a tool call is the answer (a single-turn task); tool: the call of `action_tool` is the answer.",
    ),
    answer_tag: doc(
      z.boolean().default(true),
      "text: score the reply's last <answer>...</answer> (reasoning-gym's extract_answer); none found scores 0. false: the whole reply.",
    ),
  },
  answers: true,
  walkthroughs: true,
  check: checkDataset,
  taskCount: (config) => (typeof config.size === "number" ? config.size : undefined),
});
