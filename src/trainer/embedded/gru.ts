// The GRU recurrence of model.ts as hand-written kernels: one for a generation step, one for a
// whole sequence forward and one for its backward pass through time, instead of a dozen small
// tfjs ops per token each way (the model runs one step per token, so a step's cost was the
// per-op overhead of ~15 elementwise ops on [B, H] forward and ~30 in the gradient, not their
// arithmetic). The matrix products are the backend's own BatchMatMul kernel (XNNPACK on wasm),
// called from inside; the weight gradient is one product over all steps.
//
//   a step   x = the token's row of the input table [B, 3H] (r | z | n parts), hw = h wh [B, 3H]
//            r = sigmoid(x_r + hw_r)   z = sigmoid(x_z + hw_z)   u = hw_n + bhn
//            n = tanh(x_n + r u)       h' = n + z (h - n)
//   its gradient, with g = dL/dh' (from the step's output and from the next step):
//            dz~ = g (h - n) z (1 - z)   dn~ = g (1 - z) (1 - n^2)   dr~ = dn~ u r (1 - r)
//            dx = [dr~ | dz~ | dn~]      dhw = [dr~ | dz~ | dn~ r]
//            dh = g z + dhw wh^T (to the previous step)
//   over the sequence: dwh = sum_t h_{t-1}^T dhw_t, dbhn = sum_t sum_b (dn~ r) = the n part of dhw
// The forward saves [r | z | n | u] per row for the backward. Values are computed in float64
// and stored as float32, as the tensors are.
import { tf, type TensorInfo, type WasmBackend } from "./backend.js";
import { InternalError } from "../../contracts/checked.js";

/** A backend's tensors as typed arrays (wasm: views of its heap; cpu: its arrays), and its matMul. */
interface Storage {
  make(shape: readonly number[]): TensorInfo;
  /** A view: take it again after any allocation (a wasm allocation may grow and detach the heap). */
  view(t: TensorInfo): Float32Array;
  dispose(t: TensorInfo): void;
  /** a [M, K] x b [K, N] -> [M, N] by the backend's BatchMatMul kernel. */
  matMul(a: TensorInfo, b: TensorInfo): TensorInfo;
}

const storages = new WeakMap<object, Storage>();

/** The storage of a backend instance, built once (the step kernel runs once per generated token). */
function storageOf(backend: unknown, backendName: string): Storage {
  const known = storages.get(backend as object);
  if (known) return known;
  const kernel = tf.getKernel("BatchMatMul", backendName);
  if (!kernel) throw new InternalError(`GRU kernels: the ${backendName} backend has no BatchMatMul`);
  const matMul = (a: TensorInfo, b: TensorInfo) =>
    kernel.kernelFunc({
      inputs: { a, b },
      attrs: { transposeA: false, transposeB: false },
      backend: backend as tf.KernelBackend,
    }) as TensorInfo;
  const dispose = (t: TensorInfo) => (backend as { disposeData(id: object): void }).disposeData(t.dataId);
  let storage: Storage;
  if (backendName === "wasm") {
    const wasm = backend as WasmBackend;
    storage = {
      make: (shape) => wasm.makeOutput([...shape], "float32"),
      view: (t) => wasm.typedArrayFromHeap(t) as Float32Array,
      dispose,
      matMul,
    };
  } else {
    const cpu = backend as {
      data: { get(id: object): { values: Float32Array } };
      makeTensorInfo(shape: number[], dtype: tf.DataType, values: Float32Array): TensorInfo;
    };
    storage = {
      make: (shape) => cpu.makeTensorInfo([...shape], "float32", new Float32Array(shape.reduce((a, b) => a * b, 1))),
      view: (t) => cpu.data.get(t.dataId).values,
      dispose,
      matMul,
    };
  }
  storages.set(backend as object, storage);
  return storage;
}

