// AdamW (decoupled weight decay, as torch.optim.AdamW) with linear warm-up and clipping by the
// global gradient norm (as torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6)
// when the norm exceeds max_norm). Run in JavaScript over float32 arrays: the models are small,
// and the arithmetic is then the same on every machine. Biases are not decayed.

export interface OptimizerConfig {
  readonly lr: number;
  readonly betas: readonly [number, number];
  readonly eps: number;
  readonly weight_decay: number;
  readonly grad_clip: number | null;
  readonly warmup_steps: number;
}

export interface OptimizerSlot {
  readonly m: Float32Array;
  readonly v: Float32Array;
}

export class AdamW {
  step = 0;
  readonly slots = new Map<string, OptimizerSlot>();

  constructor(
    readonly config: OptimizerConfig,
    readonly decay: ReadonlySet<string>,
  ) {}

  /** Global L2 norm of the gradients (float64 accumulation, in a fixed order). */
  static norm(grads: ReadonlyMap<string, ArrayLike<number>>): number {
    let s = 0;
    for (const name of [...grads.keys()].sort()) { const g = grads.get(name)!; for (let i = 0; i < g.length; i++) s += g[i]! * g[i]!; }
    return Math.sqrt(s);
  }

  /** One step: updates `params` in place; returns the gradient norm before clipping. `peakLr` replaces the configured rate for this step. */
  update(params: Map<string, Float32Array>, grads: ReadonlyMap<string, ArrayLike<number>>, peakLr: number = this.config.lr): number {
    const norm = AdamW.norm(grads);
    const c = this.config;
    const scale = c.grad_clip !== null && norm > c.grad_clip ? c.grad_clip / (norm + 1e-6) : 1;
    this.step++;
    const lr = c.warmup_steps > 0 ? peakLr * Math.min(1, this.step / c.warmup_steps) : peakLr;
    const [b1, b2] = c.betas;
    const bc1 = 1 - b1 ** this.step;
    const bc2 = 1 - b2 ** this.step;
    for (const name of [...params.keys()].sort()) {
      const p = params.get(name)!;
      const g = grads.get(name);
      if (!g) continue;
      let slot = this.slots.get(name);
      if (!slot) {
        slot = { m: new Float32Array(p.length), v: new Float32Array(p.length) };
        this.slots.set(name, slot);
      }
      const { m, v } = slot;
      const wd = this.decay.has(name) ? lr * c.weight_decay : 0;
      for (let i = 0; i < p.length; i++) {
        const gi = g[i]! * scale;
        m[i] = b1 * m[i]! + (1 - b1) * gi;
        v[i] = b2 * v[i]! + (1 - b2) * gi * gi;
        const update = m[i]! / bc1 / (Math.sqrt(v[i]! / bc2) + c.eps);
        p[i] = p[i]! * (1 - wd) - lr * update;
      }
    }
    return norm;
  }
}
