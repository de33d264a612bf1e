// Each inference engine's wire format, by the name the plan gives it (resources.rollout.engine).

import { type EngineName, type EngineWire } from "./contract.js";
import { sglangWire } from "./sglang-wire.js";
import { vllmWire } from "./vllm-wire.js";

const WIRES: Readonly<Record<EngineName, EngineWire>> = { vllm: vllmWire, sglang: sglangWire };

export function engineWire(name: EngineName): EngineWire {
  return WIRES[name];
}