function input(inputs: tf.NamedTensorInfoMap, name: string): TensorInfo {
  const t = inputs[name];
  if (!t) throw new InternalError(`GRU kernel: no input ${name}`);
  return t;
}

function checkLength(view: Float32Array, n: number, what: string): Float32Array {
  if (view.length < n)
    throw new InternalError(`GRU kernel: ${what} holds ${view.length} values, fewer than its shape's ${n}`);
  return view;
}

const sigmoid = (v: number): number => 1 / (1 + Math.exp(-v));

/**
 * One step for B rows: next (and, when given, the gates [r | z | n | u]) from x [B, 3H] at xAt,
 * hw = h wh [B, 3H], h [B, H] at hAt; rows whose `active` is not 1 keep h exactly. Every index
 * is below B * 3H past xAt, B * H past hAt and nextAt, B * 4H past gatesAt (the callers check).
 */
function stepRows(
  B: number,
  H: number,
  x: Float32Array,
  xAt: number,
  hw: Float32Array,
  h: Float32Array,
  hAt: number,
  bhn: Float32Array,
  next: Float32Array,
  nextAt: number,
  gates?: Float32Array,
  gatesAt = 0,
  active?: Float32Array,
): void {
  for (let b = 0; b < B; b++) {
    const h0 = hAt + b * H;
    const n0 = nextAt + b * H;
    if (active && active[b] !== 1) {
      // A row that does not take this step (generation's lockstep prefill).
      next.set(h.subarray(h0, h0 + H), n0);
      continue;
    }
    const x0 = xAt + b * 3 * H;
    const w0 = b * 3 * H;
    const g0 = gatesAt + b * 4 * H;
    for (let k = 0; k < H; k++) {
      const r = sigmoid((x[x0 + k] as number) + (hw[w0 + k] as number));
      const z = sigmoid((x[x0 + H + k] as number) + (hw[w0 + H + k] as number));
      const u = (hw[w0 + 2 * H + k] as number) + (bhn[k] as number);
      const n = Math.tanh((x[x0 + 2 * H + k] as number) + r * u);
      const hk = h[h0 + k] as number;
      next[n0 + k] = n + z * (hk - n);
      if (gates) {
        gates[g0 + k] = r;
        gates[g0 + H + k] = z;
        gates[g0 + 2 * H + k] = n;
        gates[g0 + 3 * H + k] = u;
      }
    }
  }
}

const STEP = "ArlGruStep";
const FORWARD = "ArlGruForward";
const BACKWARD = "ArlGruBackward";

/** Generation: x [B, 3H], h [B, H], wh [H, 3H], bhn [H], optional active [B] -> h' [B, H]. */
function stepKernel(backendName: string) {
  return ({ inputs, backend }: { inputs: tf.NamedTensorInfoMap; backend: unknown }): TensorInfo => {
    const st = storageOf(backend, backendName);
    const [x, h, wh, bhn] = [input(inputs, "x"), input(inputs, "h"), input(inputs, "wh"), input(inputs, "bhn")];
    const [B, H] = h.shape as [number, number];
    const hw = st.matMul(h, wh);
    const next = st.make([B, H]);
    const active = inputs.active;
    stepRows(
      B,
      H,
      checkLength(st.view(x), B * 3 * H, "x"),
      0,
      checkLength(st.view(hw), B * 3 * H, "h wh"),
      checkLength(st.view(h), B * H, "h"),
      0,
      checkLength(st.view(bhn), H, "bhn"),
      st.view(next),
      0,
      undefined,
      0,
      active ? checkLength(st.view(active), B, "active") : undefined,
    );
    st.dispose(hw);
    return next;
  };
}

