import * as z from "zod";
import { doc, enumOf, nonNegativeInt, positiveInt } from "./common.js";

export const resourcesSchema = z.strictObject({
  backend: doc(enumOf(["local", "torch"]).default("local"), "`local`: the embedded CPU trainer; `torch`: the PyTorch trainer in runtime-gpu/."),
  gpus: doc(nonNegativeInt.default(0), "GPUs in all (torch backend)."),
  nodes: doc(positiveInt.default(1), "Machines; GPUs are split evenly across them."),
  launcher: doc(enumOf(["auto", "torchrun", "none"]).default("auto"), "`auto`: torchrun when more than one process is needed."),
});

