// AdamW (decoupled weight decay, as torch.optim.AdamW) with linear warm-up and clipping by the
// global gradient norm (as torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6)
// when the norm exceeds max_norm). Run in JavaScript over float32 arrays: the models are small,
// and the arithmetic is then the same on every machine. Biases are not decayed.
import { defined, InternalError } from "../../contracts/checked.js";

export interface OptimizerConfig {
  readonly lr: number;
  readonly betas: readonly [number, number];
  readonly eps: number;
  readonly weight_decay: number;
  readonly grad_clip: number | null;
  readonly warmup_steps: number;
}

interface OptimizerSlot {
  readonly m: Float32Array;
  readonly v: Float32Array;
}

/** `s` plus the sum of the squares of `g`, added in order. */
function addSquares(s: number, g: ArrayLike<number>): number {
  for (let i = 0; i < g.length; i++) {
    const x = g[i] as number; // i < g.length
    s += x * x;
  }
  return s;
}

export class AdamW {
  step = 0;
  readonly slots = new Map<string, OptimizerSlot>();

  constructor(
    readonly config: OptimizerConfig,
    readonly decay: ReadonlySet<string>,
  ) {}

  /** Forgets every step taken: moments zeroed and step count 0, as a freshly made optimizer (trainer protocol reset_optimizer). */
  reset(): void {
    this.step = 0;
    this.slots.clear();
  }

  /** Global L2 norm of the gradients (float64 accumulation, in a fixed order). */
  static norm(grads: ReadonlyMap<string, ArrayLike<number>>): number {
    let s = 0;
    for (const name of [...grads.keys()].sort()) s = addSquares(s, defined(grads.get(name), `gradient ${name}`));
    return Math.sqrt(s);
  }

  /** One step: updates `params` in place; returns the gradient norm before clipping. `peakLr` replaces the configured rate for this step. */
  update(
    params: Map<string, Float32Array>,
    grads: ReadonlyMap<string, ArrayLike<number>>,
    peakLr: number = this.config.lr,
  ): number {
    const norm = AdamW.norm(grads);
    const c = this.config;
    const scale = c.grad_clip !== null && norm > c.grad_clip ? c.grad_clip / (norm + 1e-6) : 1;
    this.step++;
    const lr = c.warmup_steps > 0 ? peakLr * Math.min(1, this.step / c.warmup_steps) : peakLr;
    const [b1, b2] = c.betas;
    const bc1 = 1 - b1 ** this.step;
    const bc2 = 1 - b2 ** this.step;
    for (const name of [...params.keys()].sort()) {
      const p = defined(params.get(name), `parameter ${name}`);
      const g = grads.get(name);
      if (!g) continue;
      if (g.length !== p.length)
        throw new InternalError(`gradient ${name} has ${g.length} values for ${p.length} parameters`);
      let slot = this.slots.get(name);
      if (!slot) {
        slot = { m: new Float32Array(p.length), v: new Float32Array(p.length) };
        this.slots.set(name, slot);
      }
      const { m, v } = slot;
      const wd = this.decay.has(name) ? lr * c.weight_decay : 0;
      // i < p.length = g.length = m.length = v.length (checked above, slots are made to size).
      for (let i = 0; i < p.length; i++) {
        const gi = (g[i] as number) * scale;
        m[i] = b1 * (m[i] as number) + (1 - b1) * gi;
        v[i] = b2 * (v[i] as number) + (1 - b2) * gi * gi;
        const update = (m[i] as number) / bc1 / (Math.sqrt((v[i] as number) / bc2) + c.eps);
        p[i] = (p[i] as number) * (1 - wd) - lr * update;
      }
    }
    return norm;
  }
}