/** A sequence: x [T, B, 3H], wh, bhn -> the states [T + 1, B, H] (row 0 = the zero start) and the gates [T, B, 4H]. */
function forwardKernel(backendName: string) {
  return ({ inputs, backend }: { inputs: tf.NamedTensorInfoMap; backend: unknown }): TensorInfo[] => {
    const st = storageOf(backend, backendName);
    const [x, wh, bhn] = [input(inputs, "x"), input(inputs, "wh"), input(inputs, "bhn")];
    const [T, B, H3] = x.shape as [number, number, number];
    const H = H3 / 3;
    const hs = st.make([T + 1, B, H]);
    const gates = st.make([T, B, 4 * H]);
    // The state a step multiplies by wh: a [B, H] tensor of its own, overwritten step by step.
    const h = st.make([B, H]);
    st.view(hs).fill(0, 0, B * H);
    st.view(h).fill(0);
    for (let t = 0; t < T; t++) {
      const hw = st.matMul(h, wh);
      const [hv, statesV] = [st.view(h), checkLength(st.view(hs), (T + 1) * B * H, "states")];
      stepRows(
        B,
        H,
        checkLength(st.view(x), T * B * H3, "x"),
        t * B * H3,
        checkLength(st.view(hw), B * H3, "h wh"),
        hv,
        0,
        checkLength(st.view(bhn), H, "bhn"),
        statesV,
        (t + 1) * B * H,
        checkLength(st.view(gates), T * B * 4 * H, "gates"),
        t * B * 4 * H,
      );
      hv.set(statesV.subarray((t + 1) * B * H, (t + 2) * B * H));
      st.dispose(hw);
    }
    st.dispose(h);
    return [hs, gates];
  };
}

/**
 * Its backward pass: dy [T, B, H] (dL/dh_t from the read-out), the states and gates the forward
 * returned, whT [3H, H] -> dx [T, B, 3H] and dhw [T, B, 3H] (dL/d(h_{t-1} wh) per step).
 */
function backwardKernel(backendName: string) {
  return ({ inputs, backend }: { inputs: tf.NamedTensorInfoMap; backend: unknown }): TensorInfo[] => {
    const st = storageOf(backend, backendName);
    const [dyInfo, hsInfo, gatesInfo, whT] = [
      input(inputs, "dy"),
      input(inputs, "hs"),
      input(inputs, "gates"),
      input(inputs, "whT"),
    ];
    const [T, B, H] = dyInfo.shape as [number, number, number];
    const H3 = 3 * H;
    const dxInfo = st.make([T, B, H3]);
    const dhwInfo = st.make([T, B, H3]);
    // dhw of one step as a [B, 3H] tensor of its own, for the product with wh^T.
    const dhwStep = st.make([B, H3]);
    // What the step after sends back to h_t: through h_{t+1} directly (g z), and through h_t wh.
    let direct = new Float32Array(B * H);
    let after = new Float32Array(B * H);
    let mm: TensorInfo | undefined;
    for (let t = T - 1; t >= 0; t--) {
      const dy = checkLength(st.view(dyInfo), T * B * H, "dy");
      const hs = checkLength(st.view(hsInfo), (T + 1) * B * H, "states");
      const gates = checkLength(st.view(gatesInfo), T * B * 4 * H, "gates");
      const [dx, dhw, step] = [
        checkLength(st.view(dxInfo), T * B * H3, "dx"),
        checkLength(st.view(dhwInfo), T * B * H3, "dhw"),
        st.view(dhwStep),
      ];
      const through = mm ? checkLength(st.view(mm), B * H, "dhw wh^T") : undefined;
      for (let b = 0; b < B; b++) {
        const x0 = t * B * H3 + b * H3;
        const g0 = t * B * 4 * H + b * 4 * H;
        for (let k = 0; k < H; k++) {
          const i = b * H + k;
          const r = gates[g0 + k] as number;
          const z = gates[g0 + H + k] as number;
          const n = gates[g0 + 2 * H + k] as number;
          const u = gates[g0 + 3 * H + k] as number;
          const g = (dy[t * B * H + i] as number) + (direct[i] as number) + (through ? (through[i] as number) : 0);
          const dz = g * ((hs[t * B * H + i] as number) - n) * z * (1 - z);
          const dn = g * (1 - z) * (1 - n * n);
          const dr = dn * u * r * (1 - r);
          dx[x0 + k] = dr;
          dx[x0 + H + k] = dz;
          dx[x0 + 2 * H + k] = dn;
          const s0 = b * H3;
          step[s0 + k] = dr;
          step[s0 + H + k] = dz;
          step[s0 + 2 * H + k] = dn * r;
          after[i] = g * z;
        }
      }
      dhw.set(step.subarray(0, B * H3), t * B * H3);
      [direct, after] = [after, direct];
      if (mm) st.dispose(mm);
      // Step 0's state is the constant zero start: nothing flows further back.
      mm = t > 0 ? st.matMul(dhwStep, whT) : undefined;
    }
    if (mm) st.dispose(mm);
    st.dispose(dhwStep);
    return [dxInfo, dhwInfo];
  };
}

let registered = false;

/** Registers the kernels on both backends the embedded trainer can run on (once). */
function register(): void {
  if (registered) return;
  registered = true;
  for (const backendName of ["wasm", "cpu"]) {
    tf.registerKernel({ kernelName: STEP, backendName, kernelFunc: stepKernel(backendName) });
    tf.registerKernel({ kernelName: FORWARD, backendName, kernelFunc: forwardKernel(backendName) });
    tf.registerKernel({ kernelName: BACKWARD, backendName, kernelFunc: backwardKernel(backendName) });
  }
}

/**
 * One GRU step h -> h' for a batch (x: the rows of the input table, [B, 3H]); rows whose
 * `active` is not 1 keep their state. Not differentiable (generation). Each row's result is
 * the one a sequence's forward pass gives it (the same product and the same row arithmetic).
 */
export function gruNext(h: tf.Tensor, x: tf.Tensor, wh: tf.Tensor, bhn: tf.Tensor, active?: Float32Array): tf.Tensor {
  register();
  return tf.tidy(() => {
    const inputs: tf.NamedTensorMap = { x, h, wh, bhn };
    if (active && active.some((a) => a !== 1)) inputs.active = tf.tensor1d(active, "float32");
    return tf.engine().runKernel<tf.Tensor>(STEP, inputs, {});
  });
}

// customGrad's function gets the inputs, then the save function, as one rest parameter.
const sequence = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, wh, bhn, save] = args as [tf.Tensor3D, tf.Tensor2D, tf.Tensor1D, tf.GradSaveFunc];
  const [T, B, H3] = x.shape;
  const H = H3 / 3;
  const [hs, gates] = tf.engine().runKernel<tf.Tensor3D[]>(FORWARD, { x, wh, bhn }, {}) as [tf.Tensor3D, tf.Tensor3D];
  save([hs, gates, wh]);
  return {
    value: tf.slice(hs, [1, 0, 0], [T, B, H]),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [states, g, w] = saved as [tf.Tensor3D, tf.Tensor3D, tf.Tensor2D];
      const [dx, dhw] = tf
        .engine()
        .runKernel<tf.Tensor3D[]>(BACKWARD, { dy, hs: states, gates: g, whT: tf.transpose(w) }, {}) as [
        tf.Tensor3D,
        tf.Tensor3D,
      ];
      const steps = dhw.reshape([T * B, H3]);
      const before = tf.slice(states, [0, 0, 0], [T, B, H]).reshape([T * B, H]);
      return [dx, tf.matMul(before, steps, true, false), tf.sum(tf.slice(steps, [0, 2 * H], [T * B, H]), 0)];
    },
  };
});

/** The GRU over a time-major batch: x [T, B, 3H] (the tokens' rows of the input table) -> states [T, B, H]; differentiable. */
export function gruSequence(x: tf.Tensor3D, wh: tf.Tensor2D, bhn: tf.Tensor1D): tf.Tensor3D {
  register();
  return sequence(x, wh, bhn);
}
